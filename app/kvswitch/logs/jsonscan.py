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
from kvswitch.logs.blocks import NativeScan
from kvswitch.logs.jsonl import Totals, format_records, json_text
from kvswitch.logs.parsers import server_name
from kvswitch.logs.scan import fast_path_applies, open_log, record_batches
from kvswitch.logs.tracker import RequestTracker


def jsonl_file(path: str | Path, kind_hint: str | None, totals: Totals) -> Iterator[bytes]:
    """The ``log scan --jsonl`` lines of a whole log file, counted into ``totals``, in big pieces.

    The file is opened right away: a missing or unreadable file raises ``FileAccessError`` here.
    """
    handle = open_log(path)

    def generate() -> Iterator[bytes]:
        with handle:
            fast = fast_path_applies(handle, kind_hint)
            tracker = RequestTracker(server_name(kind_hint))
            native = fastscan.native_scan
            if fast and native is not None:
                yield from jsonl_chunks(handle, tracker, totals, native)
                return
            for batch in record_batches(handle, kind_hint, fast):
                yield format_records(batch, tracker.server, totals).encode()

    return generate()


def jsonl_chunks(
    handle: BinaryIO, tracker: RequestTracker, totals: Totals, native: NativeScan
) -> Iterator[bytes]:
    """The JSON lines of every request from the handle's position to the end of the file, one bytes object
    per chunk, counted into ``totals``."""
    server_json = json_text(tracker.server).encode()
    line_no = 1
    for data, end in fastscan.read_chunks(handle):
        parts: list[bytes] = []
        steps = fastscan.native_steps(data, end, line_no, tracker, native, server_json)
        for (text, *_, counts), records, line_no in steps:  # noqa: B007 - the line after the last step
            if text:
                parts.append(text)
                totals.add_counts(counts)
            if records:
                parts.append(format_records(records, tracker.server, totals, remember=False).encode())
        if parts:
            chunk = b"".join(parts)
            totals.keep_tail(chunk)
            yield chunk
    if done := tracker.flush(line_no - 1):
        text = format_records(list(done), tracker.server, totals, remember=False).encode()
        totals.keep_tail(text)
        yield text
