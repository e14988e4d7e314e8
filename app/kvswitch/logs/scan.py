"""Whole-file scanning, fast: the CLI's ``log scan`` and the panel's "load history" run here.

Feeding every line of a multi-GB log through the classifiers costs microseconds per line. Instead the
file is read in big byte chunks and a compiled bytes regex picks out only the slot lines that carry
numbers, in the one text format it reads (``FAST_FORMAT``); their groups become facts for the same
``RequestTracker`` the live path uses, so both paths agree (tested). Files whose sampled content holds
text only the general path understands (each format's ``GENERAL_ONLY``: other formats, and the slot-line
format's JSON and older eras) take the general path, which is slower but understands everything.
Memory stays bounded by the chunk size whatever the file size.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from kvswitch.core.errors import FileAccessError
from kvswitch.logs.fastscan import CHUNK_BYTES, Record, scan_llama, scan_records
from kvswitch.logs.model import CacheEvent
from kvswitch.logs.parsers import FAST_FORMAT, anchors_for, family, general_only, server_name
from kvswitch.logs.text import MAX_LINE_BYTES, decode_line
from kvswitch.logs.tracker import RequestTracker

_SAMPLE_BYTES = 256 << 10
#: a ``--log-jsonl`` message line: no clock field, so without an anchor it carries no fact at all
_JSONL_LOG = b'{"type":"log",'

#: text only the general path understands, as each format declares it; one match in the sampled parts
#: sends the file there. ``--log-jsonl`` lines stay on the fast path: each message is one classic text
#: line (with its ``id S | task T |`` prefix) that the byte scanner reads inside the JSON; a message with
#: a newline inside (a slot prefix carried over to unprefixed parts) is left to the general path.
_FOREIGN = general_only()


def scan_file(path: str | Path, kind_hint: str | None = None) -> Iterator[CacheEvent]:
    """Every completed request in a log file, in order.

    The file is opened (read-only) right away, so a missing or unreadable file raises
    ``FileAccessError`` here, before any output, not at the first iteration.
    """
    return _scan_open(open_log(path), kind_hint)


def scan_batches(path: str | Path, kind_hint: str | None = None) -> Iterator[list[Record]]:
    """``scan_file`` in per-chunk batches, whole requests of plain slot-line text left as ``Row`` tuples
    (server ``server_name(kind_hint)``): what ``format_records`` turns into ``log scan --jsonl`` lines."""
    return _batches_open(open_log(path), kind_hint)


def open_log(path: str | Path) -> BinaryIO:
    """The log opened for binary reading, or a ``FileAccessError`` that says why not."""
    path = Path(path)
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer; the check below then refuses it
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
        handle = os.fdopen(os.open(path, flags), "rb")
        mode = os.fstat(handle.fileno()).st_mode
        if not stat.S_ISREG(mode):
            handle.close()
            if stat.S_ISDIR(mode):
                raise IsADirectoryError
            raise FileAccessError(path, "not a regular file (a FIFO, device or socket)")
    except IsADirectoryError:
        raise FileAccessError(path, "is a directory, not a log file") from None
    except OSError as exc:
        raise FileAccessError(path, exc.strerror or str(exc)) from None
    return handle


def fast_path_applies(handle: BinaryIO, kind_hint: str | None) -> bool:
    """Whether the byte-level slot-line scanner reads this file (else the general path does)."""
    return family(kind_hint) in ((FAST_FORMAT,), family(None)) and not _looks_foreign(handle)


def _scan_open(handle: BinaryIO, kind_hint: str | None) -> Iterator[CacheEvent]:
    with handle:
        if fast_path_applies(handle, kind_hint):
            yield from _scan_fast(handle, kind_hint)
        else:
            handle.seek(0)
            yield from _scan_general(handle, kind_hint)


def _batches_open(handle: BinaryIO, kind_hint: str | None) -> Iterator[list[Record]]:
    with handle:
        yield from record_batches(handle, kind_hint, fast_path_applies(handle, kind_hint))


def record_batches(handle: BinaryIO, kind_hint: str | None, fast: bool) -> Iterator[list[Record]]:
    """The records of an open log from its start, by the fast path or (``fast=False``) the general one
    in lists of 4096 events; ``fast`` is ``fast_path_applies(handle, kind_hint)``."""
    if fast:
        yield from scan_records(handle, RequestTracker(server_name(kind_hint)))
        return
    handle.seek(0)
    batch: list[Record] = []
    for event in _scan_general(handle, kind_hint):
        batch.append(event)
        if len(batch) >= 4096:
            yield batch
            batch = []
    if batch:
        yield batch


def _looks_foreign(handle: BinaryIO) -> bool:
    """Sample the start, middle and end: any text of another format means the general path.

    Only whole lines of a sample are searched. A sample that began inside a line once made ``\\A{``
    match the middle of a ``fit_memory_breakdown`` record, so a ``--log-jsonl`` log of a size that put
    a ``{`` at the last sample's start took the general path: 200 MB in a minute instead of a second.
    """
    size = os.fstat(handle.fileno()).st_size
    for offset in (0, max(size // 2 - _SAMPLE_BYTES // 2, 0), max(size - _SAMPLE_BYTES, 0)):
        handle.seek(offset)
        sample = handle.read(_SAMPLE_BYTES)
        if offset > 0:
            sample = sample[sample.find(b"\n") + 1 :] if b"\n" in sample else b""
        if offset + _SAMPLE_BYTES < size:
            sample = sample[: sample.rfind(b"\n") + 1]  # the cut last line is another sample's
        if _FOREIGN.search(sample):
            return True
    handle.seek(0)
    return False


def iter_lines(handle: BinaryIO, chunk_bytes: int = CHUNK_BYTES) -> Iterator[bytes]:
    """Lines of a binary stream without their newline, each cut to ``MAX_LINE_BYTES`` while reading."""
    carry = b""
    skipping = False  # inside an overlong line whose kept part was already yielded
    while True:
        block: bytes = handle.read(chunk_bytes)
        if not block:
            break
        data = carry + block if carry else block
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end < 0:
                break
            if not skipping:
                yield data[start:min(end, start + MAX_LINE_BYTES)]
            skipping = False
            start = end + 1
        carry = data[start:]
        if len(carry) > MAX_LINE_BYTES:
            if not skipping:
                yield carry[:MAX_LINE_BYTES]
            skipping = True
            carry = b""
    if carry and not skipping:
        yield carry


def _scan_general(handle: BinaryIO, kind_hint: str | None) -> Iterator[CacheEvent]:
    from kvswitch.logs.analyzer import LogAnalyzer  # noqa: PLC0415 - only files of other formats need it

    analyzer = LogAnalyzer(kind_hint)
    anchors = tuple(anchor.encode() for anchor in anchors_for(kind_hint))
    line_no = 0
    for line_no, raw in enumerate(iter_lines(handle), 1):
        if any(anchor in raw for anchor in anchors) or (
            raw.startswith(b"{") and not raw.startswith(_JSONL_LOG)  # 2024 JSON lines carry a clock
        ) or b"[" in raw[:40]:
            yield from analyzer.feed(decode_line(raw), line_no).events
        else:
            analyzer.note_line(line_no)
    yield from analyzer.flush()


def _scan_fast(handle: BinaryIO, kind_hint: str | None) -> Iterator[CacheEvent]:
    yield from scan_llama(handle, RequestTracker(server_name(kind_hint)))
