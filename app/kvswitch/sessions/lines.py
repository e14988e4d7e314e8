"""Read what a client appended to a JSONL file since the last pass, one bounded line at a time.

A file is remembered by size, mtime, inode and the byte offset after its last complete line. The next
pass reads only from that offset; a line still being written (no newline yet) is left for the pass
after; a file that shrank or is another file now (a new inode) is read again from the start. Lines are
streamed in 1 MiB reads, and a line longer than ``MAX_LINE_BYTES`` is skipped with a note, so memory
stays bounded whatever the file holds. Files are opened read-only and non-blocking (a FIFO in the
folder never hangs the pass) and must be regular files; nothing here ever writes a client's file.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: longer than any real line seen (a Claude line with a pasted image is ~2 MB); above it a line is skipped
MAX_LINE_BYTES = 8 << 20
_CHUNK = 1 << 20


@dataclass(frozen=True)
class FileMark:
    """What the index remembers of a file between passes."""

    size: int
    mtime_ns: int
    inode: int
    offset: int


class NotReadable(Exception):
    """The path is not a regular file we may read (a FIFO, a device, a symlink loop, gone): the message
    says which, for the note on that file."""


def start_offset(found: os.stat_result, mark: FileMark | None) -> int | None:
    """Where to start reading: the remembered offset, 0 when the file is new, shrank or was replaced,
    None when nothing changed since the last pass."""
    if mark is None or found.st_ino != mark.inode or found.st_size < mark.offset or found.st_size < mark.size:
        return 0
    if found.st_size == mark.size and found.st_mtime_ns == mark.mtime_ns:
        return None
    return mark.offset


def open_regular(path: Path) -> tuple[int, os.stat_result]:
    """A read-only descriptor of ``path`` and its status, refusing anything but a regular file."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise NotReadable(f"cannot open it: {exc.strerror or exc}") from None
    try:
        found = os.fstat(fd)
    except OSError as exc:
        os.close(fd)
        raise NotReadable(f"cannot read its status: {exc.strerror or exc}") from None
    if not stat.S_ISREG(found.st_mode):
        os.close(fd)
        raise NotReadable("not a regular file (a FIFO, socket or device): skipped")
    return fd, found


def read_lines(
    fd: int, offset: int, note: Callable[[str], None], max_line: int = MAX_LINE_BYTES
) -> Iterator[tuple[int, bytes]]:
    """Each complete line from ``offset`` as (offset after it, its bytes without the newline).

    The trailing part without a newline is not yielded: the caller keeps the offset of the last line
    yielded and the next pass starts there. A line over ``max_line`` bytes is skipped (noted) without
    being held in memory.
    """
    position = offset
    pending = bytearray()
    skipping_from: int | None = None
    while True:
        try:
            chunk = os.pread(fd, _CHUNK, position + len(pending) if skipping_from is None else position)
        except OSError as exc:
            note(f"reading stopped at byte {position}: {exc.strerror or exc}")
            return
        if not chunk:
            return
        if skipping_from is not None:
            cut = chunk.find(b"\n")
            if cut < 0:
                position += len(chunk)
                continue
            position += cut + 1
            note(
                f"a line of {position - skipping_from:,} bytes at byte {skipping_from:,} is longer than "
                f"{max_line >> 20} MB: skipped"
            )
            skipping_from = None
            yield position, b""
            continue
        start = 0
        buffer = pending + chunk if pending else chunk
        base = position
        while True:
            cut = buffer.find(b"\n", start)
            if cut < 0:
                break
            line = bytes(buffer[start:cut])
            start = cut + 1
            if len(line) > max_line:
                note(
                    f"a line of {len(line):,} bytes at byte {base + start - len(line) - 1:,} is longer "
                    f"than {max_line >> 20} MB: skipped"
                )
                line = b""
            yield base + start, line
        position = base + start
        rest = buffer[start:]
        if len(rest) > max_line:
            skipping_from = position
            position += len(rest)
            pending = bytearray()
        else:
            pending = bytearray(rest)


def parse_line(raw: bytes, note: Callable[[str], None]) -> dict[str, Any] | None:
    """A line as a JSON object, or None (noted) when it is not one. Bytes that are not UTF-8 are read
    with replacement characters (noted), so one bad byte in a pasted prompt never loses the call."""
    if not raw.strip():
        return None
    try:
        value = json.loads(raw)
    except UnicodeDecodeError:
        note("a line is not UTF-8 text: read with replacement characters")
        try:
            value = json.loads(raw.decode("utf-8", "replace"))
        except ValueError:
            note("a line is not JSON: skipped")
            return None
    except (ValueError, RecursionError):
        note("a line is not JSON: skipped")
        return None
    return value if isinstance(value, dict) else None
