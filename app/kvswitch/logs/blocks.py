"""Whole llama-server requests in one regex match: the fast scanner's common case without the native walk.

An ordinary request is one slot's run of lines from ``selected slot by ...`` to ``stop processing``:
processing task, optionally the prompt size / full-hit / cached-tokens lines (``-lv 4``), the prompt and
generation timings, the release. ``BLOCK`` matches such a run whole; ``-lv 4`` restating the cached tokens
after every batch of a long prompt stays one block, whose cached tokens are the smallest statement, as in
the tracker. It walks from ``|`` to ``|`` (pipe-less
lines, such as server lines and sampler parameters, can never carry a fact and are skipped in one step, and
so are pipes of other text such as prompt text in a slots-debug dump) and every ``| task T |`` it passes
must open either a harmless slot line (one that starts with none of ``FACT_STARTS``, the texts the line
regex can read a fact from, reason starts in any case) or the next fact of the block, in the order
llama-server prints them; every fact line repeats the ``id S |`` text and task of the first one, and
``block_slot`` checks the selection line's slot. The line-by-line regex would therefore find exactly the
facts the block names, in the same order, and ``block_row`` gives exactly the event ``RequestTracker``
assembles from them (tested against the line-by-line path). An idle slot's reason printed with ``task -1``
(``clearing prompt with 0 tokens``) is passed over too; ``fastscan._chunk`` then sends the block to the line
path if that slot is one the tracker is assembling, or the block's own (``side_reason_slots``). Anything else
(another slot's fact in between, a reason of the block, another order) makes the match fail, and those
lines go through the line-by-line path.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, overload

from kvswitch.core.verdicts import (
    FULL_HIT as _FULL_HIT,
)
from kvswitch.core.verdicts import (
    HIT,
    HIT_RATIO,
    MISS,
    MISS_RATIO,
    NOT_CACHED_MIN_SIM,
    PARTIAL,
)
from kvswitch.core.verdicts import (
    LRU_HIT as _LRU_HIT,
)
from kvswitch.core.verdicts import (
    NOT_CACHED as _NOT_CACHED,
)
from kvswitch.core.verdicts import (
    PREFIX as _PREFIX,
)
from kvswitch.core.verdicts import (
    TRUNCATED as _TRUNCATED,
)
from kvswitch.logs.parsers.base import bounded, lazy_compile
from kvswitch.logs.parsers.llama_cpp import REASON_PREFIXES

if TYPE_CHECKING:
    from kvswitch.logs.tracker import Adopted

#: the text the scanners read: a chunk of the file (``fastscan.read_chunks`` reads into one buffer)
Chunk = bytes | bytearray
#: (slot, task, cached, new, prompt_ms, first_line, last_line, reason, verdict) of one whole request
Row = tuple[int, int, int, int, float, int, int, str | None, str]

#: what may start a fact after ``| task T |`` in ``fastscan._LINE`` (a superset of its alternatives' literal
#: starts, tested): a slot line that starts with none of these, nor ends right there, is harmless
FACT_STARTS = (
    b"processing task",
    b"prompt eval time",
    b"eval time",
    b"stop processing",
    b"selected slot",
    b"n_tokens",
    b"cached ",
    b"kv cache rm",
    b"new prompt",
    b"prompt tokenized",
    b"need to evaluate",
)
#: the reason starts of the grammar, in any case (a superset of the case rules ``_LINE`` applies to them)
FACT_STARTS_ANY_CASE = tuple(prefix.lower().encode() for prefix in REASON_PREFIXES)
#: the lines that continue an empty ``print_timing`` header (``fastscan._CONTINUATION``): an empty slot line
#: is harmless unless one of these follows it (as the slots-debug token lists of a full hit print it)
TIMING_CONTINUATIONS = (
    b"prompt eval time",
    b"eval time",
    b"total time",
    b"graphs reused",
    b"draft acceptance",
)
_TIMING = rb"(?:" + b"|".join(TIMING_CONTINUATIONS) + rb")"
_REASON_START = rb"(?i:" + b"|".join(map(re.escape, FACT_STARTS_ANY_CASE)) + rb")"
_HARMLESS = (
    rb" *+(?!\r?\n(?:[ \t]*+"
    + _TIMING
    + rb"|\Z)|\r(?!\n)|\Z|"
    + b"|".join(map(re.escape, FACT_STARTS))
    + rb"|"
    + _REASON_START
    + rb")"
)
_TASK_PIPE = rb" task -?\d+ \|"
#: a reason printed with ``task -1`` and nothing after it on its line: an idle slot's housekeeping, which
#: the tracker drops unless that slot is being assembled (``side_reason_slots`` checks which slots)
_SIDE_REASON = rb" task -\d+ \| *+" + _REASON_START + rb"[^|\n]*+(?=\n)"
#: skip to the next ``|`` (over any pipe-less lines) as long as it opens a harmless slot line, a side
#: reason, or is a pipe of some other text (prompt text in a ``LLAMA_SERVER_SLOTS_DEBUG`` dump, a memory
#: breakdown table)
_FILL = rb"(?:[^|]*+\|(?:" + _TASK_PIPE + _HARMLESS + rb"|" + _SIDE_REASON + rb"|(?!" + _TASK_PIPE + rb")))*"
#: text between blocks in which every ``| task T |`` opens a harmless line: no fact, nothing to do (a fact
#: line always has ``| task T |``, so other pipes never start one)
QUIET = lazy_compile(
    rb"(?:[^|]*+\|(?:"
    + _TASK_PIPE
    + _HARMLESS
    + rb"|"
    + _SIDE_REASON
    + rb"|(?!"
    + _TASK_PIPE
    + rb")))*+[^|]*+"
)
#: the side reasons the line regex reads (with its ``id S`` prefix), for their slots
_SIDE_REASON_LINE = lazy_compile(rb"id +(\d+) \|" + _SIDE_REASON)


def side_reason_slots(data: Chunk, start: int, end: int) -> set[int]:
    """The slots of the side reasons in ``data[start:end]``: a block or quiet text holding one of a slot
    the tracker is assembling (or of the block's own slot) goes to the line path, which keeps the note."""
    return {int(m[1]) for m in _SIDE_REASON_LINE.finditer(data, start, end)}


#: then the next ``|`` must open a line of the block's own slot and task (``\3`` is ``id  S |``)
_NEXT = _FILL + rb"[^|]*\3 task \5 \| *"

BLOCK = lazy_compile(
    bounded(
        rb"selected slot by (LCP similarity|LRU|id)(?:, (?:f_)?sim_best = (\d+(?:\.\d+)?))?"  # 1-2
        + _FILL
        + rb"[^|]*(id +(\d+) \|) task (\d+) \| *processing task"
        + _NEXT  # 3-5
        + rb"(?:(?:new prompt|prompt tokenized), n_ctx_slot = \d+, n_keep = \d+, "
        rb"(?:task\.)?n_(?:prompt_)?tokens = (\d+)"
        + _NEXT
        + rb")?"  # 6
        + rb"(?:need to evaluate at least 1 token()"
        + _NEXT
        + rb")?"  # 7
        + rb"(?:(?:cached )?n_tokens = (\d+), memory_seq_rm \["
        + _NEXT  # 8
        + rb"((?:(?:cached )?n_tokens = \d+, memory_seq_rm \["
        + _NEXT
        + rb")*))?"  # 9: restatements
        + rb"prompt eval time = +(\d+(?:\.\d+)?) ms / +(\d+) tokens"
        + _NEXT  # 10-11
        + rb"eval time = +[\d.]+ ms / +(\d+) (?:tokens|runs)"
        + _NEXT  # 12
        + rb"stop processing: n_(?:tokens|past) = (\d+), truncated = (\d+)[^|\n]*\n"
    )  # 13-14
)
#: one restatement of group 9 of ``BLOCK`` (its ``_NEXT`` without the back-references, which ``BLOCK``
#: already checked): matched one after another from the group's start they take exactly its repetitions
RESTATED = lazy_compile(
    rb"(?:cached )?n_tokens = (\d+), memory_seq_rm \[" + _FILL + rb"[^|]*\| task -?\d+ \| *"
)
#: the start of a block's first line, up to ``selected slot``: its slot must be the block's slot. A line
#: that reads like a timing continuation is left to the line path (after an empty timing header it is one).
SELECT_HEAD = lazy_compile(bounded(rb"(?![ \t]*" + _TIMING + rb")[^|\n]*id +(\d+) \| task -?\d+ \| *"))


LOOKS_CONTINUED = frozenset(b" \tpetgd")  # first bytes of the lines SELECT_HEAD leaves to the line path
SELECT_TASK = b" task -1 | "


def selection_slot_is(data: Chunk, line_start: int, at: int, slot: int) -> bool:
    """Whether the selection line ``data[line_start:at]`` (up to ``selected slot``) names ``slot``.

    The fast scanner first tries the usual form inline: the line ends in exactly
    ``id  S | task -1 | `` (the block's own ``id  S |``), has no other ``|`` and does not read like a
    timing continuation; this is the general check for any other form.
    """
    found = SELECT_HEAD.fullmatch(data, line_start, at)
    return found is not None and int(found[1]) == slot


def least_cached(first: int, restated: bytes | None) -> int:
    """The smallest of a block's cached-tokens statements, as ``RequestTracker`` keeps it: ``first`` and
    those of ``BLOCK``'s group 9 (``-lv 4`` restates it after every batch of a long prompt)."""
    least, pos, end = first, 0, len(restated or b"")
    while pos < end:
        again = RESTATED.match(restated, pos)  # type: ignore[arg-type]
        if again is None:  # cannot happen (the group is these repetitions); never guess a number
            raise AssertionError("BLOCK's restatements do not parse again")
        least = min(least, int(again[1]))
        pos = again.end()
    return least


def block_row(groups: tuple[bytes | None, ...], slot: int, first: int, last: int) -> Row:
    """The event of one block, as ``RequestTracker._finish`` and ``make_event`` compute it."""
    new = int(groups[10])  # type: ignore[arg-type]
    cached_text, size = groups[7], groups[5]
    if cached_text is not None:
        cached = least_cached(int(cached_text), groups[8])
    elif size is not None:
        cached = int(size) - new
    else:
        generated = int(groups[11])  # type: ignore[arg-type]
        cached = int(groups[12]) - new - (generated - 1 if generated > 1 else 0)  # type: ignore[arg-type]
    if cached < 0:
        cached = 0
    prompt = cached + new
    ratio = cached / prompt if prompt > 0 else 0.0
    verdict = HIT if ratio >= HIT_RATIO else MISS if cached <= 0 or ratio < MISS_RATIO else PARTIAL
    reason: str | None = None
    if int(groups[13]):  # type: ignore[arg-type]
        reason = _TRUNCATED
    elif verdict == "miss":
        sim = groups[1]
        if groups[0] == b"LCP similarity" and sim is not None:
            similarity = round(float(sim) * 1000)
            if similarity >= NOT_CACHED_MIN_SIM:
                reason = _NOT_CACHED.format(similarity / 1000)
        if reason is None and cached > 0:
            reason = _PREFIX.format(cached)
    elif verdict == "hit":
        if groups[0] == b"LRU":
            reason = _LRU_HIT
        elif groups[6] is not None:
            reason = _FULL_HIT
    else:
        reason = _PREFIX.format(cached)
    return (
        slot,
        int(groups[4]),
        cached,
        new,
        float(groups[9]),
        first,
        last,
        reason,  # type: ignore[arg-type]
        verdict,
    )


#: ``_blockscan.scan`` (the native walk, ``_native/walk.c``: every request whose lines follow the usual
#: order, interleaved slots too, with ``block_row`` in C), or ``None`` where the extension was not built or
#: ``KVSWITCH_NATIVE_SCAN=0``: then ``BLOCK`` takes the requests one after another, slower. It returns the
#: rows (or their JSON text), where it stopped (``pos``, ``line_no``), where the line path should hand back
#: (``until``), the requests open there (for ``RequestTracker.adopt``), the tracker's last slot, and in
#: JSON mode the counts.
class NativeScan(Protocol):
    @overload
    def __call__(
        self, data: Chunk, pos: int, end: int, line_no: int, pending: Mapping[Any, Any], max_pending: int, /
    ) -> tuple[list[Row], int, int, int, list[Adopted], int | None]: ...

    @overload
    def __call__(
        self,
        data: Chunk,
        pos: int,
        end: int,
        line_no: int,
        pending: Mapping[Any, Any],
        max_pending: int,
        server_json: bytes,
        /,
    ) -> tuple[bytes, int, int, int, list[Adopted], int | None, Counts]: ...


#: (hits, partial, misses, prompt tokens, cached tokens, new tokens) of the JSON lines of one call
Counts = tuple[int, int, int, int, int, int]


def _load_native() -> Any:
    """The configured ``_blockscan`` module, or ``None`` (not built, or ``KVSWITCH_NATIVE_SCAN=0``)."""
    if os.environ.get("KVSWITCH_NATIVE_SCAN", "1") == "0":
        return None
    try:
        from kvswitch.logs import _blockscan  # noqa: PLC0415
    except ImportError:
        return None
    head, tail = _PREFIX.split("{}")
    _blockscan.configure(
        HIT_RATIO,
        MISS_RATIO,
        float(NOT_CACHED_MIN_SIM),
        (HIT, PARTIAL, MISS),
        (_TRUNCATED, _LRU_HIT, _FULL_HIT),
        _NOT_CACHED,
        head,
        tail,
        json.dumps,
    )
    _blockscan.set_fact_starts(FACT_STARTS, FACT_STARTS_ANY_CASE)
    return _blockscan


_native = _load_native()
native_scan: NativeScan | None = None if _native is None else _native.scan
#: ``_blockscan.bare_reason_lines`` (``fastscan.bare_reasons``'s candidate lines in one pass) with the scanner
native_bare_reason_lines: Callable[[Chunk, int, int], list[tuple[int, int]]] | None = (
    None if _native is None else _native.bare_reason_lines
)
