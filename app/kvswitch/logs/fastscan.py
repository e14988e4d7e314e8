"""The byte-level llama.cpp scanner behind ``scan_file``.

One compiled bytes regex walks big chunks of the file and stops only on slot lines that carry a number
the tracker needs (selection, start, prompt size, cached tokens, timings, release, reasons); each match's
groups go straight to the shared ``RequestTracker`` without building text or ``Fact`` objects. The
events are therefore those of ``LogAnalyzer`` (tested on every fixture and sample).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import BinaryIO

from kvswitch.logs.model import CacheEvent
from kvswitch.logs.parsers.base import What
from kvswitch.logs.parsers.llama_cpp import reason_for
from kvswitch.logs.text import MAX_LINE_BYTES
from kvswitch.logs.tracker import RequestTracker

CHUNK_BYTES = 4 << 20
PROMPT_EVAL = What.PROMPT_EVAL
GEN_EVAL = What.GEN_EVAL
START = What.START
RELEASE = What.RELEASE

_LINE = re.compile(
    rb"id +(\d+) \| task (-?\d+) \| *(?:"
    rb"(processing task)"  # 3
    rb"|(prompt eval time) = +(\d+(?:\.\d+)?) ms / +(\d+) tokens"  # 4-6
    rb"|(eval time) = +[\d.]+ ms / +(\d+) (?:tokens|runs)"  # 7-8
    rb"|(stop processing): n_(?:tokens|past) = (\d+), truncated = (\d+)"  # 9-11
    rb"|(selected slot) by (LCP similarity|LRU|id)(?:, (?:f_)?sim_best = (\d+(?:\.\d+)?))?"  # 12-14
    rb"|(?:cached )?n_tokens = (\d+), (memory_seq_rm) \["  # 15-16
    rb"|(kv cache rm) \[(\d+), end\)"  # 17-18
    rb"|(?:new prompt|prompt tokenized), n_ctx_slot = \d+, n_keep = \d+, "
    rb"(?:task\.)?n_(?:prompt_)?tokens = (\d+)"  # 19
    rb"|(need to evaluate at least 1 token)"  # 20
    rb"|(forcing full prompt re-processing|failed to truncate tokens|(?:erased invalidated|failed to restore"
    rb"|restored) context checkpoint|clearing (?:slot|prompt) with|failed to load prompt from cache"
    rb"|reusing chunk with size|cache reuse is not supported)"  # 21
    rb"|(\r?\n))"  # 22: an empty print_timing header; its block follows on unprefixed lines
)
_CONTINUATION = re.compile(
    rb"[ \t]*(?:(prompt eval time) = +(\d+(?:\.\d+)?) ms / +(\d+) tokens"
    rb"|(eval time) = +[\d.]+ ms / +(\d+) tokens"
    rb"|total time|graphs reused|draft acceptance)[^\n]*\n"
)
_EMPTY_HEADER = re.compile(rb"print_timings?: id +\d+ \| task -?\d+ \|[ \t]*\r?\n")
_HOW = {b"LCP similarity": "lcp", b"LRU": "lru", b"id": "id"}

def scan_llama(handle: BinaryIO, tracker: RequestTracker) -> Iterator[CacheEvent]:
    """Every event of a llama.cpp text log; memory is bounded by ``CHUNK_BYTES``."""
    line_no = 1  # number of the line at the start of the data not yet processed
    carry = b""
    while True:
        block = handle.read(CHUNK_BYTES)
        data = carry + block if carry else block
        if not block:
            if data:
                data = data if data.endswith(b"\n") else data + b"\n"  # an unterminated last line counts
                yield from _lines(data, 0, len(data), line_no, tracker)
                line_no += data.count(b"\n")
            break
        end = data.rfind(b"\n") + 1
        if end <= 0:
            carry = data[-MAX_LINE_BYTES:]  # a runaway line without end: keep only its tail
            continue
        held = _open_timing_block(data, end)
        if held == 0 and len(data) < MAX_LINE_BYTES:
            carry = data  # only a timing header so far: wait for its block
            continue
        end = held or end
        yield from _lines(data, 0, end, line_no, tracker)
        line_no += data.count(b"\n", 0, end)
        carry = data[end:]
    yield from tracker.flush(line_no - 1)


def _open_timing_block(data: bytes, end: int) -> int:
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


def _lines(
    data: bytes, start: int, end: int, line_no: int, tracker: RequestTracker
) -> Iterator[CacheEvent]:
    """Every fact of ``data[start:end]``; ``line_no`` is the number of its first line."""
    fact = tracker.slot_fact
    count = data.count
    counted_to = start
    for m in _LINE.finditer(data, start, end):
        at = m.start()
        line_no += count(b"\n", counted_to, at)
        counted_to = at
        branch = m.lastindex
        # the four lines every request prints come first: no call, no tuple
        if branch == 6:
            done = fact(PROMPT_EVAL, int(m.group(1)), int(m.group(2)), int(m.group(6)), None,
                        float(m.group(5)), None, line_no)
        elif branch == 8:
            done = fact(GEN_EVAL, int(m.group(1)), int(m.group(2)), int(m.group(8)), None, None, None,
                        line_no)
        elif branch == 3:
            done = fact(START, int(m.group(1)), int(m.group(2)), None, None, None, None, line_no)
        elif branch == 11:
            done = fact(RELEASE, int(m.group(1)), int(m.group(2)), int(m.group(10)), int(m.group(11)), None,
                        None, line_no)
        elif branch == 22:  # an empty print_timing header: the block follows on unprefixed lines
            slot, task = int(m.group(1)), int(m.group(2))
            pos = m.end()
            while pos < end and (cont := _CONTINUATION.match(data, pos, end)):
                line_no += 1
                counted_to = pos
                if cont.group(1):
                    yield from fact(PROMPT_EVAL, slot, task, int(cont.group(3)), None, float(cont.group(2)),
                                    None, line_no)
                elif cont.group(4):
                    yield from fact(GEN_EVAL, slot, task, int(cont.group(5)), None, None, None, line_no)
                pos = cont.end()
            continue
        else:
            what, n1, n2, ms, note = _decode(m, branch)
            done = fact(what, int(m.group(1)), int(m.group(2)), n1, n2, ms, note, line_no)
        if done:
            yield from done


_Decoded = tuple[What, int | None, int | None, float | None, str | None]


def _decode(m: re.Match[bytes], branch: int | None) -> _Decoded:
    """(what, n1, n2, ms, note) of one line match, by which alternative matched."""
    if branch == 3:
        return What.START, None, None, None, None
    if branch == 6:
        return PROMPT_EVAL, int(m.group(6)), None, float(m.group(5)), None
    if branch == 8:
        return GEN_EVAL, int(m.group(8)), None, None, None
    if branch == 11:
        return What.RELEASE, int(m.group(10)), int(m.group(11)), None, None
    if branch in (13, 14):
        sim = m.group(14)
        return What.SELECT, round(float(sim) * 1000) if sim else None, None, None, _HOW[m.group(13)]
    if branch == 16:
        return What.CACHED, int(m.group(15)), None, None, None
    if branch == 18:
        return What.CACHED, int(m.group(18)), None, None, None
    if branch == 19:
        return What.PROMPT_SIZE, int(m.group(19)), None, None, None
    if branch == 20:
        return What.FULL_HIT, None, None, None, None
    return What.REASON, None, None, None, reason_for(m.group(21).decode())
