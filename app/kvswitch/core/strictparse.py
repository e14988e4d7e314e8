"""Read JSON and TOML as strictly as the clients that own the files do.

Claude Code parses ``settings.json`` with a strict JSON parser and Codex reads ``config.toml`` with
Rust's ``toml`` crate (TOML 1.0). Python's ``json`` accepts ``NaN``/``Infinity`` and tomlkit accepts a
trailing comma in an inline table, so a file both clients refuse would look fine to KV Switch (and
``doctor`` would say so). Hostile inputs (10,000 levels of nesting, a 5,000-digit integer) make the
standard parsers raise ``RecursionError`` / ``ValueError``; here every such case becomes a
``ConfigParseError`` naming the file, line and column, so nothing is written and the user knows what
to fix.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kvswitch.core.errors import ConfigParseError

#: deeper than any real settings file, and far below the interpreter's recursion limit
MAX_DEPTH = 200
#: the largest JSON text parsed in one piece (a config file, a request body, one history line)
MAX_JSON_BYTES = 16 << 20
_BRACKETS = re.compile(r'"(?:[^"\\]|\\.)*"|([\[{])|([\]}])')
MAX_INT_DIGITS = sys.get_int_max_str_digits() or 4300
_JSON_TOKEN = re.compile(
    r'"(?:[^"\\]|\\.)*"|(-?Infinity|NaN)|(-?\d{' + str(MAX_INT_DIGITS + 1) + r',})|([\[{])|([\]}])'
)
_TOML_POSITION = re.compile(r"\s*\(at line (\d+), column (\d+)\)$")


class _Refused(ValueError):
    """Raised from a ``json`` hook; the position is found afterwards by ``_locate``."""


def _refuse_constant(name: str) -> Any:
    raise _Refused(name)


def _position(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def _locate(text: str) -> tuple[str, int]:
    """The first construct strict JSON refuses (outside strings): its description and index."""
    depth = 0
    for match in _JSON_TOKEN.finditer(text):
        if match.group(1):
            return f"{match.group(1)} is not a JSON number; write a number or null", match.start()
        if match.group(2):
            return f"a number with more than {MAX_INT_DIGITS} digits", match.start()
        if match.group(3):
            depth += 1
            if depth > MAX_DEPTH:
                return f"nested more than {MAX_DEPTH} levels deep", match.start()
        elif match.group(4):
            depth -= 1
    return "cannot be read", 0


def _too_deep(text: str) -> int | None:
    """Index of the first bracket nested deeper than ``MAX_DEPTH`` (outside strings), else ``None``.

    Python's ``json`` takes about 980 levels before its ``RecursionError``; the limit the README states
    is 200, so depth is counted first (only for texts with that many brackets at all: cheap for the rest).
    """
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return None
    depth = 0
    for match in _BRACKETS.finditer(text):
        if match.group(1):
            depth += 1
            if depth > MAX_DEPTH:
                return match.start()
        elif match.group(2):
            depth -= 1
    return None


def loads_json(
    path: Path | str,
    text: str,
    object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None,
    max_bytes: int = MAX_JSON_BYTES,
) -> Any:
    """``json.loads`` refusing NaN/Infinity, huge integers, more than ``MAX_DEPTH`` levels of nesting
    and texts over ``max_bytes`` (counted in characters, a lower bound of the bytes), with file:line:col.

    The one JSON entry of KV Switch: every JSON it reads from a file, a server or a user goes through it.
    ``json.JSONDecodeError`` is left to the caller (each file explains syntax errors its own way).
    """
    if len(text) > max_bytes:
        raise ConfigParseError(path, f"not read: {len(text):,} characters of JSON, more than the "
                               f"{max_bytes:,} KV Switch parses in one piece")
    deep = _too_deep(text)
    if deep is not None:
        line, column = _position(text, deep)
        reason = f"not valid JSON: nested more than {MAX_DEPTH} levels deep"
        raise ConfigParseError(path, reason, line, column)
    try:
        return json.loads(text, parse_constant=_refuse_constant, object_pairs_hook=object_pairs_hook)
    except json.JSONDecodeError:
        raise
    except (_Refused, RecursionError, ValueError) as exc:
        if type(exc) not in (_Refused, RecursionError, ValueError):
            raise  # a hook's own error (duplicate keys): the caller's to report
        reason, index = _locate(text)
        line, column = _position(text, index)
        raise ConfigParseError(path, f"not valid JSON: {reason}", line, column) from None


def parse_json(what: Path | str, data: str | bytes, max_bytes: int = MAX_JSON_BYTES) -> Any:
    """Strict, capped JSON from any source, every failure a ``ConfigParseError`` naming ``what``.

    For readers that explain nothing more than "not JSON": request bodies, history lines, captures.
    """
    if isinstance(data, bytes):
        if len(data) > max_bytes:
            raise ConfigParseError(what, f"not read: {len(data):,} bytes of JSON, more than the "
                                   f"{max_bytes:,} KV Switch parses in one piece")
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ConfigParseError(what, f"not UTF-8 text (byte {exc.start})") from None
    try:
        return loads_json(what, data, max_bytes=max_bytes)
    except json.JSONDecodeError as exc:
        raise ConfigParseError(what, f"not JSON: {exc.msg}", exc.lineno, exc.colno) from None


class JSONRefused(ValueError):
    """Raised by ``loads``: a ``ValueError``, so readers that treat "not JSON" one way keep doing so."""


def loads(data: str | bytes | bytearray, max_bytes: int = MAX_JSON_BYTES) -> Any:
    """Strict, capped JSON where the caller only needs "JSON or not": server answers, log lines, captures.

    Every refusal (syntax, NaN, a 5,000-digit integer, more than ``MAX_DEPTH`` levels, over ``max_bytes``)
    is a ``JSONRefused``, a ``ValueError``; never ``RecursionError``, which ``json.loads`` raises for
    100,000 levels of nesting and which no ``except ValueError`` catches.
    """
    try:
        return parse_json("JSON", bytes(data) if isinstance(data, bytearray) else data, max_bytes)
    except ConfigParseError as exc:
        raise JSONRefused(exc.reason) from None


def check_toml(path: Path | str, text: str) -> None:
    """Refuse what TOML 1.0 refuses (Codex would not start) even when tomlkit is more lenient."""
    import tomllib  # noqa: PLC0415 - only TOML needs it; the window reads JSON at start-up

    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        found = _TOML_POSITION.search(message)
        reason = _TOML_POSITION.sub("", message)
        line, column = (int(found.group(1)), int(found.group(2))) if found else (None, None)
        if line is not None and column is not None and _trailing_comma(text, line, column):
            reason = "trailing comma in an inline table { ... }; TOML 1.0 (and Codex) refuse it, remove it"
        raise ConfigParseError(path, f"not valid TOML: {reason}", line, column) from None
    except RecursionError:
        raise ConfigParseError(path, "not valid TOML: nested too deeply") from None
    except ValueError:
        reason = f"not valid TOML: a number with more than {MAX_INT_DIGITS} digits"
        raise ConfigParseError(path, reason) from None


def _trailing_comma(text: str, line: int, column: int) -> bool:
    """Whether tomllib stopped at the ``}`` of ``{ a = 1, }`` (its message does not say so)."""
    lines = text.splitlines()
    if line > len(lines):
        return False
    before, at = lines[line - 1][: column - 1], lines[line - 1][column - 1 : column]
    return at == "}" and before.rstrip().endswith(",")
