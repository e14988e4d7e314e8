"""The live follower gives each request the server's own clock (llama-server b11434 prints no wall time),
read from the line that finished it, on real captured logs of every b11434 clock format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvswitch.logs.analyzer import LogAnalyzer
from kvswitch.logs.follow import classify_lines
from kvswitch.logs.parsers.llama_cpp import server_clock_ms

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "llama.cpp-b11434"


def _followed(path: Path) -> tuple[list[str], list]:
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    _classified, events, _last = classify_lines(LogAnalyzer("llama.cpp"), lines, 0)
    assert events, path
    return lines, events


def _text_clock_ms(line: str) -> float:
    """``M.SS.mmm.uuu`` as llama.cpp's common/log.cpp prints it, read independently of the engine."""
    minutes, seconds, millis, micros = (int(part) for part in line.split(" ", 1)[0].split("."))
    return minutes * 60_000 + seconds * 1000 + millis + micros / 1000


@pytest.mark.parametrize("name", ["formats/default.log", "formats/timestamps_prefix.log",
                                  "llama_server_cc_np2.log", "llama_server_np4_default.log"])
def test_text_prefix_clock_of_the_finishing_line(name: str) -> None:
    lines, events = _followed(FIXTURES / name)
    for event in events:
        assert event.timestamp is None
        assert event.server_clock_ms == pytest.approx(_text_clock_ms(lines[event.last_line - 1]))
    clocks = [event.server_clock_ms for event in events]
    assert len(set(clocks)) == len(clocks)  # every request its own time, unlike the read time


def test_jsonl_time_field_is_microseconds_since_start() -> None:
    lines, events = _followed(FIXTURES / "formats" / "log_jsonl.log")
    for event in events:
        record = json.loads(lines[event.last_line - 1])
        assert event.server_clock_ms == pytest.approx(record["time"] / 1000)


def test_a_log_without_clock_leaves_it_empty() -> None:
    _lines, events = _followed(FIXTURES / "llama_server_np1_plain.log")
    assert {event.server_clock_ms for event in events} == {None}


def test_clock_is_not_part_of_the_scan_json() -> None:
    """``log scan --jsonl`` stays byte for byte what the whole-file scanners write."""
    _lines, events = _followed(FIXTURES / "formats" / "default.log")
    assert "server_clock_ms" not in events[0].to_json()


@pytest.mark.parametrize(("line", "expected"), [
    ("1.02.003.004 I slot release: id  0 | task 1 |", 62_003.004),
    ("  0.00.250.178 W srv  x", 250.178),
    ('{"type":"log","time":6053,"level":"info","msg":"x"}', 6.053),
    ("slot release: id  0 | task 1 |", None),
    ("2026-11-30 0.00.250.178 I slot", None),  # a wrapper's text in front: not the server's clock
    ("", None),
])
def test_clock_reading(line: str, expected: float | None) -> None:
    assert server_clock_ms(line) == (None if expected is None else pytest.approx(expected))
