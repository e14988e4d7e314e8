"""Rewrite a JSON object file touching only the members that changed.

Users hand-format ``settings.json`` (compact arrays, aligned hooks); re-serialising the whole file
would churn every line and bury the one change in the diff. So the new text is built from the old
one: unchanged members are copied byte for byte (with their separators), changed values are
re-rendered in the file's indent, removed members take their separator with them, and new members
follow the layout of their siblings. If the result does not parse back to exactly the wanted data
(which would be a bug here), the caller falls back to a full re-serialisation.

For JSONC (comments, trailing commas) the caller passes ``blank``, which turns the text into plain JSON
of the same length (comments and trailing commas become spaces): members are found in the blanked text
and copied from the original, so comments between and inside unchanged members survive.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class _Member:
    key: str
    start: int  # opening quote of the key
    key_end: int
    value_start: int
    value_end: int


def _skip(text: str, pos: int) -> int:
    match = _WS.match(text, pos)
    return match.end() if match else pos


def _scan_object(text: str, pos: int) -> tuple[list[_Member], int]:
    """Members of the object whose ``{`` is at ``pos``, and the index of its ``}``."""
    members: list[_Member] = []
    i = _skip(text, pos + 1)
    if text[i] == "}":
        return members, i
    while True:
        key, key_end = _DECODER.raw_decode(text, i)
        colon = _skip(text, key_end)
        value_start = _skip(text, colon + 1)
        _, value_end = _DECODER.raw_decode(text, value_start)
        members.append(_Member(key, i, key_end, value_start, value_end))
        after = _skip(text, value_end)
        if text[after] == "}":
            return members, after
        i = _skip(text, after + 1)


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, ensure_ascii=False) == json.dumps(b, ensure_ascii=False)


def _render_value(value: Any, unit: str, depth: int, multiline: bool) -> str:
    if not multiline:
        return json.dumps(value, ensure_ascii=False)
    text = json.dumps(value, indent=unit, ensure_ascii=False)
    return text.replace("\n", "\n" + unit * depth)


def _edit_object(
    text: str, start: int, old: dict[str, Any], new: dict[str, Any], unit: str, depth: int, src: str
) -> str:
    """``text`` is scanned (plain JSON), ``src`` (the same length, maybe with comments) is copied."""
    members, close = _scan_object(text, start)
    if _same(old, new):
        return src[start : close + 1]
    multiline = "\n" in text[start : close + 1] or not members
    inner = unit * (depth + 1)
    default_sep = (",\n" + inner) if multiline else ", "
    key_sep = text[members[0].key_end : members[0].value_start] if members else ": "
    pieces: list[tuple[str, str]] = []  # (member text, separator that followed it originally)
    last_kept = -1  # the piece of the object's original last member, when it stays
    #: a key given twice: parsers (OpenCode's, Python's) keep the last, so only that one is edited; an
    #: earlier, shadowed one is copied as it is (or dropped with the key, lest it come back to life)
    live = {member.key: index for index, member in enumerate(members)}
    for index, member in enumerate(members):
        if member.key not in new:
            continue
        if live[member.key] != index:
            if index == len(members) - 1:
                last_kept = len(pieces)
            following = src[member.value_end : members[index + 1].start]
            pieces.append((src[member.start : member.value_end], following))
            continue
        if index == len(members) - 1:
            last_kept = len(pieces)
        following = (
            src[member.value_end : members[index + 1].start] if index + 1 < len(members) else default_sep
        )
        value = new[member.key]
        if _same(old.get(member.key), value):
            body = src[member.start : member.value_end]
        elif (
            isinstance(value, dict)
            and isinstance(old.get(member.key), dict)
            and text[member.value_start] == "{"
        ):
            edited = _edit_object(text, member.value_start, old[member.key], value, unit, depth + 1, src)
            body = src[member.start : member.value_start] + edited
        else:
            body = src[member.start : member.value_start] + _render_value(value, unit, depth + 1, multiline)
        pieces.append((body, following))
    for key, value in new.items():
        if key not in old:
            body = (
                json.dumps(key, ensure_ascii=False)
                + key_sep
                + _render_value(value, unit, depth + 1, multiline)
            )
            pieces.append((body, default_sep))
    if not pieces:
        return "{}"
    if members:
        prefix = src[start : members[0].start]
        suffix = src[members[-1].value_end : close + 1]
        newline = suffix.rfind("\n")
        if 0 <= last_kept < len(pieces) - 1 and multiline and newline > 0:
            # members added after the last one: what ends its line (a trailing comma, a comment) stays
            head, suffix = suffix[:newline], suffix[newline:]
            before_comment = head.split("//")[0].split("/*")[0]
            following = (head if "," in before_comment else "," + head) + "\n" + inner
            pieces[last_kept] = (pieces[last_kept][0], following)
    else:
        prefix, suffix = ("{\n" + inner, "\n" + unit * depth + "}") if multiline else ("{", "}")
    out = [prefix]
    for index, (body, following) in enumerate(pieces):
        out.append(body)
        if index + 1 < len(pieces):
            out.append(following if "," in following else default_sep)
    out.append(suffix)
    return "".join(out)


def splice_json(
    original: str, new: dict[str, Any], unit: str, blank: Callable[[str], str] | None = None
) -> str | None:
    """``original`` (a JSON object text) edited to hold ``new``; ``None`` when it cannot be done safely."""
    plain = blank or (lambda text: text)
    try:
        scan = plain(original)
        if len(scan) != len(original):
            return None
        old = json.loads(scan)
        start = _skip(scan, 0)
        if not isinstance(old, dict) or scan[start] != "{":
            return None
        _, close = _scan_object(scan, start)
        edited = (
            original[:start] + _edit_object(scan, start, old, new, unit, 0, original) + original[close + 1 :]
        )
        if json.dumps(json.loads(plain(edited)), sort_keys=True) != json.dumps(new, sort_keys=True):
            return None  # members keep their place, so only the content is compared
    except (ValueError, IndexError):
        return None
    return edited
