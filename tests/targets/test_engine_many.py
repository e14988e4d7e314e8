"""Many applies: 50 ``kvswitch use`` processes at once, and the user's original file after more applies
than undo keeps (real processes, real files in the temporary HOME)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from engine_helpers import local_profile, make_engine, remote_profile

from kvswitch.core.ledger import digest_bytes
from kvswitch.core.paths import AppPaths
from kvswitch.core.store import ProfileStore
from kvswitch.targets.engine import NothingToUndo
from kvswitch.targets.transaction import UNDO_DEPTH

APP = Path(__file__).resolve().parents[2] / "app"
PARALLEL = 50
#: the user's own settings before KV Switch: odd spacing, a BOM-less CRLF file, keys it never touches
ORIGINAL = b'{\r\n  "theme" : "dark",\r\n  "env": {"ANTHROPIC_BASE_URL": "https://mine.example"}\r\n}\r\n'


def _kvswitch(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kvswitch", *args],
        env={**os.environ, "PYTHONPATH": str(APP)},
        capture_output=True,
        text=True,
        timeout=300,
    )


def _add_profiles() -> None:
    store = ProfileStore(AppPaths.default())
    # context windows given: no 'use' asks whatever listens on this machine's port 8080
    store.add(local_profile(targets=["claude", "codex", "bash"], context_window=4096))
    store.add(remote_profile(targets=["claude", "bash"]))


@pytest.mark.slow
def test_fifty_parallel_uses_all_succeed_and_leave_consistent_files(fake_home: Path) -> None:
    _add_profiles()
    settings = fake_home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(ORIGINAL)
    names = ["local" if i % 2 else "remote" for i in range(PARALLEL)]
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "kvswitch", "use", name],
            env={**os.environ, "PYTHONPATH": str(APP)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in names
    ]
    outputs = [p.communicate(timeout=600) for p in procs]
    runs = zip(procs, names, outputs, strict=True)
    failed = [(name, out, err) for p, name, (out, err) in runs if p.returncode]
    assert not failed, failed[:3]
    engine = make_engine()
    state = engine.state()
    assert state.pending is None
    active = engine.current()
    assert active in ("local", "remote")
    # every file holds exactly the active profile, and the ledger's digests are the files' bytes
    data = json.loads(settings.read_text())
    assert data["theme"] == "dark"
    expected = "http://127.0.0.1:8080" if active == "local" else "https://api.anthropic.com"
    assert data["env"]["ANTHROPIC_BASE_URL"] == expected
    codex = fake_home / ".codex" / "config.toml"
    assert codex.exists(), "Codex keeps the local profile: the remote one is Claude-only"
    bashrc = (fake_home / ".bashrc").read_text()
    assert bashrc.count("# >>> kvswitch >>>") == 1
    assert f"export ANTHROPIC_BASE_URL={expected}" in bashrc or f"'{expected}'" in bashrc
    assert len(state.history) <= UNDO_DEPTH
    # nothing KV Switch wrote is lost: the user's first bytes come back
    engine.restore_originals()
    assert settings.read_bytes() == ORIGINAL
    assert not codex.exists()


def test_original_survives_more_applies_than_undo_keeps(fake_home: Path) -> None:
    _add_profiles()
    settings = fake_home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(ORIGINAL)
    settings.chmod(0o640)
    for number in range(7):
        result = _kvswitch("use", "local" if number % 2 == 0 else "remote")
        assert result.returncode == 0, result.stderr
    engine = make_engine()
    assert len(engine.state().history) == UNDO_DEPTH
    # undo alone can no longer reach the original bytes
    while engine.state().history:
        engine.undo()
    assert settings.read_bytes() != ORIGINAL
    # the kept original can
    last = settings.read_bytes()
    restored = _kvswitch("undo", "--original", str(settings))
    assert restored.returncode == 0, restored.stderr
    assert "as they were before KV Switch first wrote them" in restored.stdout
    assert settings.read_bytes() == ORIGINAL
    assert settings.stat().st_mode & 0o777 == 0o640
    # the restore is itself undoable, and names where the replaced bytes went
    assert "what it held just now is in" in restored.stdout
    assert _kvswitch("undo").returncode == 0
    assert digest_bytes(settings.read_bytes()) == digest_bytes(last)
    # a file KV Switch created is 'restored' by removing it
    codex = fake_home / ".codex" / "config.toml"
    _kvswitch("use", "local")
    assert codex.exists()
    everything = _kvswitch("undo", "--original")
    assert everything.returncode == 0, everything.stderr
    assert not codex.exists()
    assert settings.read_bytes() == ORIGINAL
    assert make_engine().current() is None


def test_original_of_unknown_file_is_a_clear_error(fake_home: Path) -> None:
    engine = make_engine()
    with pytest.raises(NothingToUndo, match="has not written any file yet"):
        engine.restore_originals()
    engine.apply(local_profile(context_window=4096))
    with pytest.raises(NothingToUndo, match=r"no original is kept for .*nosuch"):
        engine.restore_originals([str(fake_home / "nosuch")])
    result = _kvswitch("undo", "--original", str(fake_home / "nosuch"))
    assert result.returncode != 0
    assert "no original is kept for" in result.stderr
    assert "Traceback" not in result.stderr


def test_an_undo_records_no_original(fake_home: Path) -> None:
    """A ledger from before originals were kept: an undo writes KV Switch's own earlier state, which is
    not what the user had before KV Switch, so it is not kept as the original."""
    engine = make_engine()
    engine.apply(local_profile(context_window=4096))
    state = engine.state()
    state.originals.clear()  # as a ledger written by an older version
    engine.ledger.save(state)
    engine.undo()
    assert engine.originals() == {}
    engine.apply(remote_profile())
    assert set(engine.originals()) == {"claude"}
