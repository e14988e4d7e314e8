"""A sweep setting's server log on disk: masked, private, and bounded in size whatever the server prints.

A server started by ``kvswitch sweep`` may print without end (a debug flag, a loop of warnings): written
as it came, one setting made a 118 MB file in 15 s, GBs per setting, with the keys it printed in
clear and readable by every user. So the file keeps the first ``HEAD_BYTES`` of the output (the start-up,
where a failed start explains itself) and the last ``TAIL_BYTES`` (what came just before the stop or the
crash), says between them how much it left out, masks every line as the rest of KV Switch's output is
masked (the caller's ``mask``: ``core.redact`` and the known secrets), and is written 0600 in folders
made 0700, as the verify history is.
"""

from __future__ import annotations

import collections
import contextlib
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

#: what of the output the file keeps: its first and its last bytes
HEAD_BYTES = 4 * 1024 * 1024
TAIL_BYTES = 4 * 1024 * 1024
PRIVATE_FILE = 0o600
PRIVATE_FOLDER = 0o700


def private_folder(folder: Path, owned_levels: int = 2) -> None:
    """Create ``folder`` (and its missing parents) 0700; its last ``owned_levels`` levels, KV Switch's
    own (a sweep's folder and the folder of sweeps), are made 0700 if they existed already."""
    missing: list[Path] = []
    current = folder
    while not current.exists() and current != current.parent:
        missing.append(current)
        current = current.parent
    for path in reversed(missing):
        path.mkdir(mode=PRIVATE_FOLDER, exist_ok=True)
    if sys.platform != "win32":
        for path in [folder, *folder.parents][:owned_levels]:
            with contextlib.suppress(OSError):
                path.chmod(PRIVATE_FOLDER)


class CappedLog:
    """One setting's log file: the head written as it comes, the tail kept in memory until ``close``."""

    def __init__(self, path: Path, mask: Callable[[str], str], *, head_bytes: int = HEAD_BYTES,
                 tail_bytes: int = TAIL_BYTES) -> None:
        self.path = path
        self._mask = mask
        self._head_limit = head_bytes
        self._head_left = head_bytes
        self._tail_limit = tail_bytes
        self._tail: collections.deque[tuple[str, int]] = collections.deque()
        self._tail_bytes = 0
        self._dropped_lines = 0
        self._dropped_bytes = 0
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(path, flags, PRIVATE_FILE)
        if sys.platform != "win32":
            os.fchmod(fd, PRIVATE_FILE)  # an older log of the same name may have been readable by all
        self._file = os.fdopen(fd, "w", encoding="utf-8", errors="replace")

    def write_lines(self, lines: Iterable[str]) -> None:
        wrote = False
        for line in lines:
            size = len(line.encode("utf-8", "surrogateescape")) + 1
            if self._head_left >= size and not self._tail:
                self._head_left -= size
                self._file.write(self._mask(line) + "\n")
                wrote = True
                continue
            self._head_left = 0  # the head is full: from here on, only the tail is kept
            self._tail.append((line, size))
            self._tail_bytes += size
            while self._tail_bytes > self._tail_limit and len(self._tail) > 1:
                _old, old_size = self._tail.popleft()
                self._tail_bytes -= old_size
                self._dropped_lines += 1
                self._dropped_bytes += old_size
        if wrote:
            self._file.flush()  # the head is on disk while the server runs (a crash still has its start)

    def close(self) -> None:
        if self._file.closed:
            return
        with contextlib.suppress(OSError, ValueError):
            if self._dropped_lines:
                self._file.write(f"[KV Switch: {self._dropped_lines:,} lines dropped here "
                                 f"({self._dropped_bytes / 1e6:,.1f} MB): this log keeps the first "
                                 f"{_mib(self._head_limit)} and the last {_mib(self._tail_limit)} of the "
                                 "server's output]\n")
            for line, _size in self._tail:
                self._file.write(self._mask(line) + "\n")
        self._tail.clear()
        with contextlib.suppress(OSError):
            self._file.close()


def _mib(size: int) -> str:
    return f"{size / 2**20:g} MiB"
