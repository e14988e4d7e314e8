"""SIGKILL at random points of an apply: every file is whole (old or new) and the next run recovers.

A forked child (cheap: no interpreter start-up per run) switches between two profiles in a loop and is
killed after a random delay, so kills land before, between and after the journal, the backups, each
file's atomic rename and the ledger commit.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

import pytest

from kvswitch.core.models import Profile
from kvswitch.core.paths import AppPaths
from kvswitch.targets.engine import Engine

RUNS = 200
USER_SETTINGS = {"theme": "dark", "env": {"MY_HOME": "/opt", "ANTHROPIC_MODEL": "mine"}}
USER_BASHRC = "# my bashrc\nalias ll='ls -l'\n"
USER_CODEX = '# mine\napproval_policy = "never"\n\n[mcp_servers.a]\ncommand = "x"\n'

PROFILE_A = Profile(
    name="A",
    kind="llama.cpp",
    base_url="http://127.0.0.1:8080",
    api_key="sk-aaaaaaaaaaaaaaaa",
    model="qwen",
    env={"CLAUDE_CODE_ATTRIBUTION_HEADER": "0", "FOO": "a"},
    targets=["claude", "codex", "bash"],
)
PROFILE_B = Profile(
    name="B",
    kind="custom",
    base_url="https://gw.example/v1",
    api_key="sk-bbbbbbbbbbbbbbbb",
    env={"BAR": "b"},
    targets=["claude", "codex", "bash"],
)

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")


def seed(home: Path) -> None:
    (home / ".claude").mkdir(parents=True, exist_ok=True)
    (home / ".claude" / "settings.json").write_text(json.dumps(USER_SETTINGS, indent=2) + "\n")
    (home / ".codex").mkdir(parents=True, exist_ok=True)
    (home / ".codex" / "config.toml").write_text(USER_CODEX)
    (home / ".bashrc").write_text(USER_BASHRC)


def engine_for(home: Path) -> Engine:
    return Engine(
        AppPaths(home / "cfg", home / "cfg" / "data", home / "cfg" / "logs"),
        env={"HOME": str(home)},
        lock_timeout=5.0,
    )


def parsed(home: Path) -> tuple[Any, Any, str | None]:
    claude = home / ".claude" / "settings.json"
    codex = home / ".codex" / "config.toml"
    bashrc = home / ".bashrc"
    return (
        json.loads(claude.read_text()) if claude.exists() else None,
        tomllib.loads(codex.read_text()) if codex.exists() else None,
        bashrc.read_text() if bashrc.exists() else None,
    )


def expected_states(root: Path) -> dict[str, tuple[Any, Any, str | None]]:
    states = {}
    for name, profile in (("A", PROFILE_A), ("B", PROFILE_B)):
        scratch = root / f"scratch-{name}"
        seed(scratch)
        engine_for(scratch).apply(profile)
        states[name] = parsed(scratch)
    initial = root / "scratch-initial"
    seed(initial)
    states["initial"] = parsed(initial)
    return states


def child_loop(home: Path) -> None:
    engine = engine_for(home)
    try:
        while True:
            engine.apply(PROFILE_B)
            engine.apply(PROFILE_A)
    except BaseException:
        os._exit(1)


@pytest.mark.slow
def test_sigkill_at_random_points(tmp_path: Path) -> None:
    states = expected_states(tmp_path)
    home = tmp_path / "home"
    seed(home)
    engine_for(home).apply(PROFILE_A)
    rng = random.Random(1234)
    calibrate = engine_for(tmp_path / "scratch-initial")
    start = time.perf_counter()
    for profile in (PROFILE_B, PROFILE_A, PROFILE_B, PROFILE_A):
        calibrate.apply(profile)
    one_apply = (time.perf_counter() - start) / 4
    seen_pending = 0
    for run in range(RUNS):
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            child_loop(home)
        time.sleep(rng.uniform(0.0, 2.5 * one_apply))  # mostly inside the first two applies
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        assert os.WIFSIGNALED(status), f"run {run}: the child failed on its own (status {status})"
        claude, codex, bashrc = parsed(home)
        assert claude in (states["A"][0], states["B"][0], states["initial"][0]), (
            f"run {run}: torn settings.json"
        )
        assert codex in (states["A"][1], states["B"][1], states["initial"][1]), f"run {run}: torn config.toml"
        assert bashrc in (states["A"][2], states["B"][2], states["initial"][2]), f"run {run}: torn .bashrc"
        engine = engine_for(home)
        pending = engine.state().pending is not None
        seen_pending += pending
        engine.apply(PROFILE_A)
        if pending:
            leftovers = [
                *(home / ".claude").glob("*.kvswitch-tmp"),
                *(home / ".codex").glob("*.kvswitch-tmp"),
                *home.glob(".*.kvswitch-tmp"),
            ]
            assert leftovers == [], (
                f"run {run}: recovery left temp files behind: {leftovers} {engine.recovery_notes}"
            )
        assert parsed(home) == states["A"], f"run {run}: re-apply after the kill did not recover"
        assert engine.current() == "A"
        if run % 20 == 0:
            engine.apply(PROFILE_B)
            assert parsed(home) == states["B"]
            engine.undo()
            assert parsed(home) == states["A"]
    assert seen_pending > 0, "no kill landed inside an apply; the delays are too long for this machine"
    shutil.rmtree(tmp_path / "scratch-A")
