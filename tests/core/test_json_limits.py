"""The one strict JSON entry: depth refused at exactly the README's 200 levels, 100,000 levels a clear
error (never RecursionError / exit 70) in verify history and ``diagnose`` inputs, bad history lines
named by file and line, and tier values trimmed of ASCII whitespace only, C1 controls refused."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kvswitch.core.errors import ConfigParseError, UsageError
from kvswitch.core.modelmap import parse_tier_assignments
from kvswitch.core.paths import AppPaths
from kvswitch.core.strictparse import MAX_DEPTH, loads_json, parse_json
from kvswitch.verify.records import history

APP = Path(__file__).resolve().parents[2] / "app"


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def test_depth_limit_is_exactly_200() -> None:
    assert loads_json("x.json", _nested(MAX_DEPTH)) is not None
    for depth in (MAX_DEPTH + 1, 500, 985):  # 201-985 were accepted before
        with pytest.raises(ConfigParseError, match="nested more than 200 levels") as caught:
            loads_json("x.json", _nested(depth))
        assert caught.value.column == MAX_DEPTH + 1
    # brackets inside strings are text, not nesting
    assert loads_json("x.json", '{"a": "' + "[" * 5000 + '"}') == {"a": "[" * 5000}


def test_size_cap() -> None:
    with pytest.raises(ConfigParseError, match="more than the 100"):
        parse_json("big.json", b"[" + b"0," * 100 + b"0]", max_bytes=100)


def _kvswitch(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(APP)}
    return subprocess.run([sys.executable, "-m", "kvswitch", *args], env=env, capture_output=True, text=True,
                          timeout=120)


def test_history_lines_deeply_nested_or_bad_are_named(fake_home: Path) -> None:
    store = history(AppPaths.default())
    path = store.path("local")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_nested(100_000) + "\n" + "not json\n" + "[1]\n" + '{"time": "x"}\n')
    problems: list[str] = []
    entries = store.load("local", problems)
    assert len(entries) + len(problems) == 4  # every line is either a record or named
    named = [p.split(": ", 1)[0] for p in problems]
    assert f"{path}:1" in named
    assert f"{path}:2" in named
    assert f"{path}:3" in named
    assert "nested more than 200 levels" in problems[0]
    result = _kvswitch("verify", "--history", "local")
    assert result.returncode == 0, result.stderr
    assert f"{path}:1: not valid JSON: nested more than 200 levels deep; line skipped" in result.stderr
    assert "Traceback" not in result.stderr


def test_diagnose_input_nested_100000_deep(tmp_path: Path) -> None:
    deep = tmp_path / "a.json"
    deep.write_text('{"messages": ' + _nested(100_000) + "}")
    other = tmp_path / "b.json"
    other.write_text('{"messages": []}')
    result = _kvswitch("diagnose", str(deep), str(other))
    assert result.returncode not in (0, 70), result.stderr
    assert f"{deep}:1:" in result.stderr
    assert "nested more than 200 levels" in result.stderr
    assert "Traceback" not in result.stderr


def test_tier_values_trim_ascii_whitespace_only_and_refuse_c1() -> None:
    assert parse_tier_assignments(["haiku=\t m1 \n"]) == {"haiku": "m1"}
    # U+00A0 is no ASCII whitespace: kept, not silently stripped
    assert parse_tier_assignments(["haiku=\u00a0m1"]) == {"haiku": "\u00a0m1"}
    for bad in ("\x85", "\x9b", "\x1b", "\x7f"):
        with pytest.raises(UsageError, match="control characters"):
            parse_tier_assignments([f"opus=m{bad}x"])
