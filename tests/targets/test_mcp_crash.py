"""SIGKILL at random points of an MCP write: every file is whole, the user's content is kept, and the next
run rolls the interrupted write back (the journal ``targets.transaction`` keeps for profiles, reused).

A forked child switches the MCP list between two sets in a loop, for Claude Code, Codex and OpenCode, and
is killed after a random delay, so kills land before, between and after the journal, the backups, each
file's atomic rename and the ledger commit.
"""

from __future__ import annotations

import json
import os
import random
import signal
import time
import tomllib
from pathlib import Path

import pytest

from kvswitch.core.fsutil import TEMP_SUFFIX
from kvswitch.core.ledger import Ledger
from kvswitch.core.mcp import McpServer
from kvswitch.core.paths import AppPaths
from kvswitch.targets.jsonc import parse_jsonc_object
from kvswitch.targets.mcp_sync import McpSync

RUNS = 40
CLIENTS = ("claude", "codex", "opencode")
SET_A = [McpServer("one", command="echo", args=("1",), env={"TOKEN": "t-1111111111"}, clients=CLIENTS)]
SET_B = [
    McpServer("two", "http", url="http://127.0.0.1:9/mcp", clients=CLIENTS),
    McpServer("three", command="echo", args=("3",), clients=("claude", "opencode")),
]

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")


def seed(home: Path) -> dict[str, Path]:
    files = {
        "claude": home / ".claude.json",
        "codex": home / ".codex" / "config.toml",
        "opencode": home / ".config" / "opencode" / "opencode.json",
    }
    for path in files.values():
        path.parent.mkdir(parents=True, exist_ok=True)
    files["claude"].write_text(
        json.dumps({"numStartups": 4, "mcpServers": {"mine": {"command": "x"}}}, indent=2)
    )
    files["codex"].write_text('# mine\nmodel = "o3"\n\n[mcp_servers.mine]\ncommand = "x"\n')
    files["opencode"].write_text('{\n  // mine\n  "autoupdate": false,\n}\n')
    return files


def check_whole(files: dict[str, Path]) -> None:
    claude = json.loads(files["claude"].read_text())
    assert claude["numStartups"] == 4
    assert claude["mcpServers"]["mine"] == {"command": "x"}
    codex = tomllib.loads(files["codex"].read_text())
    assert codex["model"] == "o3"
    assert codex["mcp_servers"]["mine"] == {"command": "x"}
    text = files["opencode"].read_text()
    assert "// mine" in text
    assert parse_jsonc_object(files["opencode"], text)["autoupdate"] is False


def test_sigkill_during_mcp_writes(fake_home: Path) -> None:
    files = seed(fake_home)
    paths = AppPaths.default()
    rng = random.Random(36)
    for _ in range(RUNS):
        pid = os.fork()
        if pid == 0:  # the child: write in a loop until killed
            try:
                sync = McpSync(paths, lock_timeout=30)
                while True:
                    sync.apply(SET_A)
                    sync.apply(SET_B)
            finally:
                os._exit(0)
        time.sleep(rng.uniform(0.0, 0.25))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        check_whole(files)  # whatever instant the kill hit, each file is old or new, never torn
        pending = Ledger(paths.state_file).load().pending is not None
        McpSync(paths).apply(SET_A)  # rolls back an interrupted write first, then writes
        check_whole(files)
        if pending:  # the journal names the files it was writing: their temp files are cleaned up
            leftovers = [p for f in files.values() for p in f.parent.glob(f".*{TEMP_SUFFIX}")]
            assert leftovers == []
        codex = tomllib.loads(files["codex"].read_text())["mcp_servers"]
        assert set(codex) == {"mine", "one"}
    McpSync(paths).apply([])
    check_whole(files)
    assert set(json.loads(files["claude"].read_text())["mcpServers"]) == {"mine"}
