"""PowerShell quoting, checked by a small reader of PowerShell's string-literal grammar.

PowerShell itself is not available on this machine (no Debian package; it ships through Microsoft's
own feeds), so the lines KV Switch writes into ``$PROFILE`` are read back by ``read_assignment``
below, which follows the tokenizer rules of the PowerShell language specification (section 2.3.5.2):

- a single-quoted literal opens and closes with any of ``' ‘ ’ ‚ ‛``; two such characters in a row
  inside it stand for one (the second) character; nothing else is special, ``$`` and backticks included;
- a double-quoted literal (``" “ ” „``) expands ``$`` and backtick escapes; the reader accepts only the
  ``\\`n``/``\\`r`` escapes KV Switch writes and rejects any ``$``, so an expanding string could not slip by;
- ``+`` between string literals concatenates.

Anything else in the right-hand side (a bare word, a sub-expression, a variable) is refused, so a
passing test means the line is pure literal data.
"""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kvswitch.core.envmap import shell_env
from kvswitch.core.models import Profile
from kvswitch.targets.shell import ShellRcTarget, rc_path
from kvswitch.targets.shell_block import END_MARKER, START_MARKER
from kvswitch.targets.shell_quote import quote_pwsh

SINGLE_QUOTES = "'\u2018\u2019\u201a\u201b"
DOUBLE_QUOTES = '"\u201c\u201d\u201e'
ESCAPES = {"n": "\n", "r": "\r"}
ASSIGNMENT = re.compile(r"\$env:([A-Za-z_][A-Za-z0-9_]*) = (.*)")


class NotALiteral(Exception):
    """The expression is not made of plain string literals only."""


def read_expression(source: str) -> str:
    """Evaluate ``'lit' + "`n" + 'lit'...``; raise ``NotALiteral`` for anything else."""
    pos = 0
    parts: list[str] = []
    expect_literal = True
    while pos < len(source):
        char = source[pos]
        if char in " \t":
            pos += 1
        elif not expect_literal and char == "+":
            expect_literal = True
            pos += 1
        elif expect_literal and char in SINGLE_QUOTES:
            text, pos = _single_quoted(source, pos + 1)
            parts.append(text)
            expect_literal = False
        elif expect_literal and char in DOUBLE_QUOTES:
            text, pos = _double_quoted(source, pos + 1)
            parts.append(text)
            expect_literal = False
        else:
            raise NotALiteral(f"unexpected {char!r} at {pos} in {source!r}")
    if expect_literal:
        raise NotALiteral(f"expression ends without a literal: {source!r}")
    return "".join(parts)


def _single_quoted(source: str, pos: int) -> tuple[str, int]:
    out: list[str] = []
    while True:
        if pos >= len(source):
            raise NotALiteral("unterminated single-quoted string")
        char = source[pos]
        if char in SINGLE_QUOTES:
            if pos + 1 < len(source) and source[pos + 1] in SINGLE_QUOTES:
                out.append(source[pos + 1])
                pos += 2
                continue
            return "".join(out), pos + 1
        out.append(char)
        pos += 1


def _double_quoted(source: str, pos: int) -> tuple[str, int]:
    out: list[str] = []
    while True:
        if pos >= len(source):
            raise NotALiteral("unterminated double-quoted string")
        char = source[pos]
        if char in DOUBLE_QUOTES:
            return "".join(out), pos + 1
        if char == "$":
            raise NotALiteral("a '$' inside an expanding string")
        if char == "`":
            escape = source[pos + 1 : pos + 2]
            if escape not in ESCAPES:
                raise NotALiteral(f"unexpected escape `{escape}")
            out.append(ESCAPES[escape])
            pos += 2
            continue
        out.append(char)
        pos += 1


def read_block(text: str) -> dict[str, str]:
    """Every ``$env:`` assignment between the markers, evaluated."""
    body = text.split(START_MARKER, 1)[1].split(END_MARKER, 1)[0]
    result = {}
    for line in body.replace("\r\n", "\n").split("\n"):
        if not line or line.startswith("#"):
            continue
        match = ASSIGNMENT.fullmatch(line)
        assert match, f"not an assignment: {line!r}"
        result[match.group(1)] = read_expression(match.group(2))
    return result


def test_reader_follows_the_grammar() -> None:
    assert read_expression("'it''s'") == "it's"
    assert read_expression("'a’’b'") == "a’b"
    assert read_expression("’x'") == "x"  # any single-quote character may open and close
    assert read_expression("'a' + \"`n\" + 'b'") == "a\nb"
    for bad in ("'a' 'b'", "$(whoami)", "'a' + $x", "'a", '"$x"', "'a' +", "'a'; rm"):
        try:
            read_expression(bad)
        except NotALiteral:
            continue
        raise AssertionError(f"{bad!r} was accepted")


_chars = st.characters(codec="utf-8", exclude_characters="\x00")
_fragments = st.sampled_from(["'", "''", "\u2018", "\u2019", "\u201a", "\u201b", "\u201c", '"', "`", "`n",
                              "$(calc)", "$env:PATH", "${x}", "@'", "'@", "\n", "\r\n", "\r", "#", "<#", "#>",
                              "%PATH%", "\\", "-", "😀"])
values = st.lists(st.one_of(st.text(_chars, max_size=10), _fragments), max_size=6).map("".join)


@settings(max_examples=2000, deadline=None)
@given(value=values)
def test_quote_pwsh_reads_back_exactly(value: str) -> None:
    literal = quote_pwsh(value)
    assert "\n" not in literal
    assert "\r" not in literal
    assert read_expression(literal) == value


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=values, extra=st.dictionaries(st.sampled_from(["KVS_A", "KVS_B", "KVS_C"]), values, max_size=3),
       crlf=st.booleans())
def test_profile_file_written_by_the_target_reads_back_exactly(tmp_path: Path, key: str,
                                                               extra: dict[str, str], crlf: bool) -> None:
    target = ShellRcTarget("pwsh", rc_path("pwsh", {"HOME": str(tmp_path)}, windows=True))
    path = Path(target.location())
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"Set-PSReadLineOption -EditMode Emacs" + (b"\r\n" if crlf else b"\n"))
    profile = Profile(name="p", base_url="http://127.0.0.1:1234", api_key=key or None, env=extra,
                      targets=["claude", "codex", "pwsh"])
    target.apply(target.plan(profile, {}))
    assert read_block(path.read_bytes().decode("utf-8")) == shell_env(profile)
