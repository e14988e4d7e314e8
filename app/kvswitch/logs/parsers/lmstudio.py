"""LM Studio: its own wrapper lines (0.2.x to 0.4.x) and the MLX engine's cache line.

The llama.cpp engine's lines inside LM Studio logs are handled by the llama.cpp parser (it finds the
slot prefix anywhere in a line); this module adds what only LM Studio prints.
"""

from __future__ import annotations

import re

from kvswitch.logs.model import LineKind
from kvswitch.logs.parsers.base import Fact, Parsed, What, bounded, ratio_kind

SERVER = "lm-studio"
ANCHORS = ("Prompt cache restore", "[DEBUG]", "[INFO]", "[WARN", "[ERROR]")
#: text only the general path understands: the MLX cache line and the wrapper's level tags
GENERAL_ONLY = (rb"Prompt cache restore", rb"\[(?:DEBUG|INFO|WARN|WARNING|ERROR)\]")

# 0.4: "2026-06-03 11:02:46 [DEBUG]"; 0.3: "[2025-04-17 18:32:17][DEBUG]";
# 0.2: "[2024-05-17 14:45:46.998] [INFO]"
_WRAPPER = re.compile(
    r"^\[?(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)(?:\.\d+)?\]? ?\[(DEBUG|INFO|WARN|WARNING|ERROR)\]"
)
_MLX = re.compile(bounded(r"Prompt cache restore: cached_tokens=(\d+) uncached_tokens=(\d+)"))
_REQUEST = re.compile(
    r"Received (?:request|POST request)[: ]+(?:(GET|POST|DELETE) to )?(\S+)|Running chat completion.*"
)


def parse(text: str) -> Parsed | None:
    if "[" not in text and "Prompt cache" not in text and "Received" not in text and "Running" not in text:
        return None
    parsed = Parsed()
    if m := _WRAPPER.match(text):
        parsed.facts.append(Fact(What.CLOCK, note=f"{m.group(1)}T{m.group(2)}"))
        parsed.mark_level(m, 3)
    if m := _MLX.search(text):
        cached, new = int(m.group(1)), int(m.group(2))
        parsed.facts.append(Fact(What.EVENT, n1=cached, n2=new, server="lm-studio (mlx)"))
        parsed.mark(m, ratio_kind(cached, cached + new))
    elif m := _REQUEST.search(text):
        parsed.mark(m, LineKind.REQUEST)
    return parsed if parsed.facts or parsed.spans else None
