"""Readers that follow a server's log: a file (``tail -F``), the newest file of a dated directory tree
(a server writing one log per day), a child process, or a systemd unit.

Every reader is polled: ``read_lines()`` never blocks, returns the complete lines that arrived since the
last call (a partial last line is held back until its newline comes) and updates ``status``, a short
text for the panel. Nothing here raises on a missing file, a permission problem or a dead process: the
status says what is wrong and the next poll tries again. Files are only ever opened read-only.
"""

from __future__ import annotations

import os
import re
import stat as stat_module
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Protocol

from kvswitch.logs.process import JournaldSource, ProcessSource
from kvswitch.logs.text import LineSplitter

if TYPE_CHECKING:  # the profile model needs pydantic, which ``log scan`` in a script never has to load
    from kvswitch.core.models import LogSource

#: most bytes one poll reads, so a huge backlog never freezes the caller
READ_BUDGET = 4 << 20
#: how far back from the end the tail search goes before giving up on finding more line starts
TAIL_SEARCH_BYTES = 16 << 20


class LogReader(Protocol):
    status: str

    def read_lines(self) -> list[str]: ...

    def close(self) -> None: ...


def tail_offset(handle: BinaryIO, lines: int, size: int | None = None) -> int:
    """Offset where the last ``lines`` lines of a file start, found by reading backwards from the end."""
    if size is None:
        size = os.fstat(handle.fileno()).st_size
    if lines <= 0 or size == 0:
        return size
    block = 64 << 10
    end = size
    handle.seek(max(size - 1, 0))
    wanted = lines + (0 if handle.read(1) == b"\n" else -1)  # the final newline closes the last line
    floor = max(size - TAIL_SEARCH_BYTES, 0)
    while end > floor:
        start = max(end - block, floor)
        handle.seek(start)
        data = handle.read(end - start)
        count = data.count(b"\n")
        if count > wanted:
            pos = len(data)
            for _ in range(wanted + 1):
                pos = data.rfind(b"\n", 0, pos)
            return start + pos + 1
        wanted -= count
        end = start
    if floor == 0:
        return 0
    handle.seek(floor)
    handle.readline()  # start at a line boundary
    return handle.tell()


def read_tail(path: str | Path, lines: int) -> list[str]:
    """The last ``lines`` lines of a file, without reading the rest of it."""
    with Path(path).open("rb") as handle:
        handle.seek(tail_offset(handle, lines))
        splitter = LineSplitter()
        out = splitter.feed(handle.read())
        out.extend(splitter.finish())
        return out[-lines:] if lines else []


class NotRegularFile(OSError):
    """A log path that names a FIFO, a device or a socket: opening one for reading could wait forever
    (a FIFO with no writer) or read without end (``/dev/zero``), so it is never followed."""


def _open_regular(path: Path) -> BinaryIO:
    """``path`` opened for reading, only when it is a regular file: looked at first (opening a device
    alone can act on it), opened without waiting (``O_NONBLOCK``: a FIFO put there meanwhile opens at
    once) and looked at again on what was opened."""
    _check_regular(os.stat(path).st_mode, path)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        _check_regular(os.fstat(fd).st_mode, path)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _check_regular(mode: int, path: Path) -> None:
    if stat_module.S_ISREG(mode):
        return
    if stat_module.S_ISDIR(mode):
        raise IsADirectoryError(f"{path} is a directory")
    raise NotRegularFile("a FIFO" if stat_module.S_ISFIFO(mode) else
                         "a device" if stat_module.S_ISCHR(mode) or stat_module.S_ISBLK(mode) else "a socket")


class FileFollower:
    """``tail -F``: waits for the file, follows renames (rotation), truncation and re-creation."""

    def __init__(self, path: str | Path, *, start_at_end: bool = True, tail_lines: int = 200) -> None:
        self.path = Path(path).expanduser()
        self.start_at_end = start_at_end
        self.tail_lines = tail_lines
        self.status = f"waiting for file {self.path}"
        #: most bytes one poll reads (a caller on a tight time budget sets less: a 4 MB read of short
        #: lines takes ~0.1 s to split, with the GIL held)
        self.read_budget = READ_BUDGET
        self._handle: BinaryIO | None = None
        self._identity: tuple[int, int] | None = None
        self._position = 0
        self._opened_once = False
        self._splitter = LineSplitter()

    def read_lines(self) -> list[str]:
        if self._handle is None and not self._open():
            return []
        assert self._handle is not None
        try:
            data = self._handle.read(self.read_budget)
        except OSError as exc:
            self._drop(f"cannot read {self.path}: {exc.strerror or exc}")
            return []
        if data:
            self._position += len(data)
            return self._splitter.feed(data)
        self._check_replaced()
        return []

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def _open(self) -> bool:
        try:
            handle = _open_regular(self.path)
        except FileNotFoundError:
            self.status = f"waiting for file {self.path}"
            return False
        except PermissionError:
            self.status = f"permission denied: {self.path}"
            return False
        except IsADirectoryError:
            self.status = f"not a file (a directory): {self.path}"
            return False
        except NotRegularFile as exc:
            self.status = f"not a regular file ({exc}): {self.path}"
            return False
        except OSError as exc:
            self.status = f"cannot open {self.path}: {exc.strerror or exc}"
            return False
        stat = os.fstat(handle.fileno())
        start = 0
        if not self._opened_once and self.start_at_end:
            start = tail_offset(handle, self.tail_lines, stat.st_size)
        handle.seek(start)
        self._handle = handle
        self._identity = (stat.st_dev, stat.st_ino)
        self._position = start
        self._opened_once = True
        self._splitter = LineSplitter()
        self.status = f"following {self.path}"
        return True

    def _check_replaced(self) -> None:
        """At the end of the data: was the file rotated, truncated, removed?"""
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            self._drop(f"waiting for file {self.path} (it was removed)")
            return
        except OSError as exc:
            self.status = f"cannot check {self.path}: {exc.strerror or exc}"
            return
        if (stat.st_dev, stat.st_ino) != self._identity:
            self._drop(f"waiting for file {self.path} (it was replaced)")
            self._open()
        elif stat.st_size < self._position:
            assert self._handle is not None
            self._handle.seek(0)
            self._position = 0
            self._splitter = LineSplitter()
            self.status = f"following {self.path} (truncated, reading from the start)"

    def _drop(self, status: str) -> None:
        self.close()
        self._splitter = LineSplitter()
        self._opened_once = True  # a file that appears later is read from its start
        self.status = status


_NUMBERS = re.compile(r"\d+")


def _newest_key(path: Path) -> tuple[float, list[int], str]:
    """Newest first by modification time, then by the numbers in the name (``2026-06-03.2.log``)."""
    try:
        mtime = path.stat().st_mtime
    except OSError:
        mtime = 0.0
    return (mtime, [int(n) for n in _NUMBERS.findall(path.name)], path.name)


class DirectoryFollower:
    """Follows the newest ``*.log`` in a dated tree such as a server's ``server-logs/YYYY-MM/``."""

    def __init__(self, directory: str | Path, *, start_at_end: bool = True, tail_lines: int = 200,
                 pattern: str = "*.log") -> None:
        self.directory = Path(directory).expanduser()
        self.pattern = pattern
        self.start_at_end = start_at_end
        self.tail_lines = tail_lines
        self.status = f"waiting for a log file in {self.directory}"
        self.read_budget = READ_BUDGET  # the file follower's (``FileFollower.read_budget``)
        self._follower: FileFollower | None = None
        self._polls = 0

    def newest(self) -> Path | None:
        candidates: list[Path] = []
        for depth_pattern in (self.pattern, f"*/{self.pattern}"):
            try:
                candidates.extend(p for p in self.directory.glob(depth_pattern) if p.is_file())
            except OSError:
                continue
        return max(candidates, key=_newest_key) if candidates else None

    def read_lines(self) -> list[str]:
        lines: list[str] = []
        if self._follower is None or self._polls % 10 == 0:
            lines.extend(self._switch_if_newer())
        self._polls += 1
        if self._follower is not None:
            if not lines:
                lines.extend(self._follower.read_lines())
            self.status = self._follower.status
        return lines

    def close(self) -> None:
        if self._follower is not None:
            self._follower.close()
            self._follower = None

    def _switch_if_newer(self) -> list[str]:
        try:
            os.listdir(self.directory)
        except PermissionError:
            self.status = f"permission denied: {self.directory}"
            return []
        except NotADirectoryError:
            self.status = f"not a directory: {self.directory}"
            return []
        except OSError:
            self.status = f"waiting for directory {self.directory}"
            return []
        newest = self.newest()
        if newest is None:
            self.status = f"waiting for a log file in {self.directory}"
            return []
        if self._follower is not None and self._follower.path == newest:
            return []
        first = self._follower is None
        if self._follower is not None:
            drained = self._follower.read_lines()
            if drained:  # finish the old file first, one bounded poll at a time
                self._polls = -1  # and look again at the next poll
                return drained
            self._follower.close()
        self._follower = FileFollower(newest, start_at_end=first and self.start_at_end,
                                      tail_lines=self.tail_lines)
        self._follower.read_budget = self.read_budget
        return []


def open_source(source: LogSource, *, start_at_end: bool = True, tail_lines: int = 200) -> LogReader:
    """A reader for a profile's log source. Nothing is started or opened until the first poll,
    except a ``command`` source, which starts its process here."""
    if source.kind == "file":
        assert source.path is not None
        return FileFollower(source.path, start_at_end=start_at_end, tail_lines=tail_lines)
    if source.kind == "directory":
        assert source.path is not None
        return DirectoryFollower(source.path, start_at_end=start_at_end, tail_lines=tail_lines)
    if source.kind == "command":
        assert source.command is not None
        return ProcessSource(source.command)
    assert source.unit is not None
    return JournaldSource(source.unit, tail_lines=tail_lines if start_at_end else 0)
