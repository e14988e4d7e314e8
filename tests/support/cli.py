"""Running ``kvswitch`` in the test's process, as the CLI tests of presets and skills do: its exit code
and what it printed (``run``), or its output once it has succeeded (``ok``; otherwise the failing
arguments and both streams are the assertion's message)."""

from __future__ import annotations

import pytest

from kvswitch.cli import main


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def ok(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code, out, err = run(capsys, *args)
    assert code == 0, (args, out, err)
    return out
