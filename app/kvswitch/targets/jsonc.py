"""JSONC, as OpenCode reads its config: JSON plus ``//`` and ``/* */`` comments and trailing commas.

``blank_jsonc`` turns such text into plain JSON of exactly the same length, comments and trailing
commas replaced by spaces (newlines kept), so every position in it is the position in the user's file:
errors name the right line and column, and ``jsonsplice`` can find members in the blanked text while
copying the user's bytes, comments included.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from kvswitch.core.errors import ConfigParseError
from kvswitch.core.strictparse import loads_json

_SPACE = " "
_LINE_BREAK = re.compile(r"[\r\n]")


def _blank(chars: list[str], start: int, end: int) -> None:
    for i in range(start, end):
        if chars[i] not in "\r\n":
            chars[i] = _SPACE


def _line_end(text: str, start: int) -> int:
    """Where a ``//`` comment from ``start`` ends: at the first CR or LF, as OpenCode's parser ends it
    (measured on OpenCode 1.18.33: a bare CR ends the comment, U+2028 and U+2029 do not)."""
    match = _LINE_BREAK.search(text, start)
    return match.start() if match else len(text)


def blank_jsonc(text: str) -> str:
    """``text`` with comments and trailing commas as spaces; strings are left exactly as they are.

    An unterminated block comment blanks to the end (the JSON parser then reports what is missing).
    """
    chars = list(text)
    commas: list[int] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
        elif text.startswith("//", i):
            end = _line_end(text, i)
            _blank(chars, i, end)
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            _blank(chars, i, end)
            i = end
        else:
            if ch == ",":
                commas.append(i)
            i += 1
    plain = "".join(chars)
    for comma in commas:
        after = comma + 1
        while after < n and plain[after] in " \t\r\n":
            after += 1
        if after < n and plain[after] in "}]":
            chars[comma] = _SPACE
    return "".join(chars)


def parse_jsonc_object(path: Path, text: str) -> dict[str, Any]:
    """A JSONC object, or a ``ConfigParseError`` naming the file, line and column."""
    if not text.strip():
        return {}
    plain = blank_jsonc(text)
    if not plain.strip():
        return {}
    try:
        data = loads_json(path, plain)
    except json.JSONDecodeError as exc:
        raise ConfigParseError(path, f"not valid JSON: {exc.msg}", exc.lineno, exc.colno) from None
    if not isinstance(data, dict):
        raise ConfigParseError(
            path, f"expected a JSON object {{...}} at the top level, found {type(data).__name__}"
        )
    return data
