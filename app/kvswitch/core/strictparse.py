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
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kvswitch.core.errors import ConfigParseError

#: deeper than any real settings file, and far below the interpreter's recursion limit
MAX_DEPTH = 200
MAX_INT_DIGITS = sys.get_int_max_str_digits() or 4300
_JSON_TOKEN = re.compile(
    r'"(?:[^"\\]|\\.)*"|(-?Infinity|NaN)|(-?\d{' + str(MAX_INT_DIGITS + 1) + r",})|([\[{])|([\]}])"
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


def loads_json(
    path: Path | str, text: str, object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None
) -> Any:
    """``json.loads`` refusing NaN/Infinity, huge integers and absurd nesting with file:line:col.

    ``json.JSONDecodeError`` is left to the caller (each file explains syntax errors its own way).
    """
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


def check_toml(path: Path | str, text: str) -> None:
    """Refuse what TOML 1.0 refuses (Codex would not start) even when tomlkit is more lenient."""
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
