"""One line in, its kind and highlight spans out: stateless, so the panel can colour any line alone."""

from __future__ import annotations

from kvswitch.logs.model import KIND_PRIORITY, ClassifiedLine, LineKind, Span
from kvswitch.logs.parsers import ParseFn, parsers_for
from kvswitch.logs.parsers.base import Fact, Parsed, What
from kvswitch.logs.text import strip_ansi

_GENERIC_ERROR = ("error", "Error", "ERROR", "FATAL", "panic:", "Traceback")
_GENERIC_WARNING = ("warning", "Warning", "WARNING", "WARN")


def run_parsers(text: str, parsers: list[ParseFn]) -> Parsed:
    """Every parser of the family on one ANSI-free line, merged (a wrapper line plus an embedded one)."""
    merged: Parsed | None = None
    for parse in parsers:
        parsed = parse(text)
        if parsed is None:
            continue
        if merged is None:
            merged = parsed
            continue
        merged.spans.extend(parsed.spans)
        merged.facts.extend(parsed.facts)
        merged.raise_kind(parsed.kind)
    if merged is None:
        merged = Parsed()
    if merged.kind is LineKind.OTHER:
        if any(word in text for word in _GENERIC_ERROR):
            merged.kind = LineKind.ERROR
        elif any(word in text for word in _GENERIC_WARNING):
            merged.kind = LineKind.WARNING
    return merged


def to_classified(text: str, parsed: Parsed, kind: LineKind | None = None) -> ClassifiedLine:
    spans: list[Span] = sorted({span for span in parsed.spans if 0 <= span[0] < span[1] <= len(text)})
    return ClassifiedLine(text=text, kind=kind or parsed.kind, spans=spans)


def classify_line(text: str, kind_hint: str | None = None) -> ClassifiedLine:
    """Kind and spans of one line; ANSI codes are removed first and spans index the cleaned text."""
    clean = strip_ansi(text.rstrip("\r\n"))
    return to_classified(clean, run_parsers(clean, parsers_for(kind_hint)))


def forced_reprocessing(text: str, parsers: list[ParseFn]) -> str | None:
    """The log engine's words when ``text`` (a ``clean_line``) says the server threw its cached prompt
    away, a reason of a miss such as "forcing full prompt re-processing" (``full re-processing forced:
    SWA or hybrid/recurrent model ...``); None for any other line."""
    parsed = run_parsers(text, parsers)
    if parsed.kind is not LineKind.MISS:
        return None
    return next((fact.note for fact in parsed.facts if fact.what is What.REASON and fact.note), None)


def strongest(a: LineKind, b: LineKind) -> LineKind:
    return b if KIND_PRIORITY[b] > KIND_PRIORITY[a] else a


__all__ = ["Fact", "classify_line", "forced_reprocessing", "run_parsers", "strongest", "to_classified"]
