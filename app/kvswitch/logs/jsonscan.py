"""``log scan --jsonl`` text straight from the scanner: the native block scanner writes the JSON lines of
whole requests itself, so a request of a big log never becomes a Python object at all.

The text is byte for byte what ``format_records`` writes for the same records (tested): the native side
writes the blocks, ``format_records`` the events of the line path in between, in file order. Without the
native scanner (not built, or ``KVSWITCH_NATIVE_SCAN=0``) the records are formatted in Python.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from kvswitch.logs import fastscan
from kvswitch.logs.jsonl import Totals, format_records, json_text
from kvswitch.logs.parsers import server_name
from kvswitch.logs.scan import fast_path_applies, general_batches, open_log
from kvswitch.logs.tracker import MAX_PENDING, RequestTracker


def jsonl_file(path: str | Path, kind_hint: str | None, totals: Totals) -> Iterator[bytes]:
    """The ``log scan --jsonl`` lines of a whole log file, counted into ``totals``, in big pieces.

    The file is opened right away: a missing or unreadable file raises ``FileAccessError`` here.
    """
    handle = open_log(path)

    def generate() -> Iterator[bytes]:
        with handle:
            if fast_path_applies(handle, kind_hint):
                yield from jsonl_chunks(handle, RequestTracker(server_name(kind_hint)), totals)
                return
            handle.seek(0)
            server = server_name(kind_hint)
            for batch in general_batches(handle, kind_hint):
                yield format_records(batch, server, totals).encode()

    return generate()


def jsonl_chunks(
    handle: BinaryIO, tracker: RequestTracker, totals: Totals, *, stop: int | None = None, line_no: int = 1,
    flush: bool = True,
) -> Iterator[bytes]:
    """The JSON lines of every request from the handle's position to ``stop`` (or the end), one bytes
    object per chunk, counted into ``totals``; ``line_no`` is the number of the first line read, and
    ``flush`` also writes the requests still open at the end (only the end of the file does that)."""
    native = fastscan.native_scan
    server = tracker.server
    if native is None:
        for batch in fastscan.scan_records(handle, tracker, stop=stop, line_no=line_no, flush=flush):
            yield format_records(batch, server, totals).encode()
        return
    server_json = json_text(server).encode()
    pending = tracker.pending
    for data, end in fastscan.read_chunks(handle, stop):
        parts: list[bytes] = []
        pos = 0
        while pos < end:
            text, pos, line_no, until, counts = native(data, pos, end, line_no, pending, MAX_PENDING,
                                                       server_json)
            if text:
                parts.append(text)
                totals.add_counts(counts)
            if until > pos:
                records: fastscan.Records = []
                fastscan.read_lines(data, pos, until, line_no, tracker, records)
                line_no += data.count(b"\n", pos, until)
                pos = until
                if records:
                    parts.append(format_records(records, server, totals, remember=False).encode())
        if parts:
            chunk = b"".join(parts)
            totals.keep_tail(chunk)
            yield chunk
    if flush and (done := tracker.flush(line_no - 1)):
        text = format_records(list(done), server, totals, remember=False).encode()
        totals.keep_tail(text)
        yield text
