"""Ollama: the native runner's ``loading cache slot`` debug line and ``[GIN]`` request lines.

Ollama 0.30 and later run llama-server; those lines are left to the llama.cpp parser.
"""

from __future__ import annotations

import re

from kvswitch.logs.parsers.base import Fact, Parsed, What, bounded, ratio_kind, status_kind

SERVER = "ollama"
ANCHORS = ("loading cache slot",)
#: text only the general path understands: the cache line, request lines and any structured log line
GENERAL_ONLY = (rb"loading cache slot", rb"\[GIN\]", rb"level=\w+ source=")

_SLOG = re.compile(r"\btime=(\d{4}-\d\d-\d\d)T(\d\d:\d\d:\d\d)\S* level=(\w+)")
_CACHE_SLOT = re.compile(
    bounded(r"msg=\"?loading cache slot\"? id=(\d+) cache=(\d+) prompt=(\d+) used=(\d+) remaining=(\d+)")
)
_GIN = re.compile(
    r"\[GIN\] \d{4}/\d\d/\d\d - \d\d:\d\d:\d\d \| (\d{3}) \|[^|]*\|[^|]*\| +(\w+) +\"([^\"]*)\""
)


def parse(text: str) -> Parsed | None:
    if "level=" not in text and "[GIN]" not in text:
        return None
    parsed = Parsed()
    clock: str | None = None
    if m := _SLOG.search(text):
        clock = f"{m.group(1)}T{m.group(2)}"
        parsed.mark_level(m, 3)
    if m := _CACHE_SLOT.search(text):
        used, remaining = int(m.group(4)), int(m.group(5))
        if clock:
            parsed.facts.append(Fact(What.CLOCK, note=clock))
        parsed.facts.append(Fact(What.EVENT, slot=int(m.group(1)), n1=used, n2=remaining, server=SERVER))
        parsed.mark(m, ratio_kind(used, used + remaining))
    elif m := _GIN.search(text):
        status = int(m.group(1))
        parsed.mark(m, status_kind(status))
    return parsed if parsed.spans or parsed.facts else None
