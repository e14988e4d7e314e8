"""Quote a value for bash, zsh, fish or PowerShell so that sourcing it can never run anything.

Every value is written as a literal string: single quotes in every dialect, because inside them no
shell expands ``$``, backticks, ``!``, globs, ``~`` or ``%``. Line breaks are kept *outside* the quotes
as escapes (``$'\\n'`` for bash/zsh, ``\\n`` for fish, ``"`n"`` for PowerShell) so that every command in
the managed block stays on one physical line: a value can then never forge a marker line, and a CRLF
file does not get a bare LF in the middle of it.

Dialect rules (each checked against the real shell by the property tests, PowerShell by a parser):

- bash/zsh: ``'...'``; a ``'`` becomes ``'\\''`` (close, escaped quote, reopen). Safe under zsh's
  ``RC_QUOTES`` and inside interactive bash with history expansion on.
- fish: ``'...'``; inside single quotes fish still treats ``\\\\`` and ``\\'`` as escapes, so both
  ``\\`` and ``'`` are escaped.
- PowerShell: ``'...'``; a quote is doubled. PowerShell also accepts the typographic quotes
  U+2018..U+201B as single quotes, so those are doubled too.

NUL cannot be held by any environment variable, and an unpaired surrogate is not text at all; both
are rejected with an error naming the variable (never the value: it may be the API key).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from kvswitch.core.errors import UsageError
from kvswitch.core.models import ENV_NAME_RE

SHELLS = ("bash", "zsh", "fish", "pwsh")

_BREAKS = re.compile(r"([\r\n]+)")
_PWSH_SINGLE_QUOTES = re.compile("['\u2018\u2019\u201a\u201b]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def check_variable(name: str, value: str, where: str) -> None:
    """Refuse what no shell (or the Windows environment) can hold, before anything is written.

    Args:
        name: the variable name; must be a portable identifier.
        value: its value.
        where: the file or store it was going to, for the message.
    """
    if not ENV_NAME_RE.fullmatch(name):
        raise UsageError(
            f"cannot write {name!r} to {where}: not a valid variable name "
            "(use letters, digits and '_', not starting with a digit)"
        )
    if "\x00" in value:
        raise UsageError(
            f"cannot write {name} to {where}: its value contains a NUL character, which no shell or "
            "environment can hold; remove it from the profile"
        )
    if _SURROGATE.search(value):
        raise UsageError(
            f"cannot write {name} to {where}: its value contains an unpaired surrogate (not valid text); "
            "re-enter it in the profile"
        )


def _quote_runs(
    value: str, line_breaks: Callable[[str], str], text: Callable[[str], str], joiner: str = ""
) -> str:
    """Quote ``value`` run by run: line breaks need an escaping syntax that plain quotes don't offer.

    Every shell here quotes text literally in single quotes but can only spell CR/LF inside a second
    syntax, so the value is cut at the breaks and each run quoted by its own rule.
    """
    if not value:
        return "''"
    parts: list[str] = []
    for piece in _BREAKS.split(value):
        if not piece:
            continue
        parts.append(line_breaks(piece) if piece[0] in "\r\n" else text(piece))
    return joiner.join(parts)


def quote_posix(value: str) -> str:
    """A bash/zsh word that evaluates to exactly ``value``."""
    return _quote_runs(
        value,
        lambda breaks: "$'" + breaks.replace("\r", "\\r").replace("\n", "\\n") + "'",
        lambda text: "'" + text.replace("'", "'\\''") + "'",
    )


def quote_fish(value: str) -> str:
    """A fish word that evaluates to exactly ``value``."""
    return _quote_runs(
        value,
        lambda breaks: breaks.replace("\r", "\\r").replace("\n", "\\n"),
        lambda text: "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'",
    )


def quote_pwsh(value: str) -> str:
    """A PowerShell expression that evaluates to exactly ``value``."""
    return _quote_runs(
        value,
        lambda breaks: '"' + breaks.replace("\r", "`r").replace("\n", "`n") + '"',
        lambda text: "'" + _PWSH_SINGLE_QUOTES.sub(lambda m: m.group() * 2, text) + "'",
        joiner=" + ",
    )


def quote_for(shell: str, value: str) -> str:
    """The literal for ``value`` in ``shell``'s syntax."""
    if shell in ("bash", "zsh"):
        return quote_posix(value)
    if shell == "fish":
        return quote_fish(value)
    if shell == "pwsh":
        return quote_pwsh(value)
    raise ValueError(f"unknown shell {shell!r}; expected one of {', '.join(SHELLS)}")


def export_line(shell: str, name: str, value: str) -> str:
    """One line that exports ``name=value`` to every process the shell starts.

    The caller must have run ``check_variable`` (the name is interpolated unquoted).
    """
    literal = quote_for(shell, value)
    if shell == "fish":
        return f"set -gx {name} {literal}"
    if shell == "pwsh":
        return f"$env:{name} = {literal}"
    return f"export {name}={literal}"
