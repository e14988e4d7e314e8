"""Terminal colours for classified lines (``kvswitch log tail``); the window draws its own."""

from __future__ import annotations

from kvswitch.core.text import for_terminal
from kvswitch.logs.model import CacheEvent, ClassifiedLine, LineKind

RESET = "\x1b[0m"
LINE_COLOURS = {
    LineKind.HIT: "\x1b[32m",
    LineKind.PARTIAL: "\x1b[33m",
    LineKind.MISS: "\x1b[31m",
    LineKind.TIMING: "\x1b[36m",
    LineKind.REQUEST: "\x1b[34m",
    LineKind.WARNING: "\x1b[35m",
    LineKind.ERROR: "\x1b[1;31m",
    LineKind.OTHER: "",
}
SPAN_COLOURS = {kind: f"\x1b[1m{colour}" if colour else "\x1b[1m" for kind, colour in LINE_COLOURS.items()}


def render_ansi(line: ClassifiedLine) -> str:
    """The line in its kind's colour, with the interesting spans in bold.

    Every piece of the log's own text passes ``core.text.for_terminal`` before the colour codes are put
    around it: a log line is whatever the server (or a client's prompt it echoed) wrote, and an escape
    sequence, C1 control or bidi mark in it must reach the terminal neutralised while ours still work.
    Pieces are cleaned one by one, so the spans' offsets into the raw text stay right."""
    base = LINE_COLOURS[line.kind]
    out: list[str] = [base]
    pos = 0
    text = line.text
    for start, end, kind in line.spans:
        if start < pos:
            continue
        out.append(for_terminal(text[pos:start]))
        out.append(RESET + SPAN_COLOURS[kind] + for_terminal(text[start:end]) + RESET + base)
        pos = end
    out.append(for_terminal(text[pos:]))
    out.append(RESET if base or line.spans else "")
    return "".join(out)


def describe_event(event: CacheEvent) -> str:
    """One line a person reads: what the request reused and why."""
    where = []
    if event.slot is not None:
        where.append(f"slot {event.slot}")
    if event.task is not None:
        where.append(f"task {event.task}")
    if event.request_id:
        where.append(event.request_id)
    head = f"{event.verdict.upper()}: {event.cached_tokens}/{event.prompt_tokens} prompt tokens reused " \
           f"({event.reuse_ratio:.0%}), {event.new_tokens} processed"
    if event.prompt_ms is not None:
        head += f" in {event.prompt_ms:.0f} ms"
    text = f"{head} [{', '.join(where)}]" if where else head
    return f"{text} - {event.reason}" if event.reason else text
