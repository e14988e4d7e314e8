"""The gateway as a real process between the real Claude Code 2.1.332 and two real llama-servers
b11434 (issue 16's "Done when"): a switch reaches a running conversation's next turn with no file
rewritten, continued turns keep >= 99% of the prompt cached by the server's own numbers, the usage
rows carry exactly those numbers, failover serves a stopped server's requests, and a request without
the local token reaches no server."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import httpx
import pytest

from kvswitch.cli import main
from kvswitch.core.gateway_config import ensure_token, usage_db
from kvswitch.core.paths import AppPaths, claude_config_dir
from kvswitch.usage.queries import query
from kvswitch.usage.schema import UsageRow
from support.claude import claude_binary, eos_token_id
from support.gateway import gateway_process
from support.llama import RunningServer, llama_server
from support.net import free_port

pytestmark = pytest.mark.real_server


def _metrics(server: RunningServer) -> dict[str, float]:
    text = httpx.get(f"{server.url}/metrics", timeout=10).text
    found = re.findall(r"^(llamacpp:prompt_tokens(?:_cached)?_total) (\S+)$", text, re.M)
    return {name: float(value) for name, value in found}


def _delta(before: dict[str, float], after: dict[str, float]) -> tuple[int, int]:
    """(tokens processed, tokens served from cache) between two scrapes: the server's own count."""
    return (int(after["llamacpp:prompt_tokens_total"] - before["llamacpp:prompt_tokens_total"]),
            int(after["llamacpp:prompt_tokens_cached_total"] - before["llamacpp:prompt_tokens_cached_total"]))


def _rows_sum(rows: list[UsageRow]) -> tuple[int, int]:
    return (sum((r.input_tokens or 0) - (r.cached_tokens or 0) for r in rows),
            sum(r.cached_tokens or 0 for r in rows))


def _claude(binary: Path, home: Path, project: Path, *, resume: bool) -> None:
    argv = [str(binary), "-p", "say hi", "--max-turns", "1", *(["--continue"] if resume else [])]
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8"}
    done = subprocess.run(argv, cwd=project, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=400)
    assert done.returncode == 0, done.stderr[-2000:] + done.stdout[-2000:]


def _add(name: str, server: RunningServer, *extra: str) -> None:
    assert main(["profile", "add", name, "--kind", "llama.cpp", "--base-url", server.url, "--model", "tiny",
                 "--small-fast-model", "tiny", "--target", "claude", "--via-gateway", *extra]) == 0


def test_switch_failover_and_usage_with_the_real_claude_code(fake_home: Path, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    binary = claude_binary()
    paths = AppPaths.default()
    project = tmp_path / "project"
    project.mkdir()
    port = free_port()
    bias = ("-l", f"{eos_token_id()}+100", "--cache-ram", "0")
    with (
        llama_server(tmp_path / "two", *bias) as two,
        gateway_process(fake_home, port, tmp_path / "gateway.log"),
    ):
        with llama_server(tmp_path / "one", *bias) as one:
            _add("B", two)
            _add("A", one, "--fallback", "B")
            assert main(["use", "A"]) == 0
            settings_file = claude_config_dir() / "settings.json"
            settings = settings_file.read_bytes()
            env = json.loads(settings)["env"]
            assert env["ANTHROPIC_BASE_URL"] == f"http://127.0.0.1:{port}/claude"
            assert env["ANTHROPIC_AUTH_TOKEN"] == ensure_token(paths)

            _claude(binary, fake_home, project, resume=False)
            turn1 = len(query(usage_db(paths)))
            before = _metrics(one)
            _claude(binary, fake_home, project, resume=True)
            after = _metrics(one)
            rows2 = query(usage_db(paths))[turn1:]
            assert rows2
            assert {r.profile for r in rows2} == {"A"}
            # the rows carry the server's own numbers: its counters moved by exactly their sums
            assert _rows_sum(rows2) == _delta(before, after)
            main_turn = max(rows2, key=lambda r: r.input_tokens or 0)
            assert (main_turn.input_tokens or 0) > 10000  # Claude Code's real prompt
            assert (main_turn.cached_tokens or 0) >= 0.99 * (main_turn.input_tokens or 0)

            capsys.readouterr()
            assert main(["use", "B"]) == 0
            assert "no file rewritten" in capsys.readouterr().out
            one_before, two_before = _metrics(one), _metrics(two)
            _claude(binary, fake_home, project, resume=True)
            assert settings_file.read_bytes() == settings  # byte-identical across the switch
            rows3 = query(usage_db(paths))[turn1 + len(rows2):]
            assert {r.profile for r in rows3} == {"B"}
            assert _delta(one_before, _metrics(one)) == (0, 0)  # server 1 saw nothing of turn 3
            processed, cached = _delta(two_before, _metrics(two))
            assert (processed, cached) == _rows_sum(rows3)
            assert processed > 10000  # server 2 had never seen this conversation: all of it is new

            capsys.readouterr()
            assert main(["usage", "--json"]) == 0
            listed = json.loads(capsys.readouterr().out)
            assert [r["profile"] for r in listed][-len(rows3):] == ["B"] * len(rows3)
            assert {r["model"] for r in listed} == {"tiny"}
            assert all(r["status"] == 200 and r["ttft_ms"] is not None for r in listed)
            token = ensure_token(paths)
        # server 1 is stopped: a request pinned to A is served by its fallback B, and the row says so
        body = {"model": "tiny", "max_tokens": 4, "messages": [{"role": "user", "content": "hello"}]}
        answer = httpx.post(f"http://127.0.0.1:{port}/p/A/v1/messages", json=body,
                            headers={"authorization": f"Bearer {token}"}, timeout=120)
        assert answer.status_code == 200, answer.text
        row = query(usage_db(paths))[-1]
        assert row.profile == "B"
        assert row.failover is not None
        assert row.failover.startswith("A: ")
        # without the token (or with a wrong one) nothing reaches a server
        quiet = _metrics(two)
        for headers in ({}, {"x-api-key": "kvs-not-it"}, {"authorization": "Bearer kvs-not-it"}):
            refused = httpx.post(f"http://127.0.0.1:{port}/claude/v1/messages", json=body, headers=headers)
            assert refused.status_code == 401
        assert _metrics(two) == quiet
