"""The real OpenCode 1.18.33 (npm ``opencode-ai``) against a real llama-server b11434: a profile applied
by ``kvswitch use`` (the OpenCode target and the bash target, in a temporary HOME) makes ``opencode
run``, started from a real bash that reads the rc file KV Switch wrote, reach the server; and ``verify
--client opencode`` reports per request exactly what the server's /metrics counted."""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from kvswitch.cli import main
from kvswitch.core.models import Profile, ProfileKind
from kvswitch.verify.client_report import build_report
from kvswitch.verify.client_run import run_session
from support.claude import eos_token_id
from support.clients import OPENCODE_VERSION, opencode_binary
from support.llama import RunningServer, llama_server

pytestmark = pytest.mark.real_server
KEY = "local-dummy-key-9999"


def _metrics(server: RunningServer) -> dict[str, float]:
    text = httpx.get(f"{server.url}/metrics", timeout=10).text
    found = re.findall(r"^(llamacpp:prompt_tokens(?:_cached)?_total) (\S+)$", text, re.M)
    return {name: float(value) for name, value in found}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    # two slots: OpenCode sends its session-title request beside the first turn; with one slot, whichever
    # of the two the server takes last holds the slot, so the second turn's reuse would depend on timing
    # (on a loaded machine the title came last and turn 2 found 13 of 7,796 tokens)
    with llama_server(
        tmp_path_factory.mktemp("llama-opencode"), "-l", f"{eos_token_id()}+100", "--cache-ram", "0",
        parallel=2,
    ) as running:
        yield running


def test_profile_applied_by_kvswitch_makes_opencode_reach_the_server(
    server: RunningServer, fake_home: Path, tmp_path: Path
) -> None:
    binary = opencode_binary()
    added = ["profile", "add", "local", "--kind", "llama.cpp", "--base-url", server.url, "--model", "tiny"]
    assert main([*added, "--target", "opencode", "--target", "bash", "--api-key", KEY]) == 0
    assert main(["use", "local"]) == 0
    config = json.loads((fake_home / ".config" / "opencode" / "opencode.json").read_text())
    assert config["model"] == "kvswitch/tiny"
    assert KEY not in json.dumps(config)
    project = tmp_path / "project"
    project.mkdir()
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG") or k.startswith("XDG_")}
    before = _metrics(server)
    # a real bash reads the rc file the bash target wrote (the key's variable), then runs OpenCode
    done = subprocess.run(
        ["bash", "-c", '. "$HOME/.bashrc" && exec "$0" run "Reply with one word: ready."', str(binary)],
        cwd=project, env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
    )
    after = _metrics(server)
    assert done.returncode == 0, done.stderr[-2000:]
    processed = after["llamacpp:prompt_tokens_total"] - before["llamacpp:prompt_tokens_total"]
    assert processed > 1000, (before, after)  # OpenCode's system prompt and tools reached the server


def test_verify_client_opencode_numbers_are_the_servers(server: RunningServer) -> None:
    binary = opencode_binary()
    profile = Profile(
        name="local",
        kind=ProfileKind.LLAMA_CPP,
        base_url=server.url,
        api_key=KEY,
        model="tiny",
        targets=["opencode", "bash"],
        context_window=32768,
    )
    before = _metrics(server)
    session = run_session(profile, binary, timeout=900, client="opencode")
    after = _metrics(server)
    data = build_report(profile, session, None).to_json()
    assert data["client"] == "opencode"
    assert data["client_version"] == OPENCODE_VERSION
    requests = data["requests"]
    assert {(r["conversation"], r["turn"]) for r in requests} == {(1, 1), (1, 2), (1, 3), (2, 1)}
    processed = sum(r["prompt_tokens"] - r["cached_tokens"] for r in requests)
    cached = sum(r["cached_tokens"] for r in requests)
    assert after["llamacpp:prompt_tokens_total"] - before["llamacpp:prompt_tokens_total"] == processed
    assert (
        after["llamacpp:prompt_tokens_cached_total"] - before["llamacpp:prompt_tokens_cached_total"] == cached
    )
    turns = {(t["conversation"], t["turn"]): t for t in data["turns"]}
    for turn in (2, 3):
        assert turns[(1, turn)]["cached_tokens"] >= 0.99 * turns[(1, turn)]["prompt_tokens"]
    assert {"provider.kvswitch.options.baseURL", "model", "KVSWITCH_API_KEY"} <= set(data["env_names"])
    assert KEY not in json.dumps(data)
