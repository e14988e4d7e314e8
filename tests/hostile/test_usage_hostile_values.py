"""Issue 39, item 1: the usage readers on a file another program wrote, on a million sessions, on a
closed pipe, and an upstream that echoes a key into a usage row.

The usage file is the user's SQLite file: a script or a hand-run ``sqlite3`` may put a BLOB where KV
Switch writes a model name, text where it writes a count or a time, ``1e308`` or ``2**63 - 1`` where it
writes tokens. Each such value must read as unknown (and be counted in a note on stderr), never as a
traceback (exit 70) or "cannot read the usage database … unusable file" (exit 1), and no sum may
overflow. Every command runs against a real file in the test's temporary HOME; the memory and pipe
cases run ``kvswitch`` as a real child process (``support.measured``: its own peak RSS from the kernel).
"""

from __future__ import annotations

import csv
import io
import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from gateway.gateway_support import ScriptedUpstream, add_profiles, json_answer, stored_rows
from kvswitch.cli import main
from kvswitch.core.gateway_config import ensure_token, usage_db
from kvswitch.core.models import Profile
from kvswitch.core.paths import AppPaths
from kvswitch.gateway.control import make_server
from kvswitch.usage.schema import COLUMNS, connect
from support.measured import run_kvswitch

pytestmark = pytest.mark.skipif(not hasattr(os, "wait4"), reason="needs POSIX wait4 (peak RSS of a child)")
#: what another program may write where KV Switch writes something else: (column, value) per case
HOSTILE: dict[str, dict[str, Any]] = {
    "blob model": {"model": b"\xff\x00\x1b[2Jmodel"},
    "text tokens": {"input_tokens": "lots", "cached_tokens": "some", "output_tokens": "x",
                    "reusable_tokens": "r"},
    "text time": {"time": "yesterday"},
    "1e308": {"input_tokens": 1e308, "cached_tokens": 1e308, "output_tokens": 1e308, "cost": 1e308,
              "ttft_ms": 1e308, "reusable_tokens": 1e308},
    "int64 sums": {"input_tokens": 2**63 - 1, "cached_tokens": 2**63 - 1, "output_tokens": 2**63 - 1},
}
COMMANDS = (["usage"], ["usage", "--since", "all"], ["usage", "--requests"], ["usage", "--json"],
            ["usage", "--csv"], ["usage", "--session", "s1"], ["sessions"], ["sessions", "--json"])
KEY = "hunter2hunter2hunter2"


@pytest.fixture
def paths(fake_home: Path) -> AppPaths:
    return AppPaths.default()


def _good_row(when: float, session: str = "s1", **values: Any) -> dict[str, Any]:
    row = {"time": when, "client": "claude", "profile": "local", "upstream": "http://127.0.0.1:1/v1/messages",
           "model": "m", "status": 200, "input_tokens": 1000, "cached_tokens": 900, "output_tokens": 5,
           "ttft_ms": 100.0, "cost": 0.0, "client_name": "claude-code", "session": session,
           "verdict": "PARTIAL", "reason": "prefix_changed", "reusable_tokens": 950}
    row.update(values)
    return row


def _insert(db: Path, rows: list[dict[str, Any]]) -> None:
    """Rows as another program writes them: plain SQL into KV Switch's own schema (``connect``)."""
    connection = connect(db)
    try:
        with connection:
            for row in rows:
                names = [name for name in row if name in COLUMNS]
                connection.execute(f"INSERT INTO requests ({', '.join(names)}) VALUES "
                                   f"({', '.join('?' * len(names))})", [row[name] for name in names])
    finally:
        connection.close()


@pytest.mark.parametrize("case", list(HOSTILE))
def test_values_another_program_wrote_read_as_unknown(paths: AppPaths, case: str,
                                                      capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KVSWITCH_DEBUG", raising=False)
    now = time.time()
    hostile = HOSTILE[case]
    rows = [_good_row(now - 30), _good_row(now - 20, **hostile), _good_row(now - 10, **hostile)]
    _insert(usage_db(paths), rows)
    for command in COMMANDS:
        code = main(command)
        got = capsys.readouterr()
        assert code == 0, (case, command, got.err)
        assert "internal error" not in got.err, (case, command)
        assert "cannot read the usage database" not in got.err, (case, command)
        if command[-1] == "--json":
            data = json.loads(got.out)
            assert data, (case, command)
        if command[0] == "usage" and command[-1] in ("--json", "--csv", "--requests"):
            assert "not what KV Switch writes" in got.err, (case, command)  # the note names what was hidden
    # the good row's numbers stand; each hostile value is unknown (null in JSON), never a huge number
    assert main(["usage", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["input_tokens"] == 1000
    for row in rows[1:]:
        for name in hostile:
            assert row[name] in (None, "?"), (case, name, row[name])
    assert main(["usage", "--since", "all"]) == 0
    summary = capsys.readouterr().out
    assert "3 requests" in summary
    expected = "prompt 3,000 tokens" if not set(hostile) & {"input_tokens"} else "prompt 1,000 tokens"
    assert expected in summary, summary  # the hostile counts are left out of the sums, never summed


# -- a million sessions -----------------------------------------------------------------------------
def _many_sessions(db: Path, sessions: int) -> None:
    """``sessions`` distinct sessions of one request each, written by SQL (seconds for a million)."""
    connection = connect(db)
    try:
        with connection:
            connection.execute(f"""
                WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < {sessions})
                INSERT INTO requests (time, client, profile, upstream, model, status, input_tokens,
                                      cached_tokens, output_tokens, ttft_ms, cost, client_name, session,
                                      verdict, reason, reusable_tokens)
                SELECT {time.time() - 3600} + i * 0.001, 'claude', 'local', 'http://127.0.0.1:1/v1/messages',
                       'm', 200, 1000, 900, 5, 100.0, 0.0, 'claude-code', printf('session-%08d', i),
                       'PARTIAL', 'prefix_changed', 950 FROM k""")
    finally:
        connection.close()


def _home_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    env.update(HOME=str(home), KVSWITCH_CONFIG_DIR=str(home / ".config" / "kvswitch"), LC_ALL="C.UTF-8",
               PYTHONPATH=str(Path(__file__).resolve().parents[2] / "app"), XDG_DATA_HOME=str(home / "xdg"))
    env.pop("KVSWITCH_DEBUG", None)
    return env


@pytest.mark.parametrize("form", [[], ["--json"]])
def test_sessions_on_many_sessions_stream_in_constant_memory(tmp_path: Path, form: list[str]) -> None:
    """Issue 39: 1,000,000 sessions took ``sessions`` 817 MB and ``sessions --json`` 4.0 GB. The peak
    RSS of the command on 100,000 sessions, against the same command on 2,000 in the same run: the
    growth is what reading them costs, and a stream holds a page, not the sessions (the list-building
    reader grew 285 MB / 782 MB on 200,000). Time is measured by ``benchmarks/usage_scale.py``, not
    asserted."""
    peaks = {}
    for sessions in (2_000, 100_000):
        home = tmp_path / f"home-{sessions}"
        db = home / ".config" / "kvswitch" / "data" / "usage.sqlite3"
        _many_sessions(db, sessions)
        got = run_kvswitch(["sessions", "--since", "all", *form], _home_env(home), timeout=600)
        assert got.code == 0, got.stderr[-2000:]
        assert got.stdout.count("session-") == sessions
        peaks[sessions] = got.peak_rss_mb
    assert peaks[100_000] - peaks[2_000] < 40, peaks


# -- a closed pipe ----------------------------------------------------------------------------------
@pytest.mark.parametrize("form", [["--requests"], ["--json"], ["--csv"]])
def test_a_closed_stdout_ends_quietly(tmp_path: Path, form: list[str]) -> None:
    """``kvswitch usage --requests | head -1``: the reader goes away; the command stops with 0 and
    says nothing (it said "cannot read the usage database" and exited 1)."""
    home = tmp_path / "home"
    db = home / ".config" / "kvswitch" / "data" / "usage.sqlite3"
    _many_sessions(db, 20_000)  # megabytes of output: far past a pipe's buffer
    child = subprocess.Popen([sys.executable, "-m", "kvswitch", "usage", *form], env=_home_env(home),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert child.stdout is not None
    assert child.stderr is not None
    assert child.stdout.readline()
    child.stdout.close()  # what head does after its first line
    error = child.stderr.read().decode("utf-8", "replace")
    assert child.wait(timeout=120) == 0, error
    assert error == ""


# -- a key echoed by the upstream -------------------------------------------------------------------
@pytest.fixture
def echoing_upstream() -> Iterator[Callable[[bytes], ScriptedUpstream]]:
    made: list[ScriptedUpstream] = []

    def make(body: bytes) -> ScriptedUpstream:
        made.append(ScriptedUpstream(json_answer(body, status=401)))
        return made[-1]

    yield make
    for one in made:
        one.close()


def test_a_key_the_upstream_echoes_is_stored_and_shown_masked(
    paths: AppPaths, echoing_upstream: Callable[[bytes], ScriptedUpstream], fake_home: Path,
) -> None:
    """A 401 body "the token hunter2hunter2hunter2 is not valid": through the real gateway, the usage
    row's error is stored with the profile's key (and the gateway token) masked, and ``usage --json``,
    ``--csv`` and ``--requests`` (a fresh process, which knows the key only from the profiles file)
    show the error without it."""
    token = ensure_token(paths)
    body = json.dumps({"type": "error", "error": {"type": "authentication_error", "message":
                       f"the token {KEY} is not valid (gateway {token})"}}).encode()
    upstream = echoing_upstream(body)
    add_profiles(paths, Profile.model_validate({"name": "p", "kind": "anthropic", "api_key": KEY,
                                                "base_url": f"http://127.0.0.1:{upstream.port}"}), route="p")
    gateway = make_server(paths, "127.0.0.1", 0).start()
    try:
        answer = httpx.post(gateway.url + "/claude/v1/messages", timeout=30,
                            content=json.dumps({"model": "m", "messages": []}).encode(),
                            headers={"x-api-key": token, "content-type": "application/json"})
        assert answer.status_code == 401
        (row,) = stored_rows(paths)
    finally:
        gateway.stop()
    with sqlite3.connect(usage_db(paths)) as raw:  # what is on disk, not what a reader shows
        (stored,) = raw.execute("SELECT error FROM requests").fetchone()
    assert "is not valid" in stored
    assert KEY not in stored, stored
    assert token not in stored, stored
    # a row stored before this fix (by an older gateway) still shows masked
    echoed = f"the token {KEY} is not valid; {token}"
    _insert(usage_db(paths), [_good_row(time.time(), status=401, error=echoed)])
    for form in (["--json"], ["--csv"], ["--requests"]):
        got = run_kvswitch(["usage", *form], _home_env(fake_home), timeout=120)
        assert got.code == 0, got.stderr
        assert "is not valid" in got.stdout or form == ["--requests"]
        assert KEY not in got.output, form
        assert token not in got.output, form


# -- cosmetic -----------------------------------------------------------------------------------------
def test_a_session_id_two_clients_share_is_two_lines(paths: AppPaths,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    now = time.time()
    _insert(usage_db(paths), [_good_row(now - 3, "shared", client_name="claude-code"),
                              _good_row(now - 2, "shared", client_name="codex", client="codex"),
                              _good_row(now - 1, "shared", client_name="claude-code")])
    assert main(["sessions", "--json"]) == 0
    found = {(item["session"], item["client"]): item["requests"]
             for item in json.loads(capsys.readouterr().out)}
    assert found == {("shared", "claude-code"): 2, ("shared", "codex"): 1}
    assert main(["sessions"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("shared")]
    assert len(lines) == 2
    assert any("claude-code" in line for line in lines)
    assert any("codex" in line for line in lines)


@pytest.mark.parametrize("profile", ["\t=1+1", "\r=1+1", "  =1+1", " +cmd|' /C calc'!A0", "\t@SUM(A1)"])
def test_a_csv_cell_with_a_blank_before_a_formula_is_quoted(paths: AppPaths, profile: str,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    _insert(usage_db(paths), [_good_row(time.time(), profile=profile)])
    assert main(["usage", "--csv"]) == 0
    (row,) = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert row["profile"].startswith("'"), repr(row["profile"])
