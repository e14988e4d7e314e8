"""``kvswitch usage`` and ``kvswitch sessions`` as a user runs them, on a real file in the temporary HOME.

Issue 28 item 11 (CSV half): a client chooses the model name it sends and a user the profile names;
escape sequences, C1 controls and bidi overrides in them must not reach a terminal or a CSV file raw,
and a cell a spreadsheet would run as a formula must not start with ``=``, ``+``, ``-`` or ``@``.
"""

from __future__ import annotations

import csv
import io
import json
import re
import time
from pathlib import Path

import pytest

from kvswitch.cli import main
from kvswitch.core.gateway_config import usage_db
from kvswitch.core.paths import AppPaths
from kvswitch.usage.retention import Retention
from kvswitch.usage.schema import UsageRow
from kvswitch.usage.store import UsageStore

#: what must never reach a terminal or a CSV file raw: ESC, C0/C1 controls (tab/newline aside), bidi marks
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
HOSTILE_MODEL = "\x1b]0;owned\x07claude\x1b[2J-\u202eexe.txt\x9b31m"
HOSTILE_PROFILES = ["=HYPERLINK(\"http://x\",\"ok\")", "+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)", "\u202eevil"]


@pytest.fixture
def paths(fake_home: Path) -> AppPaths:
    return AppPaths.default()


def _write(paths: AppPaths, rows: list[UsageRow]) -> None:
    store = UsageStore(usage_db(paths), retention=Retention(3650, 3650))
    try:
        for row in rows:
            assert store.add(row)
    finally:
        store.close()


def _hostile_rows() -> list[UsageRow]:
    now = time.time()
    return [UsageRow(now - 10 + i, "claude", profile, "http://127.0.0.1:1/v1/messages", HOSTILE_MODEL, 200,
                     100, 40, 3, error="\x1b[31mred\x1b[0m\rover", session=f"s\x1b[1m{i % 2}",
                     verdict="MISS", reason="evicted")
            for i, profile in enumerate(HOSTILE_PROFILES)]


def test_csv_holds_no_raw_escape_and_no_formula(paths: AppPaths, capsys: pytest.CaptureFixture[str]) -> None:
    _write(paths, _hostile_rows())
    assert main(["usage", "--csv"]) == 0
    text = capsys.readouterr().out
    assert not RAW.search(text.replace("\r\n", "\n")), RAW.findall(text)
    table = list(csv.DictReader(io.StringIO(text)))
    assert len(table) == len(HOSTILE_PROFILES)
    for cell_row in table:
        for value in cell_row.values():
            assert not value.startswith(("=", "+", "-", "@")), value
    assert [r["profile"] for r in table] == ["'" + p if p[0] in "=+-@" else p.replace("\u202e", "")
                                             for p in HOSTILE_PROFILES]
    assert table[0]["model"] == "claude-exe.txt"  # the visible text kept, the controls gone
    assert (table[0]["input_tokens"], table[0]["cached_tokens"], table[0]["status"]) == ("100", "40", "200")


def test_terminal_lines_hold_no_raw_escape(paths: AppPaths, capsys: pytest.CaptureFixture[str]) -> None:
    _write(paths, _hostile_rows())
    for command in (["usage"], ["usage", "--requests"], ["sessions"]):
        assert main(command) == 0
        text = capsys.readouterr().out
        assert text.strip()
        assert not RAW.search(text), (command, RAW.findall(text))


def test_json_escapes_what_it_carries(paths: AppPaths, capsys: pytest.CaptureFixture[str]) -> None:
    _write(paths, _hostile_rows())
    for command in (["usage", "--json"], ["sessions", "--json"]):
        assert main(command) == 0
        text = capsys.readouterr().out
        assert not RAW.search(text)
        json.loads(text)
    assert main(["usage", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["model"] == HOSTILE_MODEL  # JSON keeps the value exact, as \\u escapes


def test_requests_filters_and_sessions(paths: AppPaths, capsys: pytest.CaptureFixture[str]) -> None:
    now = time.time()
    rows = [UsageRow(now - 50 + i, "claude" if i < 4 else "codex", "local", None, "m", 200, 1000,
                     900 if i else 0, 5, ttft_ms=100.0, session="a" if i % 2 else "b",
                     verdict="COLD" if i < 2 else "HIT", reason="cold" if i < 2 else None,
                     client_name="claude-code" if i < 4 else "codex")
            for i in range(6)]
    rows.append(UsageRow(now - 40 * 86400, "claude", "local", None, "m", 200, 7, 0, 1, session="old"))
    _write(paths, rows)
    assert main(["usage", "--requests", "--session", "a", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert [row["session"] for row in got] == ["a", "a", "a"]
    assert [row["verdict"] for row in got] == ["COLD", "HIT", "HIT"]
    assert main(["usage", "--requests", "--client", "codex", "--verdict", "hit"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    assert all(" HIT" in line for line in lines)
    assert main(["usage", "--since", "all", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 7
    assert main(["sessions", "--json"]) == 0
    # a session is an id and the client that told it: "a" from both clients is two sessions (issue 39)
    sessions = {(item["session"], item["client"]): item for item in json.loads(capsys.readouterr().out)}
    assert set(sessions) == {("a", "claude-code"), ("a", "codex"), ("b", "claude-code"), ("b", "codex")}
    assert [sessions["a", "claude-code"]["requests"], sessions["a", "codex"]["requests"]] == [2, 1]
    # each HIT redid 100; the COLD one is not counted
    assert [sessions["a", client]["reprocessed_tokens"] for client in ("claude-code", "codex")] == [100, 100]
    assert main(["usage"]) == 0
    summary = capsys.readouterr().out
    assert "local: 6 requests" in summary
    assert "cached 4,500 (75%)" in summary


def test_an_empty_or_missing_file_and_a_bad_span(paths: AppPaths, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["usage"]) == 0
    assert "no requests" in capsys.readouterr().out
    assert main(["usage", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
    assert main(["sessions"]) == 0
    assert "no sessions" in capsys.readouterr().out
    assert not usage_db(paths).exists()  # reading never creates the file
    assert main(["usage", "--since", "yesterday"]) == 2
    assert "--since 'yesterday'" in capsys.readouterr().err


def test_reading_usage_loads_no_engine(paths: AppPaths) -> None:
    """``usage`` and ``sessions`` are standalone commands: a summary must not pay for pydantic, httpx,
    aiohttp or Qt (issue 28 asks for a million-row summary in under 2 s, start-up included)."""
    import subprocess  # noqa: PLC0415
    import sys  # noqa: PLC0415

    _write(paths, _hostile_rows())
    for command in (["usage"], ["sessions"], ["usage", "--csv"]):
        code = ("import json, sys; from kvswitch.cli import main;"
                f"code = main({command!r});"
                "print(json.dumps([code, sorted(sys.modules)]), file=sys.stderr)")
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                             check=True)
        status, modules = json.loads(run.stderr.strip().splitlines()[-1])
        assert status == 0
        assert not {"pydantic", "httpx", "aiohttp", "PySide6"} & set(modules), command
        assert "kvswitch.commands.profiles" not in modules
