"""MCP servers written by KV Switch, read by the real clients (Claude Code 2.1.332, Codex 0.171.0, OpenCode
1.18.33), each in the test's temporary HOME.

Two real servers written with the official ``mcp`` SDK (``support/mcp_server.py``): one over stdio, one
over streamable HTTP on a loopback port. ``kvswitch mcp add … --client`` enables both for all three
clients; each client's own ``mcp list`` must show them (Claude Code and OpenCode connect to each: both
must say connected; Codex 0.171 lists what it would start). Disabling one for one client removes it
there only; ``kvswitch undo`` puts every file back byte for byte; a ``~/.claude.json`` that Claude Code
rewrites between KV Switch's plan and its write keeps every key Claude Code wrote.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.claude import claude_binary
from support.clients import CODEX_NEW_VERSION, codex_binary, opencode_binary
from support.net import free_port
from support.require import require_module

APP = Path(__file__).resolve().parents[2] / "app"
SERVER = Path(__file__).resolve().parents[1] / "support" / "mcp_server.py"
ANSI = re.compile(r"\x1b\[[0-9;]*m|\[[0-9;]*m")

pytestmark = [pytest.mark.real_server, pytest.mark.timeout(300)]


def kvswitch(*args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(APP)}
    done = subprocess.run(
        [sys.executable, "-m", "kvswitch", *args], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


def client(binary: Path, *args: str) -> str:
    """A real client's command in the temporary HOME; its output without colour codes."""
    keep = ("PATH", "HOME", "LANG", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.update(DISABLE_AUTOUPDATER="1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", NO_COLOR="1")
    done = subprocess.run(
        [str(binary), *args], env=env, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL
    )
    text = ANSI.sub("", done.stdout + done.stderr)
    assert done.returncode == 0, text
    return text


@pytest.fixture
def http_server() -> Iterator[str]:
    """The streamable-HTTP MCP server on a free loopback port; its URL."""
    require_module("mcp", "pip install -e '.[test]' (the official MCP Python SDK)")
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), "http", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            time.sleep(0.1)
    yield f"http://127.0.0.1:{port}/mcp"
    proc.terminate()
    proc.wait(timeout=10)


def seed(home: Path) -> dict[str, Path]:
    """Each client's file with the user's own content: a hand-made server, comments, unrelated keys."""
    files = {
        "claude": home / ".claude.json",
        "codex": home / ".codex" / "config.toml",
        "opencode": home / ".config" / "opencode" / "opencode.json",
    }
    for path in files.values():
        path.parent.mkdir(parents=True, exist_ok=True)
    files["claude"].write_text(
        json.dumps(
            {
                "numStartups": 7,
                "customKeep": {"a": 1},
                "projects": {str(home / "src"): {"allowedTools": []}},
                "mcpServers": {"handmade": {"type": "stdio", "command": "true", "args": [], "env": {}}},
            },
            indent=2,
        )
        + "\n"
    )
    files["codex"].write_text(
        '# my Codex settings\nmodel = "gpt-5.5"  # keep\n\n[mcp_servers.handmade]\ncommand = "true"\n'
    )
    files["opencode"].write_text(
        '{\n  // my OpenCode settings\n  "$schema": "https://opencode.ai/config.json",\n'
        '  "autoupdate": false,\n}\n'
    )
    return files


def connected(listing: str, name: str) -> bool:
    return any(name in line and "connected" in line.lower() for line in listing.splitlines())


def test_both_servers_reach_every_client_then_disable_one_and_undo(fake_home: Path, http_server: str) -> None:
    claude, codex, opencode = claude_binary(), codex_binary(CODEX_NEW_VERSION), opencode_binary()
    files = seed(fake_home)
    original = {name: path.read_bytes() for name, path in files.items()}
    every = ["--client", "claude", "--client", "codex", "--client", "opencode"]
    kvswitch("mcp", "add", "kvs-stdio", *every, "--", sys.executable, str(SERVER), "stdio")
    kvswitch("mcp", "add", "kvs-http", "--url", http_server, "--header", "X-Test-Token=tok-123456789", *every)
    written = {name: path.read_bytes() for name, path in files.items()}

    listing = client(claude, "mcp", "list")
    assert connected(listing, "kvs-stdio"), listing
    assert connected(listing, "kvs-http"), listing
    assert "handmade" in listing  # the user's own server is still there
    listing = client(codex, "mcp", "list")
    for name in ("kvs-stdio", "kvs-http", "handmade"):
        assert name in listing, listing
    listing = client(opencode, "mcp", "list")
    assert connected(listing, "kvs-stdio"), listing
    assert connected(listing, "kvs-http"), listing

    state = json.loads(files["claude"].read_text())
    assert state["numStartups"] == 7
    assert state["customKeep"] == {"a": 1}
    assert str(fake_home / "src") in state["projects"]
    assert "tok-123456789" not in kvswitch("mcp", "list") + kvswitch("mcp", "list", "--json")
    assert (files["codex"].stat().st_mode & 0o777) == 0o600  # it holds a header value now

    claude_now, opencode_now = files["claude"].read_bytes(), files["opencode"].read_bytes()
    kvswitch("mcp", "disable", "kvs-http", "--client", "codex")
    listing = client(codex, "mcp", "list")
    assert "kvs-stdio" in listing, listing
    assert "kvs-http" not in listing, listing
    assert files["claude"].read_bytes() == claude_now
    assert files["opencode"].read_bytes() == opencode_now
    assert connected(client(opencode, "mcp", "list"), "kvs-http")
    assert "kvs-http" in tomllib.loads(written["codex"].decode())["mcp_servers"]

    kvswitch("undo")  # the disable
    assert files["codex"].read_bytes() == written["codex"]
    kvswitch("undo")
    kvswitch("undo")
    assert files["codex"].read_bytes() == original["codex"]
    assert files["opencode"].read_bytes() == original["opencode"]
    # Claude Code rewrote its file while listing (its own start-up keys): undo took out only KV Switch's
    # servers, key by key, and kept everything Claude Code wrote
    after = json.loads(files["claude"].read_text())
    assert after["mcpServers"] == json.loads(original["claude"])["mcpServers"]
    assert {k: v for k, v in state.items() if k != "mcpServers"}.items() <= after.items()


def test_undo_puts_claude_json_back_byte_for_byte(fake_home: Path) -> None:
    path = seed(fake_home)["claude"]
    path.write_bytes(
        b'{"numStartups":3,  "tipsHistory": {"a": 1},\n\t"projects": {}}'
    )  # odd layout, no newline
    before = path.read_bytes()
    kvswitch("mcp", "add", "kvs-stdio", "--client", "claude", "--", sys.executable, str(SERVER), "stdio")
    assert json.loads(path.read_text())["mcpServers"]["kvs-stdio"]["command"] == sys.executable
    kvswitch("undo")
    assert path.read_bytes() == before


def test_claude_code_rewrites_its_file_between_plan_and_write(fake_home: Path) -> None:
    """The plan is made, then real Claude Code rewrites ``~/.claude.json`` (its start-up keys), then the
    write: every key Claude Code wrote survives, and Claude Code connects to the server written."""
    require_module("mcp", "pip install -e '.[test]' (the official MCP Python SDK)")
    from kvswitch.core.mcp import McpServer  # noqa: PLC0415 - imported with the test's HOME set
    from kvswitch.targets.mcp_files import mcp_target  # noqa: PLC0415

    claude = claude_binary()
    path = fake_home / ".claude.json"
    path.write_text(json.dumps({"numStartups": 1, "projects": {}}, indent=2) + "\n")
    server = McpServer("kvs-stdio", command=sys.executable, args=(str(SERVER), "stdio"), clients=("claude",))
    target = mcp_target("claude", os.environ, [server])
    plan = target.plan_servers({})
    client(claude, "mcp", "list")  # Claude Code rewrites the file now, between KV Switch's read and write
    rewritten = json.loads(path.read_text())
    assert set(rewritten) > {"numStartups", "projects"}, "Claude Code did not rewrite its file"
    target.apply(plan)
    final = json.loads(path.read_text())
    assert {k: v for k, v in rewritten.items() if k != "mcpServers"}.items() <= final.items()
    assert final["mcpServers"]["kvs-stdio"]["command"] == sys.executable
    assert connected(client(claude, "mcp", "list"), "kvs-stdio")


def test_project_scope_is_read_and_left_to_the_users_approval(fake_home: Path) -> None:
    """``claude-project:DIR`` writes ``DIR/.mcp.json``; Claude Code 2.1.332 reads it as the project scope and
    holds it until the user approves it in ``claude`` (KV Switch never approves on the user's behalf)."""
    claude = claude_binary()
    project = fake_home / "proj"
    project.mkdir()
    kvswitch(
        "mcp",
        "add",
        "kvs-stdio",
        "--client",
        f"claude-project:{project}",
        "--",
        sys.executable,
        str(SERVER),
        "stdio",
    )
    keep = ("PATH", "HOME", "LANG", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")
    env = {k: v for k, v in os.environ.items() if k in keep}
    done = subprocess.run(
        [str(claude), "mcp", "get", "kvs-stdio"],
        env=env,
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    text = ANSI.sub("", done.stdout + done.stderr)
    assert "Project config" in text, text
    assert "Pending approval" in text, text
    state = fake_home / ".claude.json"  # Claude Code's own record of approvals: KV Switch added none
    assert "enabledMcpjsonServers" not in (state.read_text() if state.exists() else "")
