r"""Make text that came from a server (or any other untrusted peer) safe to show.

A server's error body, model name or header can carry terminal escape sequences (colour, cursor
moves, window titles, OSC 8 links, "clear screen"), carriage returns that overwrite a line, C1
controls and Unicode bidi overrides that make text read differently from what it is. Printed
raw, they act on the user's terminal; shown in the window, they garble it. ``printable`` removes
all of them and keeps everything else (any language, emoji) unchanged.

``for_terminal`` is the one gate every line the CLI prints passes (``commands.common.out``/``err``):
escape sequences and C0 controls go, and the characters that reorder or hide text (C1 controls, bidi
marks, line/paragraph separators) are shown as ``\uXXXX``, so a profile named with a right-to-left
override reads as what it is, and a JSON document printed through it stays the same data (inside a
JSON string, ``\u202e`` *is* that character).
"""

from __future__ import annotations

import re
from typing import Any

#: ESC sequences: CSI (``ESC [ ... final``), OSC/DCS/SOS/PM/APC strings (up to BEL or ``ESC \``),
#: then any other two-character escape; their 8-bit C1 forms (CSI 0x9b, OSC 0x9d...) likewise
_ESCAPES = re.compile(
    r"""
    (?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?               # CSI ... final byte
    | (?:\x1b[\]PX^_]|[\x9d\x90\x98\x9e\x9f])         # OSC, DCS, SOS, PM, APC ...
      [^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?           # ... up to BEL / ST
    | \x1b[ -/]*[0-~]?                                # any other ESC sequence (or a lone ESC)
    """,
    re.VERBOSE,
)
#: C0 controls except tab/newline, DEL, C1 controls
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
#: bidi embeddings, overrides, isolates and marks: they reorder what the reader sees
_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


#: what ``for_terminal`` shows as ``\uXXXX``: C1 controls (and DEL), bidi marks, line/paragraph separators
_REORDERING = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
#: C0 controls except tab and newline (JSON output never holds one raw: ``json.dumps`` escapes them)
_C0 = re.compile(r"[\x00-\x08\x0b-\x1f]")
#: any character ``for_terminal`` changes
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def for_terminal(text: str) -> str:
    r"""``text`` as it may reach a terminal: escape sequences (7- and 8-bit) and C0 controls removed,
    C1 controls, bidi marks and line separators made visible as ``\uXXXX`` (valid JSON escapes)."""
    if _safe_ascii(text) or (not text.isascii() and _UNSAFE.search(text) is None):
        return text  # the common case, no copy (a long --json document included)
    text = _ESCAPES.sub(_drop_seven_bit, text)  # an 8-bit one's C1 introducer is made visible below
    text = _C0.sub("", text)
    return _REORDERING.sub(lambda m: _visible(m.group(0)), text)


#: the ASCII bytes ``for_terminal`` changes: C0 controls but tab and newline, and DEL
_ASCII_UNSAFE = bytes(b for b in range(32) if b not in (9, 10)) + b"\x7f"


def _safe_ascii(text: str) -> bool:
    """ASCII text with nothing to change, checked at C speed (``bytes.translate``: several times faster
    than a regular expression over a long JSON document)."""
    if not text.isascii():
        return False
    raw = text.encode("ascii")
    return len(raw.translate(None, _ASCII_UNSAFE)) == len(raw)


def _drop_seven_bit(match: re.Match[str]) -> str:
    return "" if match.group(0).startswith("\x1b") else match.group(0)


def _visible(char: str) -> str:
    return f"\\u{ord(char):04x}"


def printable(text: str, *, multiline: bool = True) -> str:
    """``text`` without escape sequences, control characters or bidi overrides.

    Tab and newline are kept when ``multiline`` (an error body may have several lines); otherwise
    they become spaces, for values shown on one line (a model name, a header, a status line).
    """
    text = _ESCAPES.sub("", text)
    if not multiline:
        text = text.replace("\n", " ").replace("\t", " ")
    text = _CONTROLS.sub("", text)
    return _BIDI.sub("", text)


def printable_data(value: Any) -> Any:
    """Every string inside a JSON-like value (dicts, lists, tuples) made ``printable``; keys too."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {printable_data(k): printable_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(printable_data(v) for v in value)
    return value
