"""The agent process check with real processes named ``claude`` and ``codex`` (sleep, renamed)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kvswitch.verify.processes import agent_name, compare_env, find_agent_processes
from support.require import require_tool

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="uses /proc-style environments and sleep")
EXPECTED = {"CLAUDE_CODE_ATTRIBUTION_HEADER": "0", "ANTHROPIC_AUTH_TOKEN": "sk-secret-value-1234"}


@pytest.fixture
def spawn(tmp_path: Path) -> Iterator:
    procs: list[subprocess.Popen] = []
    sleep = require_tool("sleep", "coreutils")

    def start(name: str, env: dict[str, str]) -> subprocess.Popen:
        link = tmp_path / name
        if not link.exists():
            link.symlink_to(sleep)
        proc = subprocess.Popen([str(link), "30"], env={"PATH": os.environ.get("PATH", ""), **env})
        procs.append(proc)
        return proc

    yield start
    for proc in procs:
        proc.kill()
        proc.wait()


def test_env_and_start_time_decide_restart(spawn) -> None:  # noqa: ANN001
    good = spawn("claude", dict(EXPECTED))
    stale = spawn(
        "codex", {"CLAUDE_CODE_ATTRIBUTION_HEADER": "1", "ANTHROPIC_AUTH_TOKEN": "old-token-abcdef"}
    )
    time.sleep(0.2)
    found = {p.pid: p for p in find_agent_processes(EXPECTED, pids=[good.pid, stale.pid])}
    assert set(found) == {good.pid, stale.pid}
    ok, bad = found[good.pid], found[stale.pid]
    assert ok.agent == "claude"
    assert ok.has_env is True
    assert not ok.needs_restart
    assert ok.reason == "up to date"
    assert bad.agent == "codex"
    assert bad.has_env is False
    assert bad.needs_restart
    assert "CLAUDE_CODE_ATTRIBUTION_HEADER (is '1')" in bad.reason
    assert "ANTHROPIC_AUTH_TOKEN (differs)" in bad.reason
    assert "old-token" not in str(bad.to_json())

    # a switch applied after both started: both need a restart, whatever their environment
    later = find_agent_processes(EXPECTED, applied_at=time.time() + 5, pids=[good.pid])
    assert later[0].started_before_apply is True
    assert later[0].needs_restart
    assert "before the last switch" in later[0].reason
    earlier = find_agent_processes(EXPECTED, applied_at=time.time() - 3600, pids=[good.pid])
    assert earlier[0].started_before_apply is False
    assert not earlier[0].needs_restart


def test_a_running_opencode_is_an_agent(spawn) -> None:  # noqa: ANN001
    proc = spawn("opencode", {"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"})
    [found] = find_agent_processes({"KVSWITCH_API_KEY": "k"}, pids=[proc.pid])
    assert found.agent == "opencode"
    assert found.needs_restart
    assert "KVSWITCH_API_KEY" in found.reason


def test_other_programs_are_not_agents(spawn) -> None:  # noqa: ANN001
    other = spawn("claudette", dict(EXPECTED))
    assert find_agent_processes(EXPECTED, pids=[other.pid]) == []


def test_agent_name_recognition() -> None:
    assert agent_name(("/usr/local/bin/claude", "-p", "hi")) == "claude"
    assert agent_name(("node", "/usr/lib/node_modules/@anthropic-ai/claude-code/cli.js")) == "claude"
    assert agent_name(("C:\\Program Files\\codex.exe",)) == "codex"
    assert agent_name(("node", "/home/u/.npm/bin/codex")) == "codex"
    # OpenCode 1.18's npm layout: the native binary, or node running the package's launcher
    assert agent_name(("/usr/lib/node_modules/opencode-linux-x64/bin/opencode", "run", "hi")) == "opencode"
    assert agent_name(("node", "/usr/lib/node_modules/opencode-ai/bin/opencode.exe")) == "opencode"
    assert agent_name(("bash", "-c", "claude -p hi")) is None
    assert agent_name(("vim", "claude.md")) is None
    assert agent_name(()) is None


def test_compare_env_never_shows_secret_values() -> None:
    missing = compare_env({"A_KEY": "x", "MODE": "1", "ABSENT": "y"}, {"A_KEY": "leaked", "MODE": "2"})
    assert missing == ["A_KEY (differs)", "MODE (is '2')", "ABSENT"]
