"""Which lines of a start-up file are the body of a here-document (text, not commands).

A marker line inside ``cat <<EOF ... EOF`` is data the user prints or pipes somewhere; taking it for
KV Switch's block would rewrite the user's text and leave the real exports unread. The rules are
the shells' own: bash and zsh end a body at the first line that is exactly the delimiter (leading
tabs removed for ``<<-``), PowerShell ends a here-string at a line starting with ``"@`` or ``'@``;
fish has no here-documents.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_WORD = re.compile(r"""[ \t]*(?:'([^'\n]*)'|"([^"\n]*)"|\\?([^\s;&|<>()'"]+))""")
_WORD_CHARS = " \t;&|()"


@dataclass(frozen=True)
class HeredocLines:
    """``body``: numbers (from 1) of the lines inside a here-document; ``unclosed``: the line that
    opened one still open at the end of the file (``None`` when every one is closed)."""

    body: frozenset[int]
    unclosed: int | None


def heredoc_lines(content: str, dialect: str) -> HeredocLines:
    """Scan ``content`` as ``dialect`` (``posix`` for bash/zsh, ``pwsh``, or ``none``)."""
    if dialect == "none":
        return HeredocLines(frozenset(), None)
    lines = content.split("\n")
    body: set[int] = set()
    pending: list[tuple[str, bool]] = []  # (delimiter, strip leading tabs) still to be read
    opened_at: int | None = None
    for number, line in enumerate(lines, start=1):
        if pending:
            body.add(number)
            word, strip_tabs = pending[0]
            if dialect == "pwsh":
                if line.startswith(word):
                    pending.pop(0)
            elif (line.lstrip("\t") if strip_tabs else line) == word:
                pending.pop(0)
            if pending:
                continue
            opened_at = None
            continue
        words = _pwsh_opens(line) if dialect == "pwsh" else _posix_delimiters(line)
        if words:
            pending.extend(words)
            opened_at = number
    if content.endswith("\n") and pending:
        body.discard(len(lines))  # the empty "line" after the final line break
    return HeredocLines(frozenset(body), opened_at if pending else None)


def _pwsh_opens(line: str) -> list[tuple[str, bool]]:
    stripped = line.rstrip()
    if stripped.endswith('@"'):
        return [('"@', False)]
    if stripped.endswith("@'"):
        return [("'@", False)]
    return []


def _posix_delimiters(line: str) -> list[tuple[str, bool]]:
    """The here-document delimiters a command line opens, in order (quotes and comments skipped)."""
    words: list[tuple[str, bool]] = []
    quote: str | None = None
    arithmetic = 0
    index = 0
    while index < len(line):
        char = line[index]
        if quote is not None:
            if char == "\\" and quote == '"':
                index += 2
                continue
            if char == quote:
                quote = None
            index += 1
            continue
        if char == "\\":
            index += 2
            continue
        if char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or line[index - 1] in _WORD_CHARS):
            break
        elif line.startswith("((", index):
            arithmetic += 1
            index += 2
            continue
        elif line.startswith("))", index) and arithmetic:
            arithmetic -= 1
            index += 2
            continue
        elif line.startswith("<<<", index):
            index += 3
            continue
        elif line.startswith("<<", index) and not arithmetic:
            strip_tabs = line.startswith("<<-", index)
            match = _WORD.match(line, index + (3 if strip_tabs else 2))
            if match:
                word = next(group for group in match.groups() if group is not None)
                words.append((word, strip_tabs))
                index = match.end()
                continue
        index += 1
    return words
