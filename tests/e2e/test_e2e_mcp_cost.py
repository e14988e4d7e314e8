"""What an MCP server costs every Claude Code request (issue 36, part 4), measured on the real client
(Claude Code 2.1.332) against a real llama-server b11434 (the tiny model), and checked independently.

``kvswitch mcp measure`` runs Claude Code through its recorder with no MCP server and with the server
alone and keeps the difference in the server's own prompt counts. The check: Claude Code run as the
user runs it (``~/.claude.json`` written by ``kvswitch mcp enable``, through ``kvswitch gateway run``),
one new conversation before the server is enabled and one after, with the same words: the difference
in the prompt counts the gateway recorded (the server's own numbers) must be the measured figure.
Then ``mcp list`` shows it beside the server, and a toggle warns with the last prompt size.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kvswitch.cli import main
from kvswitch.core.gateway_config import usage_db
from kvswitch.core.paths import AppPaths
from kvswitch.usage.queries import query
from kvswitch.usage.schema import UsageRow
from kvswitch.verify.mcp_cost import PROMPT, WAIT_FOR_SERVERS
from support.claude import claude_binary
from support.gateway import gateway_process
from support.llama import llama_server
from support.net import free_port
from support.require import require_module

SERVER = Path(__file__).resolve().parents[1] / "support" / "mcp_server.py"

pytestmark = [pytest.mark.real_server, pytest.mark.timeout(1200)]


def _claude(home: Path, project: Path) -> None:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8",
           **WAIT_FOR_SERVERS}
    done = subprocess.run([str(claude_binary()), "-p", PROMPT, "--max-turns", "1"], cwd=project, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=600)
    capped = "output token maximum" in done.stdout  # the tiny model's words end at the output cap
    assert done.returncode == 0 or capped, done.stderr[-2000:] + done.stdout[-2000:]


def _conversation_row(seen: set[str | None]) -> UsageRow:
    """The first conversation request of the session the gateway saw last (not in ``seen``). Claude Code
    may send more in one ``-p`` run (the tiny model's answer ends at the output cap) and sends small side
    requests without tools: its first request of more than half the session's largest prompt."""
    deadline = time.monotonic() + 20
    while True:
        rows = [r for r in query(usage_db(AppPaths.default()))
                if r.status == 200 and r.upstream and r.upstream.endswith("/messages")
                and r.input_tokens is not None and r.session not in seen]
        if rows or time.monotonic() > deadline:
            assert rows, "the gateway recorded no new conversation request"
            largest = max(r.input_tokens or 0 for r in rows)
            return min((r for r in rows if (r.input_tokens or 0) * 2 > largest), key=lambda r: r.time)
        time.sleep(0.2)


def _user_run(home: Path, project: Path, seen: set[str | None]) -> UsageRow:
    """One new conversation as the user runs it; the gateway's row of its first conversation request."""
    _claude(home, project)
    row = _conversation_row(seen)
    seen.add(row.session)
    return row


def test_measured_cost_is_the_servers_own_difference_and_is_listed(
        fake_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    require_module("mcp", "pip install -e '.[test]' (the official MCP Python SDK)")
    binary = claude_binary()
    project = tmp_path / "project"
    project.mkdir()
    port = free_port()
    with (
        llama_server(tmp_path / "server", "--cache-ram", "0") as server,
        gateway_process(fake_home, port, tmp_path / "gateway.log"),
    ):
        assert main(["profile", "add", "local", "--kind", "llama.cpp", "--base-url", server.url, "--model",
                     "tiny", "--small-fast-model", "tiny", "--target", "claude", "--via-gateway",
                     "--env", "CLAUDE_CODE_MAX_OUTPUT_TOKENS=16"]) == 0
        assert main(["use", "local"]) == 0
        assert main(["mcp", "add", "kvs-stdio", "--", sys.executable, str(SERVER), "stdio"]) == 0
        capsys.readouterr()
        assert main(["mcp", "list", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)[0]["cost"] == {"claude": None, "codex": None,
                                                                 "opencode": None}

        assert main(["mcp", "measure", "kvs-stdio", "--claude-bin", str(binary), "--json"]) == 0
        (cost,) = json.loads(capsys.readouterr().out)
        assert cost["server"] == "kvs-stdio"
        assert cost["client_version"] == "Claude Code 2.1.332"
        assert cost["tools"] == ["mcp__kvs-stdio__kvswitch_echo"]
        assert cost["tokens"] == cost["with_tokens"] - cost["without_tokens"] > 0, cost

        # the independent check: Claude Code as the user runs it, through the gateway
        seen: set[str | None] = set()
        before = _user_run(fake_home, project, seen)
        assert main(["mcp", "enable", "kvs-stdio", "--client", "claude"]) == 0
        after = _user_run(fake_home, project, seen)
        every = [(r.session and r.session[:8], r.input_tokens, r.cached_tokens, r.notes, r.model)
                 for r in query(usage_db(AppPaths.default()))]
        assert (after.input_tokens or 0) - (before.input_tokens or 0) == cost["tokens"], (every, cost)

        capsys.readouterr()
        assert main(["mcp", "list"]) == 0
        listed = capsys.readouterr().out
        assert f"claude ~{cost['tokens']:,} tokens a request" in listed, listed
        assert "with Claude Code 2.1.332 on llama.cpp at" in listed, listed
        assert "codex unknown; opencode unknown" in listed, listed

        # a toggle while Claude Code runs warns with the last prompt the gateway recorded for it
        from kvswitch.commands.mcp_cost import toggle_warning  # noqa: PLC0415 - with the test's HOME set

        newest = max((r for r in query(usage_db(AppPaths.default())) if r.input_tokens is not None),
                     key=lambda r: r.time)
        (warning,) = toggle_warning(AppPaths.default(), ["claude"], running={"claude"})
        assert f"{newest.input_tokens:,} tokens, the last prompt the gateway recorded" in warning, warning

    # an edited definition makes the figure unknown again: it was measured for the old one
    assert main(["mcp", "edit", "kvs-stdio", "--env", "X=1"]) == 0
    capsys.readouterr()
    assert main(["mcp", "list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["cost"]["claude"] is None
