"""Token counts and times read from a client's line, each checked once.

A transcript is the user's file, but anything can be in it (a hand edit, a broken write, a hostile
line): a count goes through ``usage.answer.sane_count`` (a non-negative integer below ``MAX_TOKENS``,
else dropped with a note), a time must parse and be finite.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

#: ``usage.answer.MAX_TOKENS`` (a test checks they agree): importing it here would load the server registry
#: and pydantic for ``kvswitch sessions`` before any count is read
MAX_TOKENS = 10**9


def count(source: Any, key: str, note: Callable[[str], None]) -> int:
    """``source[key]`` as a token count; 0 when absent or not sane (noted)."""
    if not isinstance(source, Mapping):
        return 0
    value = source.get(key)
    if value is None:
        return 0
    if value.__class__ is int and 0 <= value <= MAX_TOKENS:  # the common case, without the full check
        return int(value)
    from kvswitch.usage.answer import sane_count  # noqa: PLC0415 - it loads the server registry (pydantic)

    notes: list[str] = []
    found = sane_count(value, key, notes)
    for text in notes:
        note(text)
    return found or 0


def epoch(value: Any) -> float | None:
    """An ISO 8601 timestamp (``2026-12-07T08:30:37.299Z``) or epoch milliseconds as epoch seconds."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        seconds = value / 1000 if value > 10**11 else float(value)
        return seconds if math.isfinite(seconds) and 0 <= seconds < 10**11 else None
    if not isinstance(value, str) or len(value) > 64:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except (ValueError, OverflowError):
        return None


def mapping(value: Any) -> Mapping[str, Any]:
    """``value`` when it is a JSON object, else an empty one (a line's field may hold anything)."""
    return value if isinstance(value, Mapping) else {}


def text_of(value: Any, limit: int = 4000) -> str:
    """A message's text (a string, or the text parts of a content list), at most ``limit`` characters."""
    if isinstance(value, str):
        return value[:limit]
    if isinstance(value, list):
        parts = [
            str(item["text"])
            for item in value[:50]
            if isinstance(item, Mapping)
            and item.get("type") in ("text", "input_text")
            and isinstance(item.get("text"), str)
        ]
        return "\n".join(parts)[:limit]
    return ""


def short_text(value: Any, limit: int = 200) -> str:
    """A short single-line label, or "" when ``value`` is not text."""
    return value[:limit] if isinstance(value, str) else ""
