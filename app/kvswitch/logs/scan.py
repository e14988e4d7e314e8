"""Whole-file scanning, fast: the CLI's ``log scan`` and the panel's "load history" run here.

Feeding every line of a multi-GB log through the classifiers costs microseconds per line. Instead the
file is read in big byte chunks and a compiled bytes regex picks out only the llama.cpp slot lines that
carry numbers; their groups become facts for the same ``RequestTracker`` the live path uses, so both
paths agree (tested). Files whose sampled content is not plain llama.cpp text (JSON era, LM Studio,
vLLM, SGLang, Ollama, 2023 lines) take the general path, which is slower but understands everything.
Memory stays bounded by the chunk size whatever the file size.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from kvswitch.core.errors import FileAccessError
from kvswitch.logs.analyzer import LogAnalyzer
from kvswitch.logs.model import CacheEvent
from kvswitch.logs.parsers import anchors_for, family, server_name
from kvswitch.logs.parsers.base import What
from kvswitch.logs.parsers.llama_cpp import reason_for
from kvswitch.logs.text import MAX_LINE_BYTES, decode_line
from kvswitch.logs.tracker import RequestTracker

CHUNK_BYTES = 4 << 20
PROMPT_EVAL = What.PROMPT_EVAL
GEN_EVAL = What.GEN_EVAL
_SAMPLE_BYTES = 256 << 10

_FAST = re.compile(
    rb"id +(\d+) \| task (-?\d+) \| *(?:"
    rb"(prompt eval time) = +([\d.]+) ms / +(\d+) tokens"  # 3-5
    rb"|(eval time) = +[\d.]+ ms / +(\d+) (?:tokens|runs)"  # 6-7
    rb"|(stop processing): n_(?:tokens|past) = (\d+), truncated = (\d+)"  # 8-10
    rb"|(selected slot) by (LCP similarity|LRU|id)(?:, (?:f_)?sim_best = ([\d.]+))?"  # 11-13
    rb"|(?:cached )?n_tokens = (\d+), (memory_seq_rm) \["  # 14-15
    rb"|(kv cache rm) \[(\d+), end\)"  # 16-17
    rb"|(?:new prompt|prompt tokenized), n_ctx_slot = \d+, n_keep = \d+, "
    rb"(?:task\.)?n_(?:prompt_)?tokens = (\d+)"  # 18
    rb"|(need to evaluate at least 1 token)"  # 19
    rb"|(processing task)"  # 20
    rb"|(forcing full prompt re-processing|failed to truncate tokens|(?:erased invalidated|failed to restore"
    rb"|restored) context checkpoint|clearing (?:slot|prompt) with|failed to load prompt from cache"
    rb"|reusing chunk with size|cache reuse is not supported)"  # 21
    rb"|(\r?\n))"  # 22: an empty print_timing header; its block follows on unprefixed lines
)
_CONTINUATION = re.compile(
    rb"[ \t]*(?:(prompt eval time) = +([\d.]+) ms / +(\d+) tokens|(eval time) = +[\d.]+ ms / +(\d+) tokens"
    rb"|total time|graphs reused|draft acceptance)[^\n]*\n"
)
_HOW = {b"LCP similarity": "lcp", b"LRU": "lru", b"id": "id"}
#: text only the general path understands; one of these in the sampled parts sends the file there
_FOREIGN = re.compile(
    rb"^\s*\{|slot \d+ ?: in cache|tokens in cache\)|LMCache|#cached-token|loading cache slot"
    rb"|Prompt cache restore"
    rb"|\[(?:DEBUG|INFO|WARN|WARNING|ERROR)\]|\[GIN\]|Prefix cache hit rate|level=\w+ source=",
    re.MULTILINE,
)


def scan_file(path: str | Path, kind_hint: str | None = None) -> Iterator[CacheEvent]:
    """Every completed request in a log file, in order.

    The file is opened (read-only) right away, so a missing or unreadable file raises
    ``FileAccessError`` here, before any output, not at the first iteration.
    """
    path = Path(path)
    try:
        handle = path.open("rb")
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            handle.close()
            raise FileAccessError(path, "not a regular file")
    except IsADirectoryError:
        raise FileAccessError(path, "is a directory, not a log file") from None
    except OSError as exc:
        raise FileAccessError(path, exc.strerror or str(exc)) from None
    return _scan_open(handle, kind_hint)


def _scan_open(handle: BinaryIO, kind_hint: str | None) -> Iterator[CacheEvent]:
    with handle:
        if family(kind_hint) in (family("llama.cpp"), family(None)) and not _looks_foreign(handle):
            yield from _scan_fast(handle, kind_hint)
        else:
            handle.seek(0)
            yield from _scan_general(handle, kind_hint)


def _looks_foreign(handle: BinaryIO) -> bool:
    """Sample the start, middle and end: any text of another format means the general path."""
    size = os.fstat(handle.fileno()).st_size
    for offset in (0, max(size // 2 - _SAMPLE_BYTES // 2, 0), max(size - _SAMPLE_BYTES, 0)):
        handle.seek(offset)
        if _FOREIGN.search(handle.read(_SAMPLE_BYTES)):
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
    analyzer = LogAnalyzer(kind_hint)
    anchors = tuple(anchor.encode() for anchor in anchors_for(kind_hint))
    line_no = 0
    for line_no, raw in enumerate(iter_lines(handle), 1):
        if any(anchor in raw for anchor in anchors) or raw.startswith(b"{") or b"[" in raw[:40]:
            yield from analyzer.feed(decode_line(raw), line_no).events
        else:
            analyzer.note_line(line_no)
    yield from analyzer.flush()


def _scan_fast(handle: BinaryIO, kind_hint: str | None) -> Iterator[CacheEvent]:
    tracker = RequestTracker(server_name(kind_hint))
    fact = tracker.slot_fact
    lines_before = 0  # lines in the chunks already scanned
    carry = b""
    while True:
        block: bytes = handle.read(CHUNK_BYTES)
        if not block:
            data, carry = carry + b"\n" if carry else b"", b""
            if not data:
                break
        else:
            data = carry + block if carry else block
            cut = data.rfind(b"\n") + 1
            if cut == 0:
                carry = data[-MAX_LINE_BYTES:]  # a runaway line: keep only its tail
                continue
            data, carry = data[:cut], data[cut:]
        counted_to = 0
        line_no = lines_before + 1
        for m in _FAST.finditer(data):
            start = m.start()
            line_no += data.count(b"\n", counted_to, start)
            counted_to = start
            branch = m.lastindex
            slot = int(m.group(1))
            task = int(m.group(2))
            if branch == 22:  # an empty print_timing header: the block follows on unprefixed lines
                pos = m.end()
                while cont := _CONTINUATION.match(data, pos):
                    line_no += 1
                    counted_to = pos
                    if cont.group(1):
                        yield from fact(PROMPT_EVAL, slot, task, int(cont.group(3)), None,
                                        float(cont.group(2)), None, line_no)
                    elif cont.group(4):
                        yield from fact(GEN_EVAL, slot, task, int(cont.group(5)), None, None, None, line_no)
                    pos = cont.end()
                continue
            what, n1, n2, ms, note = _decode(m, branch)
            yield from fact(what, slot, task, n1, n2, ms, note, line_no)
        lines_before += data.count(b"\n")
        if not block:
            break
    yield from tracker.flush(lines_before)


_Decoded = tuple[What, int | None, int | None, float | None, str | None]


def _decode(m: re.Match[bytes], branch: int | None) -> _Decoded:
    """(what, n1, n2, ms, note) of one fast-regex match, by which alternative matched."""
    if branch == 5:
        return PROMPT_EVAL, int(m.group(5)), None, float(m.group(4)), None
    if branch == 7:
        return GEN_EVAL, int(m.group(7)), None, None, None
    if branch == 10:
        return What.RELEASE, int(m.group(9)), int(m.group(10)), None, None
    if branch in (12, 13):
        sim = m.group(13)
        return What.SELECT, round(float(sim) * 1000) if sim else None, None, None, _HOW[m.group(12)]
    if branch == 15:
        return What.CACHED, int(m.group(14)), None, None, None
    if branch == 17:
        return What.CACHED, int(m.group(17)), None, None, None
    if branch == 18:
        return What.PROMPT_SIZE, int(m.group(18)), None, None, None
    if branch == 19:
        return What.FULL_HIT, None, None, None, None
    if branch == 20:
        return What.START, None, None, None, None
    return What.REASON, None, None, None, reason_for(m.group(21).decode())
