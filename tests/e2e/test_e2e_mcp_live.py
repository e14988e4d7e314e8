"""Enabling an MCP server in the middle of a Claude Code 2.1.332 session, seen by the gateway's live record
against a real llama-server b11434 (issue 36).

Claude Code names an MCP server's tools ``mcp__<server>__<tool>``. Where they go depends on its tool
search (on by default in 2.1.332):

- ``ENABLE_TOOL_SEARCH=false``: every tool's definition is in ``tools``; a chat template that renders
  tools first (Qwen2.5's, as real models' do) puts them at the start of the prompt. The continued turn
  after ``kvswitch mcp enable`` rewrites that list, so the server re-processes the prompt from the tools
  on; the record names ``tools_changed`` with the server's tools added, grouped by server
  (``mcp_servers``), and the Usage tab's words name the server. (The tiny model's own template renders
  no tools at all: there the same turn was a HIT, measured.)
- tool search on: MCP tools are deferred; the continued turn lists the newly available ones in a system
  message after the conversation (measured: nothing before it changes), so the turn is a HIT.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kvswitch.cli import main
from kvswitch.core.gateway_config import usage_db
from kvswitch.core.paths import AppPaths
from kvswitch.ui.control.reason_words import explanation
from kvswitch.usage.queries import query
from kvswitch.usage.schema import UsageRow
from kvswitch.verify.mcp_cost import WAIT_FOR_SERVERS
from support.claude import claude_binary
from support.gateway import gateway_process
from support.llama import CONTEXT, chat_template, llama_server
from support.net import free_port
from support.require import require_module

SERVER = Path(__file__).resolve().parents[1] / "support" / "mcp_server.py"

pytestmark = [pytest.mark.real_server, pytest.mark.timeout(1200)]


def _claude(home: Path, project: Path, words: str, *, resume: bool = False) -> None:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8",
           **WAIT_FOR_SERVERS}
    argv = [str(claude_binary()), "-p", words, "--max-turns", "1", *(["--continue"] if resume else [])]
    done = subprocess.run(argv, cwd=project, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=600)
    capped = re.search(r"exceeded the \d+ output token maximum", done.stdout) is not None
    assert done.returncode == 0 or capped, done.stderr[-2000:] + done.stdout[-2000:]


def _first_conversation_request(since: float) -> UsageRow:
    """The first conversation request (one with Claude Code's whole prompt, not a small side request)
    the gateway recorded after ``since``: a run may send more (the tiny model's answer ends at the
    output cap and Claude Code goes on)."""
    deadline = time.monotonic() + 20
    while True:
        rows = [r for r in query(usage_db(AppPaths.default()))
                if r.status == 200 and r.upstream and r.upstream.endswith("/messages")
                and r.input_tokens is not None and r.time >= since]
        if rows or time.monotonic() > deadline:
            assert rows, "the gateway recorded nothing"
            largest = max(r.input_tokens or 0 for r in rows)
            return min((r for r in rows if (r.input_tokens or 0) * 2 > largest), key=lambda r: r.time)
        time.sleep(0.2)


def _session(fake_home: Path, tmp_path: Path, *extra_env: str, server_args: tuple[str, ...] = (),
             context: int = CONTEXT) -> tuple[UsageRow, UsageRow]:
    """Turn 1 without the MCP server, ``kvswitch mcp enable``, turn 2 continuing the conversation: the
    first conversation request of each turn."""
    project = tmp_path / "project"
    project.mkdir()
    with (
        llama_server(tmp_path / "server", "--cache-ram", "0", *server_args, context=context) as server,
        gateway_process(fake_home, free_port(), tmp_path / "gateway.log"),
    ):
        assert main(["profile", "add", "local", "--kind", "llama.cpp", "--base-url", server.url, "--model",
                     "tiny", "--small-fast-model", "tiny", "--target", "claude", "--via-gateway",
                     "--env", "CLAUDE_CODE_MAX_OUTPUT_TOKENS=16", *extra_env]) == 0
        assert main(["use", "local"]) == 0
        assert main(["mcp", "add", "kvs-stdio", "--", sys.executable, str(SERVER), "stdio"]) == 0
        started = time.time()
        _claude(fake_home, project, "say hi")
        first = _first_conversation_request(started)
        assert main(["mcp", "enable", "kvs-stdio", "--client", "claude"]) == 0
        started = time.time()
        _claude(fake_home, project, "say more", resume=True)
        return first, _first_conversation_request(started)


def test_enabling_mid_session_is_named_as_the_next_requests_miss(fake_home: Path, tmp_path: Path) -> None:
    require_module("mcp", "pip install -e '.[test]' (the official MCP Python SDK)")
    # the tiny model's own template renders no tools (measured: the same turn is then a HIT): Qwen2.5's
    # renders them first, in the system message, as real models' templates do
    template = ("--jinja", "--chat-template-file", str(chat_template("Qwen-Qwen2.5-7B-Instruct")))
    # every tool's full definition rendered: Claude Code's prompt is ~65k tokens then (measured)
    first, second = _session(fake_home, tmp_path, "--env", "ENABLE_TOOL_SEARCH=false", server_args=template,
                             context=98304)
    assert second.session == first.session, (first, second)
    assert second.verdict != "HIT", (second.verdict, second.cached_tokens, second.input_tokens)
    assert second.reason == "prefix_changed", second
    detail = json.loads(second.reason_detail or "{}")
    assert detail["looks_like"] == "tools_changed", detail
    assert "mcp__kvs-stdio__kvswitch_echo" in detail["added"], detail
    assert detail["mcp_servers"]["added"] == {"kvs-stdio": 1}, detail
    assert detail["removed"] == [], detail
    words = dict(explanation(second.reason, detail))
    assert words["MCP servers enabled"] == "kvs-stdio (1 tools)", words
    # Claude Code's own MCP resource tools come with the first server: named as tools, not as a server
    assert "ListMcpResourcesTool" in detail["added"], detail


def test_with_tool_search_the_enabled_servers_tools_come_after_the_conversation(
        fake_home: Path, tmp_path: Path) -> None:
    require_module("mcp", "pip install -e '.[test]' (the official MCP Python SDK)")
    first, second = _session(fake_home, tmp_path)
    assert second.session == first.session, (first, second)
    assert second.verdict == "HIT", (second.verdict, second.reason, second.reason_detail)
    assert (second.cached_tokens or 0) >= (first.input_tokens or 0) - 64, (first, second)
