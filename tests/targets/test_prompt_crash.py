"""SIGKILL during a preset switch: each memory file is whole (one of the texts, never a mix), and the
next KV Switch run rolls an interrupted switch back through the same journal as a profile's."""

from __future__ import annotations

import os
import random
import signal
import time
from pathlib import Path

import pytest

from kvswitch.core.ledger import Ledger
from kvswitch.core.paths import AppPaths
from kvswitch.targets.engine import Engine
from kvswitch.targets.memory_switch import MemoryWrite, MemoryWriter

RUNS = 40
ORIGINAL = b"# the user's own memory\n"
TEXTS = ("A" * 20000 + "\n", "B" * 30000 + "\n")

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")


def _switch_forever(paths: AppPaths, env: dict[str, str]) -> None:
    writer = MemoryWriter(paths, env, set(TEXTS) | {ORIGINAL.decode()})
    number = 0
    while True:
        text = TEXTS[number % 2]
        writer.apply(MemoryWrite(f"p{number % 2}", text, ("claude", "codex"), force=True))
        number += 1


def test_a_killed_switch_leaves_whole_files_and_is_rolled_back(fake_home: Path) -> None:
    env = dict(os.environ)
    paths = AppPaths.default()
    claude_md = fake_home / ".claude" / "CLAUDE.md"
    claude_md.parent.mkdir()
    claude_md.write_bytes(ORIGINAL)
    agents = fake_home / ".codex" / "AGENTS.md"
    whole = {ORIGINAL, *(t.encode() for t in TEXTS), None}
    rng = random.Random(36)
    interrupted = 0
    for _ in range(RUNS):
        pid = os.fork()
        if pid == 0:  # the child switches until it is killed
            try:
                _switch_forever(paths, env)
            finally:
                os._exit(0)
        time.sleep(rng.uniform(0.0, 0.15))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        for path in (claude_md, agents):
            assert (path.read_bytes() if path.exists() else None) in whole
        state = Ledger(paths.state_file).load()
        if state.pending is not None:
            interrupted += 1
            before = {e.location: e for e in state.pending.entries}
            Engine(paths, env).recover()
            for location, entry in before.items():
                content = Path(location).read_bytes() if Path(location).exists() else None
                backup = Path(entry.backup).read_bytes() if entry.backup else None
                assert content == backup  # put back to what the interrupted switch found
        assert Ledger(paths.state_file).load().pending is None
        assert not list(claude_md.parent.glob("*.kvswitch-tmp"))
    assert interrupted > 0, "no kill landed inside a switch; the test proved nothing"
