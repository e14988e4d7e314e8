"""``log scan --jsonl`` on several cores: a big plain llama.cpp log is cut into pieces scanned at once.

Boundary rule. A piece starts at the start of a ``selected slot by`` line (the first one at or after
every ``PIECE_BYTES``): a new request begins there and no timing block can be cut in two. Each worker
scans its piece with an empty request tracker, so its result is exact only if the tracker of the
whole-file scan is empty at that point too, i.e. if no request was still open at the end of the
previous piece. The previous piece's worker reports the requests still open at its end; when there
are some (slots that overlap, a log cut mid-request), that piece is scanned again in order, starting
from exactly those requests. The output is therefore always the sequential scan's, byte for byte
(tested with random piece sizes on real captures and on interleaved multi-slot logs); overlapping
slots only cost speed.

Line numbers: a worker reads its piece, counts its lines and publishes the count in shared memory
before it scans; it numbers its lines from the sum of the counts of all earlier pieces (handed out
earlier, so published by then or very soon). Memory per worker is bounded by the piece size.

Only processes started with ``fork`` are used (they inherit the loaded code at no cost); where fork is
missing, the file is small, or ``KVSWITCH_SCAN_WORKERS=1``, the scan stays in this process.
"""

from __future__ import annotations

import io
import multiprocessing
import os
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from kvswitch.core.errors import KvSwitchError
from kvswitch.logs.blocks import SELECT_HEAD
from kvswitch.logs.jsonl import Totals
from kvswitch.logs.jsonscan import jsonl_chunks
from kvswitch.logs.parsers import server_name
from kvswitch.logs.scan import fast_path_applies, open_log
from kvswitch.logs.tracker import PendingRequest, RequestTracker

#: about how much of the file one worker scans at a time
PIECE_BYTES = 16 << 20
#: below this size one process is faster than starting others
MIN_PARALLEL_BYTES = 64 << 20
#: how far past each nominal cut a selection line is looked for
_CUT_WINDOW = 1 << 20

OpenRequests = dict[int | None, PendingRequest]

_line_counts: Any = None  # shared array of per-piece line counts, set before the workers fork


@dataclass(slots=True)
class PieceResult:
    text: bytes
    totals: Totals
    open_requests: OpenRequests  # requests still open at the end of the piece (whole-file lines)


def worker_count() -> int:
    """Cores this process may use, or ``$KVSWITCH_SCAN_WORKERS`` (``1``: never start other processes)."""
    chosen = os.environ.get("KVSWITCH_SCAN_WORKERS", "")
    if chosen.isdigit() and int(chosen) > 0:
        return int(chosen)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def scan_jsonl_parallel(
    path: str | Path, kind_hint: str | None, write: Callable[[bytes], object], *,
    workers: int | None = None, piece_bytes: int | None = None, min_bytes: int | None = None,
) -> Totals | None:
    """Write the JSON lines of every request of a big plain llama.cpp log; ``None`` (nothing written)
    when this file is better scanned in one process (small, another format, no ``fork``, one core)."""
    workers = workers or worker_count()
    if workers < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return None
    with open_log(path) as handle:
        size = os.fstat(handle.fileno()).st_size
        if size < (MIN_PARALLEL_BYTES if min_bytes is None else min_bytes):
            return None
        if not fast_path_applies(handle, kind_hint):
            return None
        pieces = plan_pieces(handle, size, piece_bytes or PIECE_BYTES)
    if len(pieces) < 2:
        return None
    return _run(str(path), kind_hint, pieces, workers, write)


def plan_pieces(handle: BinaryIO, size: int, piece_bytes: int) -> list[tuple[int, int]]:
    """(start, stop) byte ranges covering the file, each starting at a selection line (see the rule)."""
    cuts = [0]
    for nominal in range(piece_bytes, size, piece_bytes):
        if nominal <= cuts[-1]:
            continue
        cut = _cut_at_or_after(handle, nominal)
        if cut is not None and cut > cuts[-1]:
            cuts.append(cut)
    cuts.append(size)
    return [(start, stop) for start, stop in zip(cuts, cuts[1:], strict=False) if stop > start]


def _cut_at_or_after(handle: BinaryIO, offset: int) -> int | None:
    """Start of the first whole ``selected slot by`` line starting at or after ``offset``."""
    handle.seek(offset)
    window = handle.read(_CUT_WINDOW)
    at = 0
    while (at := window.find(b"selected slot by", at)) >= 0:
        newline = window.rfind(b"\n", 0, at)
        if newline >= 0 and SELECT_HEAD.fullmatch(window, newline + 1, at):
            return offset + newline + 1
        at += 1
    return None


def _run(
    path: str, kind_hint: str | None, pieces: list[tuple[int, int]], workers: int,
    write: Callable[[bytes], object],
) -> Totals:
    global _line_counts
    context = multiprocessing.get_context("fork")
    _line_counts = context.Array("q", [-1] * len(pieces), lock=False)
    totals = Totals()
    last = len(pieces) - 1
    # an executor, not a Pool: a worker that dies (killed, out of memory) breaks it loudly instead of
    # leaving its result to be waited for forever
    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            waiting: deque[Future[PieceResult]] = deque()
            submitted = 0
            still_open: OpenRequests = {}
            for index, (start, stop) in enumerate(pieces):
                while submitted < len(pieces) and len(waiting) < workers + 1:
                    begin, end = pieces[submitted]
                    waiting.append(pool.submit(
                        scan_piece, path, kind_hint, submitted, begin, end, submitted == last, {}))
                    submitted += 1
                result = waiting.popleft().result()
                if still_open:  # the worker began with no open request, but some were: scan it again
                    result = scan_piece(path, kind_hint, index, start, stop, index == last, still_open)
                write(result.text)
                totals.merge(result.totals)
                still_open = result.open_requests
    except BrokenProcessPool as exc:
        raise KvSwitchError(
            f"{path}: a scan worker process died; run again with KVSWITCH_SCAN_WORKERS=1 (one process)"
        ) from exc
    finally:
        _line_counts = None
    return totals


def scan_piece(
    path: str, kind_hint: str | None, index: int, start: int, stop: int, flush: bool,
    open_requests: OpenRequests,
) -> PieceResult:
    """JSON lines of ``[start, stop)``, beginning with ``open_requests`` (in a worker or not)."""
    counts = _line_counts
    with open(path, "rb") as handle:
        handle.seek(start)
        piece = handle.read(stop - start)
    if counts[index] < 0:  # published first, so that the pieces after this one wait as little as possible
        counts[index] = piece.count(b"\n") + (1 if piece and not piece.endswith(b"\n") else 0)
    tracker = RequestTracker(server_name(kind_hint))
    tracker.resume(open_requests)
    totals = Totals()
    text = b"".join(jsonl_chunks(io.BytesIO(piece), tracker, totals, line_no=1 + _lines_before(counts, index),
                                 flush=flush))
    return PieceResult(text, totals, dict(tracker.pending))


def _lines_before(counts: Any, index: int) -> int:
    """Lines of all pieces before ``index``. Those were handed out first, to workers that count their
    lines before anything else, so their counts are there or come within one piece's read."""
    total = 0
    for earlier in range(index):
        while (lines := counts[earlier]) < 0:
            time.sleep(0.0005)
        total += lines
    return total
