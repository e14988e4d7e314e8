"""Replace one top-level member of a big JSON object text, copying every other byte.

``~/.claude.json`` can be tens of MB; re-serialising it to change ``mcpServers`` would churn the whole
file and cost seconds. Here the top level is scanned once with the C decoder (each value is skipped by
``raw_decode``), the one member is replaced, inserted before the closing brace, or removed with its
comma, and nothing else is touched: linear time, one extra copy of the text.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from kvswitch.core.errors import ConfigParseError
from kvswitch.targets.claude import detect_indent
from kvswitch.targets.keyed import MISSING

_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def _skip(text: str, pos: int) -> int:
    match = _WS.match(text, pos)
    return match.end() if match else pos


def _members(text: str, path: Path) -> tuple[int, list[tuple[str, int, int, int]], int]:
    """The top-level ``{``'s index, its members as (key, key start, value start, value end), its ``}``."""
    start = _skip(text, 0)
    if text[start : start + 1] != "{":
        raise ConfigParseError(path, "expected a JSON object at the top level")
    members: list[tuple[str, int, int, int]] = []
    i = _skip(text, start + 1)
    try:
        if text[i] == "}":
            return start, members, i
        while True:
            key, key_end = _DECODER.raw_decode(text, i)
            value_start = _skip(text, _skip(text, key_end) + 1)
            _, value_end = _DECODER.raw_decode(text, value_start)
            members.append((key, i, value_start, value_end))
            after = _skip(text, value_end)
            if text[after] == "}":
                return start, members, after
            i = _skip(text, after + 1)
    except (ValueError, IndexError):
        raise ConfigParseError(path, "not valid JSON (it changed while KV Switch read it?)") from None


def replace_member(text: str, key: str, value: Any, path: Path) -> str:
    """``text`` with top-level member ``key`` set to ``value`` (``MISSING``: removed)."""
    if not text.strip():
        return "{}\n" if value is MISSING else json.dumps({key: value}, indent=2, ensure_ascii=False) + "\n"
    indent = detect_indent(text)
    unit = indent if isinstance(indent, str) else " " * indent
    start, members, close = _members(text, path)
    found = [m for m in members if m[0] == key]
    if found:
        _, key_start, value_start, value_end = found[-1]  # the last of two equal keys is the live one
        if value is MISSING:
            index = members.index(found[-1])
            if index > 0:
                cut_from, cut_to = members[index - 1][3], value_end  # with the comma before it
            elif len(members) > 1:
                cut_from, cut_to = key_start, members[1][1]
            else:
                cut_from, cut_to = start + 1, close
            return text[:cut_from] + text[cut_to:]
        rendered = json.dumps(value, indent=unit, ensure_ascii=False).replace("\n", "\n" + unit)
        return text[:value_start] + rendered + text[value_end:]
    if value is MISSING:
        return text
    rendered = json.dumps(value, indent=unit, ensure_ascii=False).replace("\n", "\n" + unit)
    member = json.dumps(key) + ": " + rendered
    if members:
        last_end = members[-1][3]
        return text[:last_end] + ",\n" + unit + member + text[last_end:]
    return text[: start + 1] + "\n" + unit + member + "\n" + text[close:]
