"""Verify with the real client: real Claude Code 2.1.332 run headless through a profile to a real
llama-server. The per-request numbers must be the server's own (its /metrics counters move by exactly
their sums), continued turns must reuse >= 99 %, and a profile without the cache-safe env must have the
attribution header named as the cause of what a new conversation loses."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from kvswitch.cli import main
from kvswitch.core.models import ModelMap, Profile, ProfileKind
from kvswitch.core.presets import CACHE_SAFE_ENV
from kvswitch.verify.client_report import build_report
from kvswitch.verify.client_run import ClientMissing, find_claude, run_session
from kvswitch.verify.tokendiag import ServerRenderer
from support.claude import claude_binary, eos_token_id
from support.llama import REPO, RunningServer, llama_server

pytestmark = pytest.mark.real_server
KEY = "local-dummy-key-7777"


def _profile(url: str, env: dict[str, str]) -> Profile:
    return Profile(
        name="local",
        kind=ProfileKind.LLAMA_CPP,
        base_url=url,
        api_key=KEY,
        model="tiny",
        models=ModelMap(small_fast="tiny"),
        env=env,
    )


def _metrics(server: RunningServer) -> dict[str, float]:
    text = httpx.get(f"{server.url}/metrics", timeout=10).text
    found = re.findall(r"^(llamacpp:prompt_tokens(?:_cached)?_total) (\S+)$", text, re.M)
    return {name: float(value) for name, value in found}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with llama_server(
        tmp_path_factory.mktemp("llama-client"), "-l", f"{eos_token_id()}+100", "--cache-ram", "0"
    ) as running:
        yield running


def test_cache_safe_profile_keeps_the_cache_across_turns(server: RunningServer) -> None:
    binary = claude_binary()
    profile = _profile(server.url, dict(CACHE_SAFE_ENV))
    before = _metrics(server)
    session = run_session(profile, binary, timeout=600)
    after = _metrics(server)
    report = build_report(profile, session, ServerRenderer(server.url, timeout=120))
    data = report.to_json()
    assert data["client_version"] == "2.1.332"
    requests = data["requests"]
    assert {(r["conversation"], r["turn"]) for r in requests} == {(1, 1), (1, 2), (1, 3), (2, 1)}
    # the server's own counters moved by exactly what the answers said, request by request summed
    processed = sum(r["prompt_tokens"] - r["cached_tokens"] for r in requests)
    cached = sum(r["cached_tokens"] for r in requests)
    assert after["llamacpp:prompt_tokens_total"] - before["llamacpp:prompt_tokens_total"] == processed
    assert (
        after["llamacpp:prompt_tokens_cached_total"] - before["llamacpp:prompt_tokens_cached_total"] == cached
    )
    turns = {(t["conversation"], t["turn"]): t for t in data["turns"]}
    assert turns[(1, 1)]["verdict"] == "cold"
    for turn in (2, 3):
        assert turns[(1, turn)]["cached_tokens"] >= 0.99 * turns[(1, turn)]["prompt_tokens"]
        assert turns[(1, turn)]["verdict"] == "hit"
    new = turns[(2, 1)]
    assert new["verdict"] == "shared_prefix", new
    assert new["cached_tokens"] > 1000  # the system prompt and tools
    assert data["fixes"] == {}
    assert KEY not in json.dumps(data)


def test_profile_without_attribution_off_names_the_header(server: RunningServer) -> None:
    binary = claude_binary()
    env = {k: v for k, v in CACHE_SAFE_ENV.items() if k != "CLAUDE_CODE_ATTRIBUTION_HEADER"}
    profile = _profile(server.url, env)
    report = build_report(
        profile, run_session(profile, binary, timeout=600), ServerRenderer(server.url, timeout=120)
    )
    new = next(t for t in report.turns if t.conversation == 2)
    assert new.lost
    assert new.diagnosis is not None
    assert new.diagnosis["cause"] == "billing_header"
    assert new.diagnosis["units"] == "tokens"
    assert report.fixes == {"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"}
    text = report.describe()
    assert "CLAUDE_CODE_ATTRIBUTION_HEADER=0" in text
    inside = [t for t in report.turns if t.conversation == 1 and t.turn > 1]
    assert all(t.verdict == "hit" for t in inside)  # within a conversation the header no longer matters


def test_cli_without_claude_says_so_and_exits_3(
    server: RunningServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ClientMissing):
        find_claude(None)
    assert main(["verify", "--base-url", server.url, "--client", "claude"]) == 3
    assert "Claude Code is not installed" in capsys.readouterr().err
    assert main(["verify", "--base-url", server.url, "--client", "claude", "--claude-bin", "/no/claude"]) == 3


def test_a_claude_that_hangs_is_stopped_within_the_deadline(server: RunningServer, tmp_path: Path) -> None:
    fake = tmp_path / "claude"
    # a real program that answers --version and then never finishes a turn
    fake.write_text(
        "#!/bin/sh\n[ \"$1\" = --version ] && { echo '9.9.9 (Claude Code)'; exit 0; }\nexec sleep 600\n"
    )
    fake.chmod(0o755)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "kvswitch",
            "verify",
            "--base-url",
            server.url,
            "--client",
            "claude",
            "--claude-bin",
            str(fake),
            "--timeout",
            "5",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(REPO / "app")},
    )
    assert result.returncode == 4
    assert "did not finish a turn" in result.stderr
    assert "Traceback" not in result.stderr
