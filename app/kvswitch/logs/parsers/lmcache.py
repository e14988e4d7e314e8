"""LMCache (with vLLM): the per-request lookup line, and store/retrieve lines.

``LMCache hit tokens`` counts the prompt prefix LMCache holds; ``Inference Engine computed tokens`` is
the prefix vLLM's own GPU prefix cache already holds, and ``need to load`` is what LMCache copies in on
top of it. So the prompt tokens not recomputed are the larger of the two, except in the
``..., but need to load: L < min_retrieve M, skip retrieve`` variant: LMCache then loads nothing and
only vLLM's own prefix was reused.
"""

from __future__ import annotations

import re

from kvswitch.logs.model import LineKind
from kvswitch.logs.parsers.base import Fact, Parsed, What, bounded, ratio_kind

SERVER = "lmcache"
ANCHORS = ("LMCache hit tokens",)
#: text only the general path understands (the byte-level scanner reads none of this format)
GENERAL_ONLY = (rb"LMCache",)

_HEADER = re.compile(r"\[(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)[,.]?\d*\] LMCache (\w+):")
_LOOKUP = re.compile(
    bounded(
        r"Reqid: ([^,\s]+), Total tokens (\d+), (?:Inference Engine computed tokens: (\d+), )?"
        r"LMCache hit tokens: (\d+),? (?:but )?need to load: (\d+)( < min_retrieve \d+, skip retrieve)?"
    )
)
_RETRIEVED = re.compile(
    bounded(r"Retrieved (\d+) out of (?:total )?(\d+) (?:required )?tokens|Retrieved (\d+) chunks")
)
_STORED = re.compile(bounded(r"Stor(?:ed|ing KV cache for) (\d+) out of (?:total )?(\d+) tokens"))


def parse(text: str) -> Parsed | None:
    if "LMCache" not in text and "Retrieved" not in text and "Stor" not in text:
        return None
    parsed = Parsed()
    clock: str | None = None
    if m := _HEADER.search(text):
        clock = f"{m.group(1)}T{m.group(2)}"
        parsed.mark_level(m, 3)
    if m := _LOOKUP.search(text):
        total, engine, hit, load = int(m.group(2)), int(m.group(3) or 0), int(m.group(4)), int(m.group(5))
        skipped = m.group(6) is not None
        cached = min(engine if skipped else max(hit, engine), total)
        if clock:
            parsed.facts.append(Fact(What.CLOCK, note=clock))
        reason = f"vLLM prefix cache held {engine} tokens, LMCache {hit} (loads {load})"
        if skipped:
            reason = (
                f"vLLM prefix cache held {engine} tokens; LMCache held {hit} but skipped loading "
                f"{load} (below min_retrieve_tokens)"
            )
        parsed.facts.append(
            Fact(What.EVENT, n1=cached, n2=total - cached, note=m.group(1), server=SERVER, reason=reason)
        )
        parsed.mark(m, ratio_kind(cached, total))
    elif m := _RETRIEVED.search(text):
        got = int(m.group(1) or m.group(3) or 0)
        wanted = int(m.group(2) or got)
        parsed.mark(m, LineKind.MISS if got == 0 else LineKind.HIT if got >= wanted else LineKind.PARTIAL)
    elif m := _STORED.search(text):
        parsed.mark(m, LineKind.TIMING)
    return parsed if parsed.spans or parsed.facts else None
