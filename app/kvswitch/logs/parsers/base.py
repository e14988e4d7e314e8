"""The shape every server parser returns, so the tracker can assemble requests without knowing formats.

A parser turns one ANSI-free line into a ``Parsed``: the line's own kind and highlight spans, and zero
or more ``Fact``s (small, typed observations such as "task 9 processed 23 prompt tokens"). Parsers are
stateless; everything that spans lines (print_timing blocks, interleaved slots) lives in the tracker.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, AnyStr, cast

from kvswitch.logs.model import KIND_PRIORITY, LineKind, Span, kind_for_verdict, verdict_for

#: the longest digit run read as a number: far below Python's int-conversion limit (4,300 digits), so a line
#: with a longer run (a pasted 5,000-digit "number") is no fact instead of an internal error
MAX_DIGITS = 1000
#: the longest integer part read as a decimal (milliseconds, similarity): ``float()`` stays finite
MAX_DECIMAL_DIGITS = 300
_CAPTURED_NUMBER = re.compile(r"\((-\?)?\\d\+(\(\?:\\\.\\d\+\)\?)?")


class _LazyPattern:
    """A compiled regex that is compiled on first use: ``kvswitch log scan`` starts in a fraction of a
    second, and the patterns of the paths a file does not take (the regex block path where the native
    walk is built, the line path of a log it reads whole) would be a good part of that."""

    __slots__ = ("_source", "_flags", "_compiled")

    def __init__(self, source: bytes, flags: int) -> None:
        self._source, self._flags = source, flags
        self._compiled: re.Pattern[bytes] | None = None

    def __getattr__(self, name: str) -> Any:
        if self._compiled is None:
            self._compiled = re.compile(self._source, self._flags)
        return getattr(self._compiled, name)


def lazy_compile(source: bytes, flags: int = 0) -> re.Pattern[bytes]:
    """``re.compile(source, flags)``, done when the pattern is first used (see ``_LazyPattern``)."""
    return cast("re.Pattern[bytes]", _LazyPattern(source, flags))


def bounded(pattern: AnyStr) -> AnyStr:
    """``pattern`` with every captured number (``(\\d+``, ``(-?\\d+``, ``(\\d+(?:\\.\\d+)?``) bounded in
    length and not followed by another digit: every parser and the fast scanner read numbers alike, and
    ``int()``/``float()`` never see a digit run they refuse or overflow on."""
    text = pattern if isinstance(pattern, str) else pattern.decode("ascii")

    def bound(m: re.Match[str]) -> str:
        digits = MAX_DECIMAL_DIGITS if m.group(2) else MAX_DIGITS
        return "(" + (m.group(1) or "") + rf"\d{{1,{digits}}}(?!\d)" + (m.group(2) or "")

    rewritten = _CAPTURED_NUMBER.sub(bound, text)
    return rewritten if isinstance(pattern, str) else rewritten.encode("ascii")


class What(StrEnum):
    SELECT = "select"  # a slot was chosen for the next request (n1 = sim x1000 when printed)
    START = "start"  # a task began on a slot
    PROMPT_SIZE = "prompt_size"  # n1 = prompt tokens of the task
    CACHED = "cached"  # n1 = prompt tokens kept from the cache (direct evidence)
    FULL_HIT = "full_hit"  # the whole prompt was cached; one token is re-evaluated for logits
    TIMING_HEADER = "timing_header"  # a print_timing block follows on unprefixed lines
    PROMPT_EVAL = "prompt_eval"  # n1 = prompt tokens processed, ms = time
    GEN_EVAL = "gen_eval"  # n1 = tokens generated
    RELEASE = "release"  # n1 = tokens in the slot after the request, n2 = truncated flag
    REASON = "reason"  # note = why the cache was (not) used
    EVENT = "event"  # a complete request in one line: n1 = cached, n2 = new
    CLOCK = "clock"  # note = wall-clock time (ISO 8601) printed by a wrapper


@dataclass(slots=True)
class Fact:
    what: What
    slot: int | None = None
    task: int | None = None
    n1: int | None = None
    n2: int | None = None
    ms: float | None = None
    note: str | None = None
    server: str | None = None
    reason: str | None = None


@dataclass(slots=True)
class Parsed:
    kind: LineKind = LineKind.OTHER
    spans: list[Span] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)

    def raise_kind(self, kind: LineKind) -> None:
        if KIND_PRIORITY[kind] > KIND_PRIORITY[self.kind]:
            self.kind = kind

    def mark(self, match: re.Match[str], kind: LineKind, group: int | str = 0, offset: int = 0) -> None:
        start, end = match.span(group)
        if start >= 0 and end > start:
            self.spans.append((start + offset, end + offset, kind))
        self.raise_kind(kind)

    def mark_level(self, match: re.Match[str], group: int) -> None:
        """Colour a level word (``ERROR``, ``WARN``/``WARNING``) in a server's own log header."""
        level = match.group(group).upper()
        if level.startswith("ERR"):
            self.mark(match, LineKind.ERROR, group)
        elif level.startswith("WARN"):
            self.mark(match, LineKind.WARNING, group)


def ratio_kind(cached: int, total: int) -> LineKind:
    """Kind of a line that states both numbers itself (Ollama, SGLang, LMCache, MLX)."""
    return kind_for_verdict(verdict_for(cached, total))


def status_kind(status: int) -> LineKind:
    """An HTTP request line: failures stand out, successes are plain request lines."""
    if status >= 500:
        return LineKind.ERROR
    return LineKind.WARNING if status >= 400 else LineKind.REQUEST
