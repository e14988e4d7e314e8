"""A real Claude Code 2.1.332 session through ``kvswitch gateway run`` calls a tool of an MCP server that
KV Switch enabled, proving the server is wired into the client, not only listed by it.

The upstream is scripted (loopback): it answers the conversation's first request with a ``tool_use``
block for ``mcp__kvs-stdio__kvswitch_echo``, as a model would. Claude Code must then start the real
stdio MCP server (``support/mcp_server.py``, the official ``mcp`` SDK), call its tool, and send the
tool's own answer (its marker and the text given) back in the next request's ``tool_result``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kvswitch.cli import main
from kvswitch.core.gateway_config import usage_db
from kvswitch.core.paths import AppPaths
from kvswitch.usage.queries import query
from kvswitch.verify.mcp_cost import WAIT_FOR_SERVERS
from support.claude import claude_binary
from support.gateway import gateway_process
from support.mcp_server import MARKER
from support.net import free_port
from support.require import require_module
from support.scripted_upstream import scripted_upstream, tool_use_answer

SERVER = Path(__file__).resolve().parents[1] / "support" / "mcp_server.py"
TOOL = "mcp__kvs-stdio__kvswitch_echo"
WORDS = "wired-not-just-listed-36"

pytestmark = [pytest.mark.real_server, pytest.mark.timeout(300)]


def _ok(*args: str) -> None:
    assert main(list(args)) == 0, args


def _tool_results(body: Any) -> list[dict[str, Any]]:
    found = []
    for message in body.get("messages", []) if isinstance(body, dict) else []:
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                found.append(block)
    return found


def _text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content or [] if isinstance(part, dict))


def test_claude_code_calls_the_mcp_tool_through_the_gateway(fake_home: Path, tmp_path: Path) -> None:
    require_module("mcp", "pip install -e '.[test]' (the official MCP Python SDK)")
    binary = claude_binary()
    project = tmp_path / "project"
    project.mkdir()
    port = free_port()
    answer = tool_use_answer("tiny", TOOL, {"text": WORDS}, "toolu_kvs36")
    with (
        scripted_upstream([answer]) as upstream,
        gateway_process(fake_home, port, tmp_path / "gateway.log"),
    ):
        _ok("profile", "add", "scripted", "--kind", "custom", "--base-url", upstream.url, "--model", "tiny",
            "--small-fast-model", "tiny", "--api-key", "dummy-key-0001", "--target", "claude",
            "--via-gateway")
        _ok("use", "scripted")
        _ok("mcp", "add", "kvs-stdio", "--client", "claude", "--", sys.executable, str(SERVER), "stdio")
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(fake_home), "LANG": "C.UTF-8",
               # -p sends its first request while MCP servers still connect unless told to wait
               **WAIT_FOR_SERVERS}
        done = subprocess.run(
            [str(binary), "-p", "echo the words through the test tool", "--max-turns", "3",
             "--allowedTools", TOOL],
            cwd=project, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=240)
        bodies = [b for b in upstream.bodies("/messages") if isinstance(b, dict) and b.get("tools")]

    assert done.returncode == 0, done.stderr[-2000:] + done.stdout[-2000:]
    assert not upstream.scripted, "the scripted tool_use answer was never asked for"
    asked = next(i for i, b in enumerate(bodies) if not _tool_results(b))
    after = [b for b in bodies[asked + 1:] if _tool_results(b)]
    assert after, [json.dumps(b)[:300] for b in bodies]
    results = [r for r in _tool_results(after[0]) if r.get("tool_use_id") == "toolu_kvs36"]
    assert results, _tool_results(after[0])
    # the MCP server's own answer (its marker and the words), not an error Claude Code made up
    assert not results[0].get("is_error"), results[0]
    # (mcp SDK 2.3.0 returns a str tool's answer as structured content: Claude Code 2.1.332 sends that)
    said = _text(results[0])
    assert json.loads(said) == {"result": f"{MARKER}: {WORDS}"}, said
    # both requests went through the gateway: its usage record holds them, answered
    rows = [r for r in query(usage_db(AppPaths.default())) if r.upstream and r.upstream.endswith("/messages")]
    assert len([r for r in rows if r.status == 200]) >= 2, rows


def test_claude_code_sorts_a_shuffling_servers_tools_between_starts(fake_home: Path, tmp_path: Path) -> None:
    """The MCP server lists its six tools in a new random order on each start (``KVSWITCH_MCP_SHUFFLE``);
    Claude Code 2.1.332 sends them in name order every time, both as full definitions
    (``ENABLE_TOOL_SEARCH=false``) and as deferred names (its default), so such a server does not change
    its prompt between two starts (what the stabiliser's sorting is for, with a client that does not)."""
    require_module("mcp", "pip install -e '.[test]' (the official MCP Python SDK)")
    binary = claude_binary()
    project = tmp_path / "project"
    project.mkdir()
    orders = tmp_path / "orders.txt"
    with scripted_upstream() as upstream:
        _ok("profile", "add", "scripted", "--kind", "custom", "--base-url", upstream.url, "--model", "tiny",
            "--small-fast-model", "tiny", "--api-key", "dummy-key-0001", "--target", "claude")
        _ok("use", "scripted")
        _ok("mcp", "add", "kvs-shuffle", "--client", "claude", "--env", "KVSWITCH_MCP_SHUFFLE=1",
            "--env", f"KVSWITCH_MCP_ORDER_LOG={orders}", "--", sys.executable, str(SERVER), "stdio")
        sent: dict[str, list[list[str]]] = {"false": [], "true": []}
        for search in ("false", "true"):
            for _start in range(3):
                env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(fake_home),
                       "LANG": "C.UTF-8", "ENABLE_TOOL_SEARCH": search, **WAIT_FOR_SERVERS}
                seen = len(upstream.bodies("/messages"))
                done = subprocess.run([str(binary), "-p", "say hi", "--max-turns", "1"], cwd=project, env=env,
                                      stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=240)
                assert done.returncode == 0, done.stderr[-2000:]
                body = next(b for b in upstream.bodies("/messages")[seen:] if b.get("tools"))
                text = json.dumps(body["tools"]) if search == "false" else json.dumps(body["messages"])
                names = [n for n in text.replace("\\n", " ").replace('"', " ").split()
                         if n.startswith("mcp__kvs-shuffle__")]
                sent[search].append(names)
    listed = [line.split() for line in orders.read_text().splitlines()]
    # Claude Code starts the server more than once per run (a listing, the session): every start's order
    assert len({tuple(order) for order in listed}) > 1, listed  # the server did shuffle
    for search, lists in sent.items():
        assert all(len(names) == 6 for names in lists), (search, lists)
        assert all(names == sorted(names) for names in lists), (search, lists)
        assert len({tuple(names) for names in lists}) == 1, (search, lists)
