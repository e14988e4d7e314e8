"""Hit / partial / miss and the plain-words reasons, stated once for the log engine, verify and the UI.

The live log panel, ``log scan`` (Python and native), ``kvswitch verify`` and the window must say the
same thing about the same request, so the thresholds and the reason texts live here and nowhere else;
the native scanner is configured from these values at import (``logs/blocks.py``).
"""

from __future__ import annotations

#: a request that reused at least this share of its prompt is a hit
HIT_RATIO = 0.9
#: below this share (or with nothing reused) it is a miss; in between it is partial
MISS_RATIO = 0.1

HIT = "hit"
PARTIAL = "partial"
MISS = "miss"

#: reasons the request assembly derives from its numbers (the parsers' line reasons are theirs)
TRUNCATED = "the context was truncated (context shift)"
LRU_HIT = "restored from the host-RAM prompt cache (slot chosen by LRU)"
FULL_HIT = "identical prompt: only the last token was re-evaluated"
#: ``.format(similarity)``: the slot held the prompt (similarity >= ``NOT_CACHED_MIN_SIM``) and redid it
NOT_CACHED = (
    "the slot already held this prompt (similarity {:.3f}) but processed it again: prompt "
    "caching was off for this request (cache_prompt: false?)"
)
#: similarity x1000 of the selection from which a miss reads as "prompt caching was off"
NOT_CACHED_MIN_SIM = 500
#: ``.format(cached)``
PREFIX = "the first {} tokens were reused, then the prompt differs"


def verdict_for(cached: int, prompt: int) -> str:
    """``hit``, ``partial`` or ``miss`` for ``cached`` of ``prompt`` tokens reused."""
    ratio = cached / prompt if prompt > 0 else 0.0
    if ratio >= HIT_RATIO:
        return HIT
    if cached <= 0 or ratio < MISS_RATIO:
        return MISS
    return PARTIAL
