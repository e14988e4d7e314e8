"""Secrets KV Switch knows by value (profile keys, URL passwords), for the log scrubber.

Kept apart from ``applog`` so the store can register what it loads without importing
``logging.handlers`` (which the window defers until after its first paint).
"""

from __future__ import annotations

from collections.abc import Iterable

#: shorter values would mask ordinary words in log lines
MIN_KNOWN_LENGTH = 4
_known: set[str] = set()
MASK = "…[hidden]"


def remember_secrets(values: Iterable[str]) -> None:
    """Have every later log line hide these values."""
    _known.update(value for value in values if len(value) >= MIN_KNOWN_LENGTH)


def hide_known(text: str) -> str:
    """``text`` with every known secret replaced, longest first (a key may contain a shorter one)."""
    for secret in sorted(_known, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, MASK)
    return text
