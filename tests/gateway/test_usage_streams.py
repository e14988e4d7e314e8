"""``kvswitch usage --json`` / ``--csv`` writers: the faster JSON path writes exactly what the standard
library's encoder writes, and what was read before a failure is still written."""

from __future__ import annotations

import csv
import io
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from kvswitch.commands.usage import write_csv, write_json
from kvswitch.usage.schema import COLUMNS, UsageRow, clean_values, local_time


def _values() -> list[tuple[Any, ...]]:
    now = time.time()
    rows = [UsageRow(now - 5, "claude", "local", "http://u/v1", "qwen\u202e evil", 200, 1234, 1000, 7,
                     123.45678901234567, 41.0, 2000.5, None, 0.1, None, session="s\u00e9", verdict="HIT"),
            UsageRow(now - 4.5, "codex", None, None, "m\x1b[31m", None, None, None, None,
                     error="boom \"x\"\n"),
            UsageRow(now, "claude", "=HYPERLINK(1)", "u", '{"a": 1}', 500, 2**62, 0, 0, cost=1e-12)]
    return [clean_values(row) for row in rows]


def test_json_is_what_the_standard_encoder_writes() -> None:
    values = _values()
    stream = io.StringIO()
    assert write_json(iter(values), stream) == 3
    encoded = []
    for row in values:
        data = dict(zip(COLUMNS, row, strict=True))
        data["time"] = local_time(int(row[0]))
        encoded.append(json.JSONEncoder().encode(data))
    assert stream.getvalue() == "[\n  " + ",\n  ".join(encoded) + "\n]\n"
    assert stream.getvalue().isascii()
    assert json.loads(stream.getvalue())[0]["ttft_ms"] == values[0][9]


def _failing(values: list[tuple[Any, ...]]) -> Iterator[tuple[Any, ...]]:
    yield from values
    raise OSError("the disk went away")


def test_csv_writes_the_rows_read_before_a_failure() -> None:
    values = _values()
    stream = io.StringIO()
    with pytest.raises(OSError, match="went away"):
        write_csv(_failing(values), stream)
    lines = list(csv.reader(io.StringIO(stream.getvalue())))
    assert lines[0] == list(COLUMNS)
    assert len(lines) == 4
    assert lines[3][2] == "'=HYPERLINK(1)"  # a formula is shown, not run
    assert lines[1][9] == repr(values[0][9])
