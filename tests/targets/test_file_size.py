"""A config file far larger than any real one (a 2 GB sparse ``settings.json`` or ``.bashrc``) is refused by
its size before it is read: one message naming the file, no gigabytes of memory (real CLI processes)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from kvswitch.core.errors import FileAccessError
from kvswitch.core.fsutil import MAX_CONFIG_BYTES, read_bytes
from support.measured import run_kvswitch

APP = Path(__file__).resolve().parents[2] / "app"
SPARSE = 2 << 30


def _sparse(path: Path, size: int = SPARSE) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:
        handle.truncate(size)  # no blocks on disk: only reading it would cost
    return path


def _run(*args: str) -> tuple[subprocess.CompletedProcess[str], int]:
    """The command's result and its own peak RSS (KiB), from ``wait4`` for that one child (the
    children-so-far figure of ``getrusage`` would include every server an earlier test started)."""
    outcome = run_kvswitch(args, {**os.environ, "PYTHONPATH": str(APP)}, timeout=120)
    result = subprocess.CompletedProcess(list(args), -9 if outcome.code is None else outcome.code,
                                         outcome.stdout, outcome.stderr)
    return result, int(outcome.peak_rss_mb * 1024)


@pytest.mark.parametrize("name", [".claude/settings.json", ".bashrc"])
def test_huge_sparse_config_is_refused_by_size(fake_home: Path, name: str) -> None:
    target = _sparse(fake_home / name)
    added, _ = _run("profile", "add", "local", "--kind", "llama.cpp", "--context-window", "32768",
                    "--target", "claude", "--target", "bash")
    assert added.returncode == 0, added.stderr
    used, peak_kib = _run("use", "local")
    assert used.returncode == 1, (used.stdout, used.stderr)
    assert str(target) in used.stderr
    assert "2,048.0 MiB, larger than the 16.0 MiB" in used.stderr
    assert "Traceback" not in used.stderr
    assert peak_kib < 300 * 1024  # nothing near the file's size was read
    assert target.stat().st_size == SPARSE  # and nothing was written
    doctor, _ = _run("doctor")
    assert str(target) in doctor.stdout
    assert "larger than the 16.0 MiB" in doctor.stdout


def test_limit_is_exact(tmp_path: Path) -> None:
    at_limit = _sparse(tmp_path / "ok.json", MAX_CONFIG_BYTES)
    assert read_bytes(at_limit) == bytes(MAX_CONFIG_BYTES)
    over = _sparse(tmp_path / "big.json", MAX_CONFIG_BYTES + 1)
    with pytest.raises(FileAccessError, match="big.json"):
        read_bytes(over)
