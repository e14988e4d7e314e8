"""The two experiments people run by hand, as commands, with real clients on real llama-server b11434:
``verify --ablate`` with the real Claude Code 2.1.332 must reproduce the committed settings table's
verdicts (only ``CLAUDE_CODE_ATTRIBUTION_HEADER=0`` matters), and ``compare`` between two real server
configurations (``--cache-ram 0`` and the default) with the real Codex 0.169.0 must show each side with
that server's own numbers."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from kvswitch.cli import main
from kvswitch.core.models import ModelMap, Profile, ProfileKind
from kvswitch.core.presets import CACHE_SAFE_ENV
from kvswitch.verify.ablate import ablate
from support.claude import claude_binary, eos_token_id
from support.clients import codex_binary
from support.llama import REPO, RunningServer, llama_server

pytestmark = pytest.mark.real_server
SETTINGS_TABLE = REPO / "app" / "kvswitch" / "core" / "data" / "claude_settings.json"


def _metrics(server: RunningServer) -> dict[str, float]:
    text = httpx.get(f"{server.url}/metrics", timeout=10).text
    found = re.findall(r"^(llamacpp:prompt_tokens(?:_cached)?_total) (\S+)$", text, re.M)
    return {name: float(value) for name, value in found}


@pytest.fixture(scope="module")
def no_ram_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with llama_server(
        tmp_path_factory.mktemp("llama-no-ram"), "-l", f"{eos_token_id()}+100", "--cache-ram", "0"
    ) as running:
        yield running


def test_ablate_claude_reproduces_the_committed_settings_table(no_ram_cache: RunningServer) -> None:
    binary = claude_binary()
    profile = Profile(
        name="local",
        kind=ProfileKind.LLAMA_CPP,
        base_url=no_ram_cache.url,
        api_key="local-dummy-key",
        model="tiny",
        models=ModelMap(small_fast="tiny"),
        env=dict(CACHE_SAFE_ENV),
    )
    report = ablate(profile, binary, client="claude", timeout=900)
    data = report.to_json()
    assert data["client_version"] == "2.1.332"
    matters = {row["setting"]: row["matters"] for row in data["settings"]}
    assert matters == {name: name == "CLAUDE_CODE_ATTRIBUTION_HEADER" for name in CACHE_SAFE_ENV}
    committed = json.loads(SETTINGS_TABLE.read_text())
    assert committed["client_version"] == "2.1.332"
    for row in committed["settings"]:
        if row["setting"] in matters:
            assert matters[row["setting"]] == row["effect"].startswith(("saves", "costs")), row["setting"]
    header = next(row for row in data["settings"] if row["setting"] == "CLAUDE_CODE_ATTRIBUTION_HEADER")
    assert header["without"]["new_conversation_cause"] == "billing_header"
    assert "Settings that matter: CLAUDE_CODE_ATTRIBUTION_HEADER" in report.describe()
    assert report.to_csv().splitlines()[0].startswith("setting,value,in_profile,matters")


def test_compare_two_real_server_configurations_side_by_side(
    no_ram_cache: RunningServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    binary = codex_binary()
    with llama_server(tmp_path / "llama-default", "-l", f"{eos_token_id()}+100") as default:
        for name, server in (("no-ram", no_ram_cache), ("default", default)):
            added = ["profile", "add", name, "--kind", "llama.cpp", "--base-url", server.url]
            assert main([*added, "--model", "tiny", "--target", "codex"]) == 0
        capsys.readouterr()
        before = {"a": _metrics(no_ram_cache), "b": _metrics(default)}
        argv = ["compare", "no-ram", "default", "--client", "codex", "--codex-bin", str(binary)]
        code = main([*argv, "--json"])
        after = {"a": _metrics(no_ram_cache), "b": _metrics(default)}
    captured = capsys.readouterr()
    assert code == 0, captured.err[-2000:]
    data = json.loads(captured.out)
    assert [(row["conversation"], row["turn"]) for row in data["turns"]] == [(1, 1), (1, 2), (1, 3), (2, 1)]
    for side in ("a", "b"):
        requests = data[side]["requests"]
        processed = sum(r["prompt_tokens"] - r["cached_tokens"] for r in requests)
        moved = after[side]["llamacpp:prompt_tokens_total"] - before[side]["llamacpp:prompt_tokens_total"]
        assert moved == processed, side  # each side's numbers are its own server's
        for row in data["turns"]:
            turn = row[side]
            assert turn["prompt_tokens"] > 10_000
            assert turn["ttft_ms"] > 0
            assert turn["turn_ms"] >= turn["ttft_ms"]
            assert turn["hit_rate"] == pytest.approx(turn["cached_tokens"] / turn["prompt_tokens"])
    # both runs are in their profiles' history
    assert main(["verify", "--history", "--json"]) == 0
    history = json.loads(capsys.readouterr().out)
    assert {(e["profile"], e["client"]) for e in history} >= {("no-ram", "codex"), ("default", "codex")}
