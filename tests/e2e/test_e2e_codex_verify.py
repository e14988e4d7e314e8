"""Verify with the real Codex 0.169.0 and the newest, 0.171.0 (npm ``@openai/codex``), run headless through
a profile to a real llama-server b11434: the per-request numbers must be the server's own (its /metrics
counters move by exactly their sums), the continued turns (``codex exec resume --last``) must reuse >=
99 %, and the config Codex ran with is the one the Codex target writes (the model's context window
included), and Codex's own warning about the unknown local model is in the report."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from kvswitch.cli import main
from kvswitch.core.models import Profile, ProfileKind
from kvswitch.verify.client_report import build_report
from kvswitch.verify.client_run import run_session
from support.claude import eos_token_id
from support.clients import CODEX_VERSIONS, codex_binary
from support.llama import RunningServer, llama_server

pytestmark = pytest.mark.real_server
KEY = "local-dummy-key-8888"


def _profile(url: str, **extra: object) -> Profile:
    return Profile(
        name="local",
        kind=ProfileKind.LLAMA_CPP,
        base_url=url,
        api_key=KEY,
        model="tiny",
        targets=["codex", "bash"],
        **extra,  # type: ignore[arg-type]
    )


def _metrics(server: RunningServer) -> dict[str, float]:
    text = httpx.get(f"{server.url}/metrics", timeout=10).text
    found = re.findall(r"^(llamacpp:prompt_tokens(?:_cached)?_total) (\S+)$", text, re.M)
    return {name: float(value) for name, value in found}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with llama_server(
        tmp_path_factory.mktemp("llama-codex"), "-l", f"{eos_token_id()}+100", "--cache-ram", "0"
    ) as running:
        yield running


@pytest.mark.parametrize("codex_version", CODEX_VERSIONS)
def test_codex_session_numbers_are_the_servers_and_continued_turns_reuse(
    server: RunningServer, codex_version: str
) -> None:
    binary = codex_binary(codex_version)
    profile = _profile(server.url, context_window=32768)
    before = _metrics(server)
    session = run_session(profile, binary, timeout=600, client="codex")
    after = _metrics(server)
    data = build_report(profile, session, None).to_json()
    assert data["client"] == "codex"
    assert data["client_version"] == codex_version
    requests = data["requests"]
    assert [(r["conversation"], r["turn"]) for r in requests] == [(1, 1), (1, 2), (1, 3), (2, 1)]
    assert all(r["status"] == 200 for r in requests)
    # the server's own counters moved by exactly what its answers said, request by request summed
    processed = sum(r["prompt_tokens"] - r["cached_tokens"] for r in requests)
    cached = sum(r["cached_tokens"] for r in requests)
    assert after["llamacpp:prompt_tokens_total"] - before["llamacpp:prompt_tokens_total"] == processed
    assert (
        after["llamacpp:prompt_tokens_cached_total"] - before["llamacpp:prompt_tokens_cached_total"] == cached
    )
    turns = {(t["conversation"], t["turn"]): t for t in data["turns"]}
    assert turns[(1, 1)]["verdict"] == "cold"
    assert turns[(1, 1)]["prompt_tokens"] > 10_000  # Codex's instructions and tools
    for turn in (2, 3):
        assert turns[(1, turn)]["cached_tokens"] >= 0.99 * turns[(1, turn)]["prompt_tokens"]
        assert turns[(1, turn)]["verdict"] == "hit"
    assert data["verdict"] == "hit"
    # what Codex was given: the Codex target's keys (the context window too) and the key's variable
    assert {"model", "model_provider", "model_context_window", "KVSWITCH_API_KEY"} <= set(data["env_names"])
    # measured: model_context_window does not silence Codex 0.169's unknown-model warning (only a model
    # catalog entry with Codex's whole system prompt would); the report shows it instead of hiding it
    assert any("Model metadata for `tiny` not found" in w for w in data["client_warnings"])
    assert KEY not in json.dumps(data)


def test_cli_verify_client_codex_prints_the_report(
    server: RunningServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    binary = codex_binary()
    code = main(
        ["verify", "--base-url", server.url, "--kind", "llama.cpp", "--model", "tiny", "--client", "codex",
         "--codex-bin", str(binary), "--json"]
    )
    data = json.loads(capsys.readouterr().out)
    assert code == 0, data
    assert data["client"] == "codex"
    assert len(data["requests"]) == 4
    inside = [t for t in data["turns"] if t["conversation"] == 1 and t["turn"] > 1]
    assert all(t["verdict"] == "hit" for t in inside)


def test_cli_without_codex_says_so_and_exits_3(
    server: RunningServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert main(["verify", "--base-url", server.url, "--kind", "llama.cpp", "--client", "codex"]) == 3
    assert "Codex is not installed" in capsys.readouterr().err
