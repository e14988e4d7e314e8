"""The byte-level llama.cpp scanner behind ``scan_file`` and ``log scan``.

Where the C extension is built, ``blocks.native_scan`` (``_native/walk.c``) reads the slot lines in file
order and assembles each request itself, one per slot, so interleaved slots and idle slots' housekeeping
lines cost no Python at all; a request becomes a ``Row`` tuple, or for ``--jsonl`` its JSON line. Where
it meets a fact it does not know for certain, it stops right before it, hands the requests open there to
the tracker (``RequestTracker.adopt``, in exactly the state the tracker would have built from the same
facts) and the line path below reads on to the next selection.

The line path: ``_LINE`` stops on single slot lines that carry a number the tracker needs (selection,
start, prompt size, cached tokens, timings, release, reasons), feeding the shared ``RequestTracker``
without building text or ``Fact`` objects. Without the extension, ``blocks.BLOCK`` takes an ordinary
request (slot selection .. release) in one regex match instead, and ``_LINE`` reads everything else.

The events are therefore those of ``LogAnalyzer`` (tested on every fixture, sample and generated log).
Every alternative of ``_LINE`` starts with a literal byte and ends with an empty marker group, so the
regex engine rejects a wrong alternative on its first byte and ``lastindex`` names the one that matched.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, BinaryIO

from kvswitch.logs.blocks import (
    BLOCK,
    FACT_STARTS_ANY_CASE,
    LOOKS_CONTINUED,
    QUIET,
    SELECT_TASK,
    Chunk,
    NativeScan,
    Row,
    block_row,
    native_scan,
    selection_slot_is,
    side_reason_slots,
)
from kvswitch.logs.blocks import native_bare_reason_lines as native_lines
from kvswitch.logs.model import CacheEvent, make_event
from kvswitch.logs.parsers.base import Fact, What, bounded, lazy_compile
from kvswitch.logs.parsers.llama_cpp import REASON_START, reason_for
from kvswitch.logs.text import MAX_LINE_BYTES
from kvswitch.logs.tracker import MAX_PENDING, RequestTracker

CHUNK_BYTES = 4 << 20
PROMPT_EVAL = What.PROMPT_EVAL
GEN_EVAL = What.GEN_EVAL
START = What.START
RELEASE = What.RELEASE

#: what the scanner hands on: an event of the general path or a ``Row`` of a whole block
Record = CacheEvent | Row
Records = list[Record]

_LINE = lazy_compile(
    bounded(
        rb"id +(\d+) \| task (-?\d+) \| *(?:"
        rb"processing task()"  # 3
        rb"|prompt eval time = +(\d+(?:\.\d+)?) ms / +(\d+) tokens()"  # 4-6
        rb"|eval time = +[\d.]+ ms / +(\d+) (?:tokens|runs)()"  # 7-8
        rb"|stop processing: n_(?:tokens|past) = (\d+), truncated = (\d+)()"  # 9-11
        rb"|selected slot by (LCP similarity|LRU|id)(?:, (?:f_)?sim_best = (\d+(?:\.\d+)?))?()"  # 12-14
        rb"|(?:cached )?n_tokens = (\d+), memory_seq_rm \[()"  # 15-16
        rb"|kv cache rm \[(\d+), end\)()"  # 17-18
        rb"|(?:new prompt|prompt tokenized), n_ctx_slot = \d+, n_keep = \d+, "
        rb"(?:task\.)?n_(?:prompt_)?tokens = (\d+)()"  # 19-20
        rb"|need to evaluate at least 1 token()"  # 21
        rb"|((?:" + REASON_START + rb")[^\n]*)()"  # 22-23
        rb"|\r?\n())"
    )  # 24: an empty print_timing header; its block follows on unprefixed lines
)
_CONTINUATION = lazy_compile(
    bounded(
        rb"[ \t]*(?:(prompt eval time) = +(\d+(?:\.\d+)?) ms / +(\d+) tokens"
        rb"|(eval time) = +[\d.]+ ms / +(\d+) tokens"
        rb"|total time|graphs reused|draft acceptance)[^\n]*\n"
    )
)
_EMPTY_HEADER = re.compile(rb"print_timings?: id +\d+ \| task -?\d+ \|[ \t]*\r?\n")
_HOW = {b"LCP similarity": "lcp", b"LRU": "lru", b"id": "id"}


def scan_llama(handle: BinaryIO, tracker: RequestTracker) -> Iterator[CacheEvent]:
    """Every event of a llama.cpp text log; memory is bounded by ``CHUNK_BYTES``."""
    server = tracker.server
    for batch in scan_records(handle, tracker):
        for record in batch:
            yield record if isinstance(record, CacheEvent) else row_event(server, record)


def row_event(server: str, row: Row) -> CacheEvent:
    slot, task, cached, new, prompt_ms, first, last, reason, _verdict = row
    return make_event(
        server=server,
        slot=slot,
        task=task,
        cached=cached,
        new=new,
        prompt_ms=prompt_ms,
        first_line=first,
        last_line=last,
        reason=reason,
    )


def scan_records(handle: BinaryIO, tracker: RequestTracker, *, blocks: bool = True) -> Iterator[list[Record]]:
    """Lists of records, one per chunk, from the handle's position to the end of the file, then the
    requests still open there; ``blocks=False`` keeps to the line-by-line path."""
    line_no = 1
    for data, end in read_chunks(handle):
        out: list[Record] = []
        line_no = _chunk(data, end, line_no, tracker, out, blocks, native_scan)
        if out:
            yield out
    done = tracker.flush(line_no - 1)
    if done:
        yield list(done)


def read_chunks(handle: BinaryIO) -> Iterator[tuple[bytearray, int]]:
    """``(data, end)`` from the handle's position to the end of the file: ``data[:end]`` is whole lines,
    never a timing header without its block; the file's last line counts even unterminated.

    ``data`` is one buffer, read into again for the next chunk: a caller is done with it when it asks for
    the next one (nothing keeps it: records hold numbers and decoded text). Reading in place spares a copy
    of every chunk and the fresh pages a new bytes object of 4 MB costs. Memory is bounded by
    ``CHUNK_BYTES`` (and ``MAX_LINE_BYTES`` for a runaway line)."""
    buf = bytearray(CHUNK_BYTES + MAX_LINE_BYTES + 1)
    filled = 0  # the carry: bytes of an unfinished line (or timing block) at the start of ``buf``
    while True:
        if filled + CHUNK_BYTES + 1 > len(buf):  # a long timing block held back: room for it and a chunk
            buf = buf[:filled] + bytearray(CHUNK_BYTES + 1 + len(buf))
        with memoryview(buf) as view:
            got = handle.readinto(view[filled : filled + CHUNK_BYTES]) or 0  # type: ignore[attr-defined]
        size = filled + got
        if not got:
            if size:
                if buf[size - 1] != 10:  # an unterminated last line counts
                    buf[size] = 10
                    size += 1
                yield buf, size
            return
        end = buf.rfind(b"\n", 0, size) + 1
        if end <= 0:  # a runaway line without end: keep only its tail
            keep = min(size, MAX_LINE_BYTES)
            buf[:keep] = buf[size - keep : size]
            filled = keep
            continue
        held = _open_timing_block(buf, end)
        if held == 0 and size < MAX_LINE_BYTES:
            filled = size  # only a timing header so far: wait for its block
            continue
        end = held or end
        yield buf, end
        filled = size - end
        buf[:filled] = buf[end:size]


def _open_timing_block(data: Chunk, end: int) -> int:
    """Start of a print_timing header among the last lines before ``end`` whose unprefixed block may
    continue in the next chunk (the block must be read with its header), else ``end``."""
    pos = end
    for _ in range(3):
        start = data.rfind(b"\n", 0, pos - 1) + 1
        if _EMPTY_HEADER.search(data, start, pos):
            return start
        if start == 0:
            break
        pos = start
    return end


def _chunk(
    data: Chunk,
    end: int,
    line_no: int,
    tracker: RequestTracker,
    out: list[Record],
    blocks: bool,
    native: NativeScan | None,
) -> int:
    """Every record of ``data[:end]`` (whole lines); ``line_no`` is the number of its first line, and
    the number of the line after them is returned.

    A block is taken whole only when the line-by-line path would end in the same state: its slot has
    nothing pending (else the selection would first finish that request) and the tracker is below its
    limit (else the selection would evict another request). Anything else goes line by line.
    """
    if not blocks:
        read_lines(data, 0, end, line_no, tracker, out)
        return line_no + data.count(b"\n", 0, end)
    if native is not None:
        return _chunk_native(data, end, line_no, tracker, out, native)
    pending = tracker.pending  # which slots are busy and how many
    count = data.count
    rfind = data.rfind
    find = data.find
    startswith = data.startswith
    quiet = QUIET.fullmatch
    select_task, select_len = SELECT_TASK, len(SELECT_TASK)
    bare = [line_start for line_start, _end, _reason in bare_reasons(data, 0, end)]  # almost always none
    pos = 0
    for m in BLOCK.finditer(data, 0, end):
        at, after = m.span()
        groups = m.groups()
        head = groups[2]
        slot = int(groups[3])
        start = rfind(b"\n", 0, at) + 1
        head_at = at - len(head) - select_len
        if not (
            head_at >= start
            and data[start] not in LOOKS_CONTINUED
            and startswith(select_task, at - select_len)
            and startswith(head, head_at)
            and find(b"|", start, head_at) < 0
        ) and not selection_slot_is(data, start, at, slot):
            continue
        if start > pos:
            if (
                quiet(data, pos, start) is None
                or (bare and any(pos <= at < start for at in bare))
                or any(side in pending for side in side_reason_slots(data, pos, start))
            ):
                read_lines(data, pos, start, line_no, tracker, out)
            line_no += count(b"\n", pos, start)
        pos = after
        lines = count(b"\n", start, pos)
        sides = side_reason_slots(data, start, pos)
        if (
            slot in pending
            or len(pending) >= MAX_PENDING
            or (bare and any(start <= at < pos for at in bare))
            or slot in sides
            or any(side in pending for side in sides)
        ):
            read_lines(data, start, pos, line_no, tracker, out)
        else:
            out.append(block_row(groups, slot, line_no, line_no + lines - 1))
        line_no += lines
    if pos < end:
        read_lines(data, pos, end, line_no, tracker, out)
        line_no += count(b"\n", pos, end)
    return line_no


def _chunk_native(
    data: Chunk, end: int, line_no: int, tracker: RequestTracker, out: list[Record], native: NativeScan
) -> int:
    """``_chunk`` with the block path in C (see ``native_steps``)."""
    steps = native_steps(data, end, line_no, tracker, native)
    for (rows, *_), records, line_no in steps:  # noqa: B007 - the line after the last step
        out += rows
        out += records
    return line_no


def native_steps(
    data: Chunk,
    end: int,
    line_no: int,
    tracker: RequestTracker,
    native: NativeScan,
    server_json: bytes | None = None,
) -> Iterator[tuple[tuple[Any, ...], Records, int]]:
    """Walk ``data[:end]`` (whole lines) with the native scanner, the line path reading what it hands
    back (a fact it leaves to the tracker, a reason line without a slot) from where it stopped. Each step
    is what the scanner returned (rows, or with ``server_json`` their JSON text and counts), the line
    path's records after it, and the number of the line that follows both."""
    pending = tracker.pending
    pos = 0
    while pos < end:
        found: tuple[Any, ...] = (
            native(data, pos, end, line_no, pending, MAX_PENDING)
            if server_json is None
            else native(data, pos, end, line_no, pending, MAX_PENDING, server_json)
        )
        pos, line_no, until, opened, last_slot = found[1:6]
        tracker.adopt(opened, last_slot)
        records: Records = []
        if until > pos:
            read_lines(data, pos, until, line_no, tracker, records)
            line_no += data.count(b"\n", pos, until)
            pos = until
        yield found, records, line_no


def bare_reasons(data: Chunk, start: int, end: int) -> list[tuple[int, int, str]]:
    """``(line start, line end, reason)`` of every reason line in ``data[start:end]`` that has no
    ``| task T |`` prefix (``srv load: - found better prompt ...``): the tracker gives it to the slot
    last seen, so it must be read in order with the slot lines around it, never inside a block."""
    found: list[tuple[int, int, str]] = []
    lines = _candidate_lines if native_lines is None else native_lines
    for line_start, line_end in lines(data, start, end):
        if reason := reason_for(data[line_start:line_end].decode("utf-8", "replace")):
            found.append((line_start, line_end, reason))
    return found


def _candidate_lines(data: Chunk, start: int, end: int) -> list[tuple[int, int]]:
    """``(start, end)`` of the lines of ``data[start:end]`` without ``| task `` that hold a reason start in
    any spelling (lower() keeps byte positions; ``reason_for`` then applies the patterns' case rules)."""
    folded = data[start:end].lower()
    found: set[tuple[int, int]] = set()
    for prefix in FACT_STARTS_ANY_CASE:
        at = folded.find(prefix)
        while at >= 0:
            line_start = folded.rfind(b"\n", 0, at) + 1
            line_end = folded.find(b"\n", at)
            line_end = len(folded) if line_end < 0 else line_end + 1
            if b"| task " not in data[start + line_start : start + line_end]:
                found.add((start + line_start, start + line_end))
            at = folded.find(prefix, line_end)
    return sorted(found)


def read_lines(
    data: Chunk, start: int, end: int, line_no: int, tracker: RequestTracker, out: list[Record]
) -> None:
    """Every fact of ``data[start:end]`` (whole lines); ``line_no`` is the number of its first line."""
    pos = start
    for line_start, line_end, reason in bare_reasons(data, start, end):
        _read_slot_lines(data, pos, line_start, line_no, tracker, out)
        line_no += data.count(b"\n", pos, line_start)
        out.extend(tracker.apply(Fact(What.REASON, note=reason), line_no))
        line_no += 1
        pos = line_end
    _read_slot_lines(data, pos, end, line_no, tracker, out)


def _read_slot_lines(
    data: Chunk, start: int, end: int, line_no: int, tracker: RequestTracker, out: list[Record]
) -> None:
    """``read_lines`` for text without bare reason lines: every fact is on a ``| task T |`` line."""
    fact = tracker.slot_fact
    count = data.count
    counted_to = start
    done: tuple[CacheEvent, ...]
    for m in _LINE.finditer(data, start, end):
        at = m.start()
        if at >= counted_to:
            line_no += count(b"\n", counted_to, at)
        else:  # a fact inside a timing block's lines, which the loop below already counted
            line_no -= count(b"\n", at, counted_to)
        counted_to = at
        branch = m.lastindex
        # the four lines every request prints come first: no call, no tuple
        if branch == 6:
            done = fact(
                PROMPT_EVAL,
                int(m.group(1)),
                int(m.group(2)),
                int(m.group(5)),
                None,
                float(m.group(4)),
                None,
                line_no,
            )
        elif branch == 8:
            done = fact(
                GEN_EVAL, int(m.group(1)), int(m.group(2)), int(m.group(7)), None, None, None, line_no
            )
        elif branch == 3:
            done = fact(START, int(m.group(1)), int(m.group(2)), None, None, None, None, line_no)
        elif branch == 11:
            done = fact(
                RELEASE,
                int(m.group(1)),
                int(m.group(2)),
                int(m.group(9)),
                int(m.group(10)),
                None,
                None,
                line_no,
            )
        elif branch == 24:  # an empty print_timing header: the block follows on unprefixed lines
            slot, task = int(m.group(1)), int(m.group(2))
            pos = m.end()
            while pos < end and (cont := _CONTINUATION.match(data, pos, end)):
                line_no += 1
                counted_to = pos
                if cont.group(1):
                    out.extend(
                        fact(
                            PROMPT_EVAL,
                            slot,
                            task,
                            int(cont.group(3)),
                            None,
                            float(cont.group(2)),
                            None,
                            line_no,
                        )
                    )
                elif cont.group(4):
                    out.extend(fact(GEN_EVAL, slot, task, int(cont.group(5)), None, None, None, line_no))
                pos = cont.end()
            continue
        else:
            what, n1, n2, ms, note = _decode(m, branch)
            if what is What.REASON and note is None:
                continue  # a reason's start without the rest of its pattern: no fact, as in the parser
            done = fact(what, int(m.group(1)), int(m.group(2)), n1, n2, ms, note, line_no)
        if done:
            out.extend(done)


_Decoded = tuple[What, int | None, int | None, float | None, str | None]


def _decode(m: re.Match[bytes], branch: int | None) -> _Decoded:
    """(what, n1, n2, ms, note) of one line match, by which alternative matched."""
    if branch == 3:
        return What.START, None, None, None, None
    if branch == 6:
        return PROMPT_EVAL, int(m.group(5)), None, float(m.group(4)), None
    if branch == 8:
        return GEN_EVAL, int(m.group(7)), None, None, None
    if branch == 11:
        return What.RELEASE, int(m.group(9)), int(m.group(10)), None, None
    if branch == 14:
        sim = m.group(13)
        return What.SELECT, round(float(sim) * 1000) if sim else None, None, None, _HOW[m.group(12)]
    if branch == 16:
        return What.CACHED, int(m.group(15)), None, None, None
    if branch == 18:
        return What.CACHED, int(m.group(17)), None, None, None
    if branch == 20:
        return What.PROMPT_SIZE, int(m.group(19)), None, None, None
    if branch == 21:
        return What.FULL_HIT, None, None, None, None
    return What.REASON, None, None, None, reason_for(m.group(22).decode("utf-8", "replace"))
