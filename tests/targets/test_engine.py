"""The engine: all-or-nothing apply, undo (also over hand edits), the cross-process lock, recovery."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from engine_helpers import KEY, local_profile, make_engine, remote_profile

from kvswitch.core.errors import LockedError
from kvswitch.core.lock import FileLock
from kvswitch.core.paths import AppPaths
from kvswitch.core.store import ProfileStore
from kvswitch.targets.engine import ApplyFailed, Engine, NothingToUndo
from kvswitch.targets.transaction import UNDO_DEPTH

APP = Path(__file__).resolve().parents[2] / "app"


@pytest.fixture
def engine(fake_home: Path) -> Engine:
    return make_engine()


def settings(home: Path) -> Path:
    return home / ".claude" / "settings.json"


def test_render_diff_masks_the_key(engine: Engine) -> None:
    plans = engine.plan(local_profile(targets=["claude", "codex"]))
    diff = engine.render_diff(plans)
    assert "+++ " in diff
    assert "ANTHROPIC_AUTH_TOKEN" in diff
    assert KEY not in diff
    assert "sk-…cdef" in diff
    assert KEY in engine.render_diff(plans, show_secrets=True)


def test_current_and_undo_walk_back(engine: Engine, fake_home: Path) -> None:
    assert engine.current() is None
    engine.apply(local_profile())
    engine.apply(remote_profile())
    assert engine.current() == "remote"
    assert engine.undo().profile == "local"
    assert engine.current() == "local"
    engine.undo()
    assert engine.current() is None
    with pytest.raises(NothingToUndo):
        engine.undo()


def test_undo_after_a_switch_that_changed_no_file_restores_the_active_name(engine: Engine) -> None:
    engine.apply(local_profile(name="a"))
    engine.apply(local_profile(name="b"))
    assert engine.current() == "b"
    assert engine.undo().written == []
    assert engine.current() == "a"


def test_reapplying_same_profile_changes_nothing(engine: Engine, fake_home: Path) -> None:
    engine.apply(local_profile())
    before = settings(fake_home).stat().st_mtime_ns
    result = engine.apply(local_profile())
    assert result.written == []
    assert settings(fake_home).stat().st_mtime_ns == before
    engine.undo()
    assert not settings(fake_home).exists()


def test_undo_keeps_hand_edits_made_since_apply(engine: Engine, fake_home: Path) -> None:
    path = settings(fake_home)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"theme": "dark", "env": {"X": "1"}}, indent=2) + "\n")
    engine.apply(local_profile())
    data = json.loads(path.read_text())
    data["theme"] = "light"
    data["env"]["ANTHROPIC_MODEL"] = "my-own"
    path.write_text(json.dumps(data, indent=2) + "\n")
    result = engine.undo()
    after = json.loads(path.read_text())
    assert after["theme"] == "light"
    assert after["env"]["ANTHROPIC_MODEL"] == "my-own"
    assert "ANTHROPIC_BASE_URL" not in after["env"]
    assert after["env"]["X"] == "1"
    assert "model" not in after
    assert any("ANTHROPIC_MODEL was changed by hand" in w for w in result.warnings)


def test_undo_over_hand_edits_puts_back_a_key_the_apply_handed_back_to_the_user(
    engine: Engine, fake_home: Path
) -> None:
    """The user's own API_TIMEOUT_MS is taken over by one profile, handed back (their value restored) by
    the next apply, and the file is then edited elsewhere: undoing that apply returns the first
    profile's value, not the user's, and keeps the edit."""
    path = settings(fake_home)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"env": {"API_TIMEOUT_MS": ""}}, indent=2) + "\n")
    engine.apply(local_profile("slow", env={"API_TIMEOUT_MS": "0"}))
    engine.apply(local_profile("plain", env={}))
    assert json.loads(path.read_text())["env"]["API_TIMEOUT_MS"] == ""
    data = json.loads(path.read_text())
    data["theme"] = "light"
    path.write_text(json.dumps(data, indent=2) + "\n")
    result = engine.undo()
    after = json.loads(path.read_text())
    assert after["env"]["API_TIMEOUT_MS"] == "0"
    assert after["theme"] == "light"
    assert not [w for w in result.warnings if "API_TIMEOUT_MS" in w]


def test_backups_are_private_and_bounded(fake_home: Path) -> None:
    engine = Engine(AppPaths.default(), backups_keep=3)
    path = settings(fake_home)
    path.parent.mkdir(parents=True)
    path.write_text("{}\n")
    for number in range(12):
        engine.apply(local_profile(model=f"m{number}"))
    backups = engine.backups.list(str(path))
    assert len(backups) == max(3, UNDO_DEPTH), "the newest N, plus any an undo still needs"
    assert all(b.stat().st_mode & 0o777 == 0o600 for b in backups)
    assert json.loads(backups[-1].read_text())["model"] == "m10"


def test_backups_an_undo_needs_survive_pruning(fake_home: Path) -> None:
    engine = Engine(AppPaths.default(), backups_keep=2)
    path = settings(fake_home)
    path.parent.mkdir(parents=True)
    path.write_text('{"theme": "dark"}\n')
    engine.apply(remote_profile())
    for _ in range(4):
        engine.apply(local_profile())
        engine.undo()
    engine.undo()
    assert path.read_text() == '{"theme": "dark"}\n'


def test_failure_in_second_target_rolls_back_first(engine: Engine, fake_home: Path) -> None:
    codex = fake_home / ".codex"
    codex.mkdir()
    (codex / "config.toml").write_text("# mine\n")
    (codex / "config.toml").chmod(0o444)
    path = settings(fake_home)
    path.parent.mkdir(parents=True)
    path.write_text('{"theme": "dark"}\n')
    with pytest.raises(ApplyFailed) as info:
        engine.apply(local_profile(targets=["claude", "codex"]))
    assert "config.toml" in str(info.value)
    assert "put back" in str(info.value)
    assert path.read_text() == '{"theme": "dark"}\n'
    assert engine.state().targets == {}
    assert engine.state().pending is None


def test_failed_undo_keeps_the_history_and_the_files(engine: Engine, fake_home: Path) -> None:
    config = fake_home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text("# mine\n")
    engine.apply(local_profile(targets=["claude", "codex"]))
    ledger_before = engine.state()
    applied = {p: p.read_bytes() for p in (settings(fake_home), config)}
    config.chmod(0o444)
    with pytest.raises(ApplyFailed):
        engine.undo()
    assert {p: p.read_bytes() for p in applied} == applied
    assert engine.state() == ledger_before
    config.chmod(0o644)
    engine.undo()
    assert not settings(fake_home).exists()
    assert config.read_text() == "# mine\n"


def test_interrupted_apply_is_rolled_back_on_next_run(engine: Engine, fake_home: Path) -> None:
    """Simulates a kill between writing the files and committing the ledger."""
    path = settings(fake_home)
    path.parent.mkdir(parents=True)
    path.write_text('{"theme": "dark"}\n')
    engine.apply(remote_profile())
    committed = path.read_bytes()
    state = engine.state()
    original_save = engine.ledger.save
    calls = []

    def save_then_die(new_state: object) -> None:
        calls.append(1)
        if len(calls) == 2:  # the commit after the files were written
            raise KeyboardInterrupt
        original_save(new_state)  # type: ignore[arg-type]

    engine.ledger.save = save_then_die  # type: ignore[method-assign]
    with pytest.raises(KeyboardInterrupt):
        engine.apply(local_profile())
    assert engine.state().pending is not None, "the journal written before the files is left behind"
    fresh = make_engine()
    fresh.apply(remote_profile())
    assert any("interrupted" in note for note in fresh.recovery_notes)
    assert path.read_bytes() == committed
    assert fresh.state().targets == state.targets
    assert fresh.state().pending is None
    assert fresh.current() == "remote"


def test_second_process_gets_locked_error(engine: Engine, paths_lock: Path) -> None:
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from pathlib import Path; from kvswitch.core.lock import FileLock\n"
            f"lock = FileLock(Path({str(paths_lock)!r})); lock.acquire()\n"
            "print('held', flush=True); time.sleep(30)",
        ],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(APP)},
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        engine.lock_timeout = 0.3
        with pytest.raises(LockedError) as info:
            engine.apply(local_profile())
        assert f"pid {holder.pid}" in str(info.value)
        assert "try again" in str(info.value)
    finally:
        holder.kill()
        holder.wait()
    engine.apply(local_profile())  # the kernel released the dead holder's lock
    assert engine.current() == "local"


@pytest.fixture
def paths_lock(fake_home: Path) -> Path:
    return AppPaths.default().lock_file


def test_lock_is_exclusive_within_a_process_too(paths_lock: Path) -> None:
    with FileLock(paths_lock), pytest.raises(LockedError):
        FileLock(paths_lock, timeout=0.1).acquire()


def test_concurrent_cli_applies_serialise(fake_home: Path) -> None:
    """Two ``kvswitch use`` at once: the second waits for the first and plans on its result.

    It failed at random while ``use`` planned outside the lock (the loser reported a preview it never
    showed as changed). The local profile has its context window, so no ``use`` asks a port whatever
    happens to listen on 8080 of this machine.
    """
    store = ProfileStore(AppPaths.default())
    store.add(local_profile(targets=["claude", "codex"], context_window=4096))
    store.add(remote_profile(targets=["claude"]))
    env = {**os.environ, "PYTHONPATH": str(APP)}
    # two rounds: at most four applies, so undo can walk all the way back (UNDO_DEPTH is 5)
    for _ in range(2):
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "kvswitch", "use", name],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for name in ("local", "remote")
        ]
        outputs = [p.communicate(timeout=120) for p in procs]
        assert [p.returncode for p in procs] == [0, 0], outputs
        assert not any("preview" in stderr for _, stderr in outputs), outputs
    engine = make_engine()
    active = engine.current()
    data = json.loads(settings(fake_home).read_text())
    expected = "http://127.0.0.1:8080" if active == "local" else "https://api.anthropic.com"
    assert data["env"]["ANTHROPIC_BASE_URL"] == expected
    codex = fake_home / ".codex" / "config.toml"
    assert codex.exists(), "Codex keeps the local profile: the remote one is Claude-only"
    assert 1 <= len(engine.state().history) <= 4 < UNDO_DEPTH
    start = time.monotonic()
    while engine.state().history:
        engine.undo()
        assert time.monotonic() - start < 30
    assert not settings(fake_home).exists()
    assert not codex.exists()
