"""Targets write only regular files: devices, FIFOs, sockets and directories are refused before any
open, read-only and hard-linked files are refused, and files holding a key end at 0600.

Everything runs the real CLI (``python -m kvswitch``) or the real engine in the temporary HOME. A FIFO
is the hang case (an open for reading blocks until a writer comes); each CLI call has a timeout, so a
regression fails here instead of hanging. Device nodes are made with ``mknod`` (root only); the
refusal of ``/dev/null`` behind a symlink is checked without ever writing to it.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from engine_helpers import KEY, local_profile, make_engine

from kvswitch.core.errors import FileAccessError, KvSwitchError
from support.require import NOT_APPLICABLE

APP = Path(__file__).resolve().parents[2] / "app"
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
needs_posix = pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and device nodes are POSIX")


def kvswitch(*args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(APP)}
    return subprocess.run(
        [sys.executable, "-m", "kvswitch", *args], env=env, capture_output=True, text=True, timeout=timeout
    )


def add_profile(*targets: str) -> None:
    args = ["profile", "add", "p", "--kind", "openai-compatible", "--base-url", "https://a.b/v1"]
    args += ["--api-key", KEY, *(a for t in targets for a in ("--target", t))]
    assert kvswitch(*args).returncode == 0


def identity(path: Path) -> tuple[int, int, int, int, int]:
    info = os.lstat(path)
    return info.st_ino, info.st_mode, info.st_rdev, info.st_size, info.st_mtime_ns


@needs_posix
@pytest.mark.skipif(not IS_ROOT, reason=NOT_APPLICABLE + "mknod needs root (the test below runs instead)")
def test_a_device_behind_the_settings_symlink_is_refused_and_untouched(fake_home: Path) -> None:
    add_profile("claude", "bash")
    device = fake_home / "d"
    os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # a second /dev/null
    before = identity(device)
    (fake_home / ".claude").mkdir()
    (fake_home / ".claude" / "settings.json").symlink_to(device)
    result = kvswitch("use", "p")
    assert result.returncode != 0
    assert "character device" in result.stderr
    assert "settings.json" in result.stderr
    assert identity(device) == before
    assert stat.S_ISCHR(os.lstat(device).st_mode)
    assert not (fake_home / ".bashrc").exists(), "nothing may be written when one target is refused"
    assert KEY not in result.stderr + result.stdout


@needs_posix
@pytest.mark.skipif(IS_ROOT, reason=NOT_APPLICABLE + "as root a regression could replace /dev/null; "
                    "root uses mknod above")
def test_dev_null_through_a_symlink_is_refused_without_writing(fake_home: Path) -> None:
    """Only without root: then even a regression cannot replace /dev/null (no write access to /dev)."""
    add_profile("claude")
    (fake_home / ".claude").mkdir()
    (fake_home / ".claude" / "settings.json").symlink_to("/dev/null")
    before = identity(Path("/dev/null"))[:3]
    result = kvswitch("use", "p")
    assert result.returncode != 0
    assert "character device" in result.stderr
    assert identity(Path("/dev/null"))[:3] == before


@needs_posix
def test_a_fifo_at_a_target_path_fails_fast_everywhere(fake_home: Path) -> None:
    add_profile("claude", "bash")
    fifo = fake_home / ".bashrc"
    os.mkfifo(fifo)
    for args in (("use", "p"), ("use", "p", "--dry-run"), ("doctor",), ("log", "scan", str(fifo)),
                 ("log", "scan", "--jsonl", str(fifo))):
        result = kvswitch(*args, timeout=20)  # the old code blocked here forever
        assert result.returncode != 0, args
        assert "FIFO" in result.stderr + result.stdout, (args, result.stderr, result.stdout)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert not (fake_home / ".claude" / "settings.json").exists()
    (fake_home / ".claude").mkdir()
    settings = fake_home / ".claude" / "settings.json"
    os.mkfifo(settings)
    result = kvswitch("import", "claude", timeout=20)
    assert result.returncode != 0
    assert "FIFO" in result.stderr


@needs_posix
def test_a_socket_or_directory_at_a_target_path_is_refused(fake_home: Path, tmp_path: Path) -> None:
    engine = make_engine()
    path = fake_home / ".claude" / "settings.json"
    path.parent.mkdir()
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(path))
        with pytest.raises(FileAccessError, match="socket"):
            engine.apply(local_profile())
    path.unlink()
    path.mkdir()
    with pytest.raises(FileAccessError, match="is a directory"):
        engine.apply(local_profile())
    assert path.is_dir()


def test_a_read_only_rc_file_is_refused_not_rewritten(fake_home: Path) -> None:
    add_profile("claude", "bash")
    rc = fake_home / ".bashrc"
    rc.write_text("# mine\n")
    rc.chmod(0o444)
    result = kvswitch("use", "p")
    assert result.returncode != 0
    assert "read-only" in result.stderr
    assert rc.read_text() == "# mine\n"
    assert stat.S_IMODE(rc.stat().st_mode) == 0o444
    assert not (fake_home / ".claude" / "settings.json").exists(), "the settings written first are put back"


def test_files_holding_the_key_end_at_0600_and_the_report_says_so(fake_home: Path) -> None:
    add_profile("claude", "bash")
    rc = fake_home / ".bashrc"
    rc.write_text("# mine\n")
    rc.chmod(0o644)
    result = kvswitch("use", "p")
    assert result.returncode == 0, result.stderr
    settings = fake_home / ".claude" / "settings.json"
    assert stat.S_IMODE(settings.stat().st_mode) == 0o600, "a new settings.json with the key is 0600"
    assert stat.S_IMODE(rc.stat().st_mode) == 0o600
    assert f"{rc}: mode 0644 -> 0600" in result.stdout
    kvswitch("undo")
    assert stat.S_IMODE(rc.stat().st_mode) == 0o644, "undo gives the old mode back with the old content"


def test_doctor_reports_group_readable_target_files_holding_a_key(fake_home: Path) -> None:
    add_profile("claude")
    assert kvswitch("use", "p").returncode == 0
    settings = fake_home / ".claude" / "settings.json"
    settings.chmod(0o640)
    result = kvswitch("doctor")
    assert f"{settings}: mode 640 lets other users read your keys" in result.stdout


def test_a_hard_linked_file_is_refused_and_both_names_keep_their_content(fake_home: Path) -> None:
    engine = make_engine()
    rc = fake_home / ".bashrc"
    rc.write_text("# mine\n")
    other = fake_home / "dotfiles-bashrc"
    os.link(rc, other)
    with pytest.raises(KvSwitchError, match="hard links"):
        engine.apply(local_profile(targets=["claude", "bash"]))
    assert rc.read_text() == other.read_text() == "# mine\n"
    assert os.stat(rc).st_ino == os.stat(other).st_ino
    assert not (fake_home / ".claude" / "settings.json").exists()


def test_a_symlinked_key_file_is_tightened_through_the_link(fake_home: Path) -> None:
    repo = fake_home / "dotfiles" / "settings.json"
    repo.parent.mkdir()
    repo.write_text(json.dumps({"theme": "dark"}))
    repo.chmod(0o644)
    link = fake_home / ".claude" / "settings.json"
    link.parent.mkdir()
    link.symlink_to(repo)
    result = make_engine().apply(local_profile())
    assert link.is_symlink()
    assert stat.S_IMODE(repo.stat().st_mode) == 0o600
    assert any(note.startswith(f"{link}: mode 0644 -> 0600") for note in result.notes)
