"""Hypothesis over argv for every command: random text, bytes that are not UTF-8 (as Python hands them
on: lone surrogates), numbers out of range and escape codes in every option and positional argument.

The assertion is the issue's: the exit status is never 70 (internal error) and stderr never holds a
traceback. In-process (``kvswitch.cli.main``) for speed, in the test's temporary HOME and working
directory, with few examples per command; options that would wait (``--timeout``), run a program
(``--client``) or serve forever (``record``, ``gateway run``, ``log tail`` following) get bounded values.
"""

from __future__ import annotations

import argparse
import io
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kvswitch.cli import build_parser, main

#: few per command in CI; ``KVSWITCH_FUZZ_EXAMPLES=500`` for a search
EXAMPLES = int(os.environ.get("KVSWITCH_FUZZ_EXAMPLES", "10"))
#: never started: they serve until interrupted (a valid random argv would listen for good)
SKIPPED = {("record",), ("gateway", "run")}
#: options given bounded values instead of random ones
BOUNDED = {
    "--timeout": st.sampled_from(["0.5", "1", "0", "-1", "nan", "inf", "1e999", "x", ""]),
    "--server-timeout": st.sampled_from(["0.5", "1", "0", "nan", "x"]),
    "--client": st.just("x"),
    "--claude-bin": st.just("/nonexistent/claude"),
}
FIXED = {("log", "tail"): ["--no-follow"]}
SPECIAL = st.sampled_from([
    "", "-", "--", "0", "-1", "65536", "nan", "1e999", "http://127.0.0.1:9", "http://user:pw@127.0.0.1:9",
    "/dev/null", "/nonexistent/x", "a=b", "=", "A=\udcff", "\x1b[2J\x1b]0;t\x07", "\u202etxt", "x" * 300,
    "claude", "codex", "bash", "llama.cpp", "custom", "on", "off",
])


def _safe_path_text(text: str) -> str:
    """Random text that cannot name a file outside the test's folders (it runs as any user, even root)."""
    text = text.replace("..", "_").lstrip("/~")
    return text or "x"


VALUE = st.one_of(
    SPECIAL,
    st.text(max_size=24).map(_safe_path_text),
    st.binary(min_size=1, max_size=12).map(lambda raw: _safe_path_text(raw.decode("utf-8",
                                                                                    "surrogateescape"))),
)


def _commands() -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    found: list[tuple[tuple[str, ...], argparse.ArgumentParser]] = []

    def walk(parser: argparse.ArgumentParser, prefix: tuple[str, ...]) -> None:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            found.append((prefix, parser))
            return
        for name, sub in subs[0].choices.items():
            walk(sub, (*prefix, name))

    walk(build_parser(), ())
    return [(name, parser) for name, parser in found if name not in SKIPPED]


COMMANDS = _commands()


@st.composite
def _argv(draw: st.DrawFn, command: tuple[str, ...], parser: argparse.ArgumentParser) -> list[str]:
    argv = list(command)
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction) or not draw(st.booleans()):
            continue
        flag = action.option_strings[-1] if action.option_strings else None
        if action.nargs == 0:
            argv.append(flag or "")
            continue
        value = draw(BOUNDED.get(flag or "", VALUE))
        argv += [flag, value] if flag else [value]
    argv += FIXED.get(command, [])
    return [a for a in argv if a]


@pytest.mark.parametrize(("command", "parser"), COMMANDS, ids=[" ".join(c) for c, _ in COMMANDS])
def test_no_argv_makes_an_internal_error(
    command: tuple[str, ...], parser: argparse.ArgumentParser, fake_home: Path, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["profile", "add", "p", "--kind", "custom", "--base-url", "http://127.0.0.1:9",
                 "--model", "m", "--target", "claude"]) == 0

    @settings(max_examples=EXAMPLES, deadline=None, database=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
    @given(argv=_argv(command, parser))
    def run(argv: list[str]) -> None:
        monkeypatch.setattr("sys.stdin", io.StringIO("sk-from-stdin\n"))
        capsys.readouterr()
        try:
            code = main(argv)
        except SystemExit as exited:  # argparse: --help (0) or a usage error (2)
            code = exited.code if isinstance(exited.code, int) else 2
        err = capsys.readouterr().err
        assert code != 70, (argv, err)
        assert "Traceback" not in err, (argv, err)
        assert "internal error" not in err, (argv, err)

    run()
