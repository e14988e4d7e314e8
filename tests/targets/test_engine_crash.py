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
import stat
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

import pytest

from kvswitch.core.fsutil import TEMP_SUFFIX
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


def seed(home: Path, symlinked: bool = False) -> None:
    """The user's files; ``symlinked``: each is a link into a dotfiles repo (absolute, relative, a chain),
    with a FIFO and (as root) a device node named like KV Switch's temp files beside the real files."""
    (home / ".claude").mkdir(parents=True, exist_ok=True)
    (home / ".codex").mkdir(parents=True, exist_ok=True)
    files = {
        home / ".claude" / "settings.json": json.dumps(USER_SETTINGS, indent=2) + "\n",
        home / ".codex" / "config.toml": USER_CODEX,
        home / ".bashrc": USER_BASHRC,
    }
    if not symlinked:
        for path, text in files.items():
            path.write_text(text)
        return
    repo = home / "dotfiles"
    repo.mkdir()
    (repo / "settings.json").write_text(files[home / ".claude" / "settings.json"])
    (repo / "config.toml").write_text(USER_CODEX)
    (repo / "bashrc").write_text(USER_BASHRC)
    (home / ".claude" / "settings.json").symlink_to(repo / "settings.json")
    (home / ".codex" / "config.toml").symlink_to(os.path.relpath(repo / "config.toml", home / ".codex"))
    (repo / "bashrc-link").symlink_to("bashrc")
    (home / ".bashrc").symlink_to(repo / "bashrc-link")
    for special in special_files(home):
        if special.name.startswith(".bashrc"):
            os.mkfifo(special)
        else:
            os.mknod(special, 0o600 | stat.S_IFCHR, os.makedev(1, 3))


def special_files(home: Path) -> list[Path]:
    names = [home / "dotfiles" / f".bashrc.keep{TEMP_SUFFIX}"]
    if os.geteuid() == 0:
        names.append(home / "dotfiles" / f".settings.json.keep{TEMP_SUFFIX}")
    return names


def layout(home: Path) -> list[object]:
    """The links' text and the special files' identity: none of it may ever change."""
    links = [home / ".claude" / "settings.json", home / ".codex" / "config.toml", home / ".bashrc",
             home / "dotfiles" / "bashrc-link"]
    shot: list[object] = [os.readlink(link) for link in links]
    for special in special_files(home):
        info = os.lstat(special)
        shot.append((stat.S_IFMT(info.st_mode), info.st_ino, info.st_rdev))
    return shot


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
@pytest.mark.parametrize("symlinked", [False, True], ids=["plain", "symlinked"])
def test_sigkill_at_random_points(tmp_path: Path, symlinked: bool) -> None:
    states = expected_states(tmp_path)
    home = tmp_path / "home"
    seed(home, symlinked)
    shape = layout(home) if symlinked else None
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
        if shape is not None:
            assert layout(home) == shape, f"run {run}: a link or a special file was changed"
        engine = engine_for(home)
        pending = engine.state().pending is not None
        seen_pending += pending
        engine.apply(PROFILE_A)
        if pending:
            leftovers = [
                *(home / ".claude").glob("*.kvswitch-tmp"),
                *(home / ".codex").glob("*.kvswitch-tmp"),
                *home.glob(".*.kvswitch-tmp"),
                *(p for p in (home / "dotfiles").glob(".*.kvswitch-tmp") if p not in special_files(home)),
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
        if shape is not None:
            assert layout(home) == shape, f"run {run}: recovery changed a link or a special file"
    assert seen_pending > 0, "no kill landed inside an apply; the delays are too long for this machine"
    shutil.rmtree(tmp_path / "scratch-A")
