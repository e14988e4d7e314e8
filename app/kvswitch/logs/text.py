"""Text hygiene shared by every reader: ANSI removal, undecodable bytes, runaway line lengths."""

from __future__ import annotations

import re

#: longest line kept; the rest of a longer line is dropped while reading, never held in memory
MAX_LINE_BYTES = 64 * 1024

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def strip_ansi(text: str) -> str:
    """Colour codes out, and other control characters (NUL, CR, BEL) too, so spans index what is shown."""
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    return _CONTROL.sub("", text) if _CONTROL.search(text) else text


def decode_line(raw: bytes) -> str:
    """Bytes of one line (without its newline) as text; invalid UTF-8 becomes U+FFFD, never an error."""
    if len(raw) > MAX_LINE_BYTES:
        raw = raw[:MAX_LINE_BYTES]
    return raw.decode("utf-8", errors="replace")
