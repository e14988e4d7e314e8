"""Followers on real files, directories and processes: tail -F semantics, bad input, clean stops."""

from __future__ import annotations

import hashlib
import os
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from kvswitch.core.models import LogSource
from kvswitch.logs import classify_line
from kvswitch.logs.process import JournaldSource, ProcessSource
from kvswitch.logs.sources import DirectoryFollower, FileFollower, open_source, read_tail, tail_offset
from kvswitch.logs.text import MAX_LINE_BYTES


def _append(path: Path, data: bytes) -> None:
    with path.open("ab") as handle:
        handle.write(data)


def test_waits_for_the_file_then_holds_back_a_partial_line(tmp_path: Path) -> None:
    path = tmp_path / "server.log"
    follower = FileFollower(path)
    assert follower.read_lines() == []
    assert follower.status == f"waiting for file {path}"
    _append(path, b"one\ntwo\nthr")
    assert follower.read_lines() == ["one", "two"]
    assert follower.status == f"following {path}"
    assert follower.read_lines() == []
    _append(path, b"ee\n")
    assert follower.read_lines() == ["three"]
    follower.close()


def test_existing_big_file_starts_from_its_tail(tmp_path: Path) -> None:
    path = tmp_path / "big.log"
    path.write_bytes(b"".join(b"line %d\n" % i for i in range(20000)))
    follower = FileFollower(path, tail_lines=3)
    assert follower.read_lines() == ["line 19997", "line 19998", "line 19999"]
    _append(path, b"new\n")
    assert follower.read_lines() == ["new"]
    follower.close()
    assert FileFollower(path, start_at_end=False).read_lines()[0] == "line 0"


def test_tail_offset_with_and_without_final_newline(tmp_path: Path) -> None:
    path = tmp_path / "t.log"
    path.write_bytes(b"a\nb\nc\n")
    assert read_tail(path, 2) == ["b", "c"]
    assert read_tail(path, 10) == ["a", "b", "c"]
    path.write_bytes(b"a\nb\nc")
    assert read_tail(path, 2) == ["b", "c"]
    with path.open("rb") as handle:
        assert tail_offset(handle, 0) == 5
    path.write_bytes(b"")
    assert read_tail(path, 5) == []


def test_follows_rotation_by_rename(tmp_path: Path) -> None:
    path = tmp_path / "server.log"
    path.write_bytes(b"old 1\n")
    follower = FileFollower(path, start_at_end=False)
    assert follower.read_lines() == ["old 1"]
    _append(path, b"old 2\n")
    path.rename(tmp_path / "server.log.1")
    path.write_bytes(b"new 1\n")
    lines = follower.read_lines()  # the rest of the old file first
    lines += follower.read_lines()
    lines += follower.read_lines()
    assert lines == ["old 2", "new 1"]
    follower.close()


def test_follows_copy_truncate(tmp_path: Path) -> None:
    path = tmp_path / "server.log"
    path.write_bytes(b"a long first line\nsecond\n")
    follower = FileFollower(path, start_at_end=False)
    assert len(follower.read_lines()) == 2
    with path.open("r+b") as handle:
        handle.truncate(0)
    _append(path, b"fresh\n")
    assert follower.read_lines() == []  # notices the truncation
    assert "truncated" in follower.status
    assert follower.read_lines() == ["fresh"]
    follower.close()


def test_deleted_then_recreated(tmp_path: Path) -> None:
    path = tmp_path / "server.log"
    path.write_bytes(b"x\n")
    follower = FileFollower(path, start_at_end=False)
    assert follower.read_lines() == ["x"]
    path.unlink()
    assert follower.read_lines() == []
    assert follower.status == f"waiting for file {path} (it was removed)"
    assert follower.read_lines() == []
    path.write_bytes(b"y\n")
    assert follower.read_lines() == ["y"]
    follower.close()


def test_permission_denied_is_a_status_not_a_crash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "secret.log"
    path.write_bytes(b"x\n")
    if os.geteuid() != 0:
        path.chmod(0)
    else:  # root reads anything: the refusal itself has to be simulated
        real_open = Path.open

        def refuse(self: Path, *args: object, **kwargs: object):  # type: ignore[no-untyped-def]
            if self == path:
                raise PermissionError(13, "Permission denied", str(self))
            return real_open(self, *args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(Path, "open", refuse)
        real_os_open = os.open

        def refuse_fd(target: object, flags: int, *args: object, **kwargs: object) -> int:
            if Path(str(target)) == path:  # the follower opens without waiting (``O_NONBLOCK``)
                raise PermissionError(13, "Permission denied", str(target))
            return real_os_open(target, flags, *args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(os, "open", refuse_fd)
    follower = FileFollower(path)
    assert follower.read_lines() == []
    assert follower.status == f"permission denied: {path}"


def test_a_directory_in_place_of_the_file(tmp_path: Path) -> None:
    follower = FileFollower(tmp_path)
    assert follower.read_lines() == []
    assert "directory" in follower.status


def test_bad_bytes_and_runaway_lines(tmp_path: Path) -> None:
    path = tmp_path / "bad.log"
    huge = b"x" * (10 * 1024 * 1024)
    path.write_bytes(b"nul\x00byte\n\xff\xfe invalid utf-8 \xc3\n" + huge + b"\nafter\n")
    before = (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns)
    follower = FileFollower(path, start_at_end=False)
    lines: list[str] = []
    for _ in range(10):
        lines += follower.read_lines()
    assert lines[0] == "nul\x00byte"
    assert "\ufffd" in lines[1]
    assert len(lines[2].encode()) == MAX_LINE_BYTES
    assert lines[3:] == ["after"]
    for line in lines:
        classify_line(line)  # never raises
    follower.close()
    assert (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns) == before


def test_directory_follows_the_newest_dated_file(tmp_path: Path) -> None:
    logs = tmp_path / "server-logs"
    follower = DirectoryFollower(logs, start_at_end=False)
    assert follower.read_lines() == []
    assert "waiting for directory" in follower.status
    (logs / "2026-05").mkdir(parents=True)
    old = logs / "2026-05" / "2026-05-31.1.log"
    old.write_bytes(b"may\n")
    os.utime(old, (time.time() - 100, time.time() - 100))
    (logs / "2026-06").mkdir()
    current = logs / "2026-06" / "2026-06-01.1.log"
    current.write_bytes(b"june 1\n")
    assert follower.read_lines() == ["june 1"]
    assert follower.status == f"following {current}"
    newer = logs / "2026-06" / "2026-06-01.2.log"
    newer.write_bytes(b"june 1 second file\n")
    os.utime(newer, (time.time() + 5, time.time() + 5))
    _append(current, b"last of first\n")
    lines: list[str] = []
    for _ in range(12):
        lines += follower.read_lines()
    assert lines == ["last of first", "june 1 second file"]
    follower.close()


def _python(code: str) -> list[str]:
    return [sys.executable, "-c", textwrap.dedent(code)]


def _drain(source: ProcessSource, line: str | None = None, status: str | None = None) -> list[str]:
    """Poll until a line containing ``line`` arrives or the status contains ``status``."""
    lines: list[str] = []
    deadline = time.monotonic() + 10.0
    while time.monotonic() < deadline:
        lines += source.read_lines()
        if (status and status in source.status) or (line and lines and line in lines[-1]):
            break
        time.sleep(0.02)
    return lines


def test_process_output_merged_and_exit_code() -> None:
    source = ProcessSource(_python("""
        import sys
        print("to stdout", flush=True)
        print("to stderr", file=sys.stderr, flush=True)
        sys.exit(3)
    """))
    assert source.status.startswith("running (pid")
    lines = _drain(source, status="process exited")
    assert sorted(lines) == ["to stderr", "to stdout"]
    assert source.status == "process exited (code 3)"
    source.close()


def test_stop_escalates_to_kill_and_leaves_no_zombie() -> None:
    source = ProcessSource(_python("""
        import signal, subprocess, sys, time
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        print("child", child.pid, flush=True)
        time.sleep(60)
    """), stop_timeout=0.5)
    lines = _drain(source, line="child")
    grandchild = int(lines[-1].split()[1])
    pid = source.pid
    assert pid is not None
    code = source.stop()
    assert code == -9
    assert source.status == "stopped (exit code -9)"
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # already reaped: no zombie
    for _ in range(100):
        if not psutil.pid_exists(grandchild) or psutil.Process(grandchild).status() == psutil.STATUS_ZOMBIE:
            break
        time.sleep(0.05)
    else:
        pytest.fail("the server's own child survived the stop")


def test_polite_server_stops_on_sigterm() -> None:
    source = ProcessSource(_python("""
        import time
        print("ready", flush=True)
        time.sleep(60)
    """))
    _drain(source, line="ready")
    assert source.stop() == -15


def test_missing_command_is_a_status() -> None:
    source = ProcessSource(["kvswitch-no-such-server-binary", "--port", "1"])
    assert source.status == "cannot start: command not found: kvswitch-no-such-server-binary"
    assert source.read_lines() == []
    source.close()


def test_journald_runs_journalctl_follow_for_the_unit(tmp_path: Path) -> None:
    fake = tmp_path / "journalctl"
    fake.write_text(f"#!{sys.executable}\nimport sys\nprint(' '.join(sys.argv[1:]), flush=True)\n")
    fake.chmod(0o755)
    source = JournaldSource("ollama.service", tail_lines=50, journalctl=str(fake))
    lines = _drain(source, line="-u")
    assert lines == ["-f -o cat -n 50 -u ollama.service"]
    _drain(source, status="ended")
    assert source.status == "journalctl for ollama.service ended: process exited (code 0)"
    source.close()


def test_open_source_builds_the_right_reader(tmp_path: Path) -> None:
    file_reader = open_source(LogSource(kind="file", path=str(tmp_path / "a.log")))
    assert isinstance(file_reader, FileFollower)
    dir_reader = open_source(LogSource(kind="directory", path=str(tmp_path)))
    assert isinstance(dir_reader, DirectoryFollower)
    command = open_source(LogSource(kind="command", command=[sys.executable, "-c", "print('hi')"]))
    assert isinstance(command, ProcessSource)
    assert _drain(command, line="hi") == ["hi"]
    command.close()
