"""The engines' English, in the window's language: one list of templates, translated by Qt.

The engines (``verify``, ``logs``, ``targets``, ``core``) never import Qt and their CLI output stays
English, so they keep producing stable English sentences built from fixed templates with named fields
(``"following {path}"``). This module holds every such template as a literal that ``pyside6-lupdate``
collects into the ``EngineText`` context. :func:`translate` finds the template a text was built from,
translates the template and puts the fields back (a field that is itself an engine text is translated
too). Anything that matches no template is shown as the engine wrote it: English beats a wrong guess.

Structured results (a ``ConnectionReport``'s outcome, a ``ConfigParseError``'s path/line/reason) are
rebuilt here from their parts rather than parsed from their one-line English.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Any

from PySide6.QtCore import QCoreApplication

from kvswitch.ui.control.engine_templates import CONTEXT, TEMPLATES, WORDS

__all__ = ["CONTEXT", "TEMPLATES", "WORDS", "connection_lines", "error_text", "leftovers", "translate",
           "translate_all"]

_FIELD = re.compile(r"\{(\w+)\}")
#: ``ConfigParseError``/``FileAccessError`` as text: a path (it has a separator, no colon but a drive's),
#: an optional line and column, then the reason
_FILE_PREFIX = re.compile(r"(?P<where>(?:[A-Za-z]:)?[^:\n]*[/\\][^:\n]*(?::\d+){0,2}): (?P<reason>.+)",
                          re.DOTALL)
#: a line longer than this is shown as it came: the patterns' lazy fields make a hostile line cost
#: roughly its length cubed, and no engine template (with a server's capped message in it) is longer
_MAX_TEXT = 700


@functools.cache
def _patterns() -> tuple[tuple[str, str, re.Pattern[str]], ...]:
    """Each template with its longest literal piece (a cheap ``in`` test before the pattern runs) and
    its pattern, the most specific (longest literal text) first."""
    compiled = []
    for template in map(str, (*WORDS, *TEMPLATES)):
        parts, seen, pos = [], set(), 0
        for match in _FIELD.finditer(template):
            parts.append(re.escape(template[pos:match.start()]))
            name = match.group(1)
            parts.append(f"(?P={name})" if name in seen else f"(?P<{name}>.*?)")
            seen.add(name)
            pos = match.end()
        parts.append(re.escape(template[pos:]))
        longest = max(_FIELD.split(template)[::2], key=len)
        compiled.append((template, longest, re.compile("".join(parts), re.DOTALL)))
    return tuple(sorted(compiled, key=lambda item: -len(_FIELD.sub("", item[0]))))


def _tr(template: str) -> str:
    return QCoreApplication.translate(CONTEXT, template)


def _fill(translated: str, fields: dict[str, str]) -> str:
    return _FIELD.sub(lambda m: fields.get(m.group(1), m.group(0)), translated)


def translate(text: str | None) -> str:
    """``text`` in the UI language when an engine template built it, else unchanged."""
    if not text:
        return text or ""
    if len(text) > _MAX_TEXT:
        return "\n".join(translate(line) for line in text.split("\n")) if "\n" in text else text
    for template, longest, pattern in _patterns():
        match = pattern.fullmatch(text) if longest in text else None
        if match is None:
            continue
        fields = {name: _field(value) for name, value in match.groupdict().items()}
        return _fill(_tr(template), fields)
    where = _FILE_PREFIX.match(text)  # "path:line:column: reason", a file error as one string
    if where is not None:
        reason = translate(where.group("reason"))
        if reason != where.group("reason"):
            return f"{where.group('where')}: {reason}"
    # lines; the " — "-joined lines of a failed model listing; the "; "-joined reasons of one request
    for separator in ("\n", " — ", "; "):
        if separator in text:
            return separator.join(translate(part) for part in text.split(separator))
    return text


def _field(value: str) -> str:
    """A field that is itself an engine text (a reading, a hint, a status) is translated as well."""
    stripped = value.strip()
    if not stripped or not any(c.isalpha() for c in stripped):
        return value
    inner = translate(stripped)
    if inner == stripped:
        return value
    return value[: len(value) - len(value.lstrip())] + inner + value[len(value.rstrip()):]


def translate_all(texts: Iterable[str]) -> list[str]:
    return [translate(text) for text in texts]


def error_text(exc: BaseException) -> str:
    """A ``KvSwitchError`` for the message bar: a file error keeps its ``path:line:col`` and has its
    reason translated; anything else goes through :func:`translate` whole."""
    path, reason = getattr(exc, "path", None), getattr(exc, "reason", None)
    if path is None or not isinstance(reason, str):
        return translate(str(exc))
    where = str(path)
    line, column = getattr(exc, "line", None), getattr(exc, "column", None)
    if line is not None:
        where += f":{line}" + (f":{column}" if column is not None else "")
    return f"{where}: {translate(reason)}"


def connection_lines(report: Any) -> list[str]:
    """``ConnectionReport.lines()`` in the UI language (its head, "server said" and "fix" lines)."""
    return translate_all(report.lines())


def leftovers(text: str) -> list[str]:
    """The templates (with at least a few words of literal text) that still show in ``text`` in English:
    what a test of a translated window expects to be empty."""
    found = []
    for template, longest, pattern in _patterns():
        literal = _FIELD.sub("", template)
        if len(literal.split()) >= 3 and longest in text and pattern.search(text):
            found.append(template)
    return found
