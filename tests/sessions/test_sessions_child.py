"""The window's index pass in a child interpreter (``python -m kvswitch.sessions.child``): on the real
captured client files (``tests/fixtures/sessions-2026-12``) it prints its progress, the sessions (equal to
``list_sessions``' after the pass) and the same report a pass in this process gives; ``SessionFilter.matches``
keeps in memory exactly what ``list_sessions`` keeps with that filter."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from kvswitch.core.paths import AppPaths
from kvswitch.sessions import SessionFilter, index_sessions, list_sessions
from kvswitch.sessions.child import report_from_json, report_to_json, summary_from_json

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "sessions-2026-12"


def _copy(home: Path) -> None:
    shutil.copytree(FIXTURE / "claude" / "projects", home / ".claude" / "projects")
    shutil.copytree(FIXTURE / "codex" / "sessions", home / ".codex" / "sessions")
    database = home / ".local" / "share" / "opencode" / "opencode.db"
    database.parent.mkdir(parents=True)
    shutil.copy(FIXTURE / "opencode" / "opencode.db", database)


def test_a_pass_in_the_child_is_the_pass_in_process(fake_home: Path, tmp_path: Path) -> None:
    _copy(fake_home)
    paths = AppPaths.default()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    done = subprocess.run([sys.executable, "-m", "kvswitch.sessions.child", str(paths.config_dir),
                           str(paths.data_dir), str(paths.log_dir)], capture_output=True, text=True,
                          env=env, timeout=120, check=True)
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines[0] == {"listed": []}  # what was indexed before the pass: nothing
    # one step per transcript and rollout, and one for OpenCode's database; the last always reported
    steps = sum(1 for _ in FIXTURE.glob("*/*/**/*.jsonl")) + 1
    assert {"progress": [steps, steps]} in lines
    report = report_from_json(lines[-1]["report"])
    assert len(report.sessions_changed) == len({run["session"] for run in json.loads(
        (FIXTURE / "truth.json").read_text(encoding="utf-8"))["runs"]})
    assert report.notes == {}
    listed = list_sessions(paths)
    assert {(s.client, s.session_id) for s in listed} == report.sessions_changed
    known = {}
    for line in lines:  # each session on its own line when it changed, then the order of all
        if "session" in line:
            summary = summary_from_json(line["session"])
            known[(summary.client, summary.session_id)] = summary
    assert [known[(c, i)] for c, i in lines[-2]["listed"]] == listed

    other = AppPaths(tmp_path / "c", tmp_path / "d", tmp_path / "l")  # a fresh index, in this process
    in_process = index_sessions(other)
    assert report_to_json(in_process) == report_to_json(report)
    assert [s.to_json() for s in list_sessions(other)] == [s.to_json() for s in listed]


def test_the_child_refuses_wrong_arguments() -> None:
    done = subprocess.run([sys.executable, "-m", "kvswitch.sessions.child"], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 2
    assert "usage:" in done.stderr


def test_a_filter_in_memory_keeps_what_the_index_keeps(fake_home: Path) -> None:
    _copy(fake_home)
    paths = AppPaths.default()
    index_sessions(paths)
    every = list_sessions(paths)
    middle = sorted(s.last_time or 0 for s in every)[len(every) // 2]
    for filters in (SessionFilter(), SessionFilter(client="codex"), SessionFilter(client="claude"),
                    SessionFilter(project="SESSIONS-project"), SessionFilter(project="elsewhere"),
                    SessionFilter(since=middle), SessionFilter(client="opencode", since=middle + 1)):
        assert [s for s in every if filters.matches(s)] == list_sessions(paths, filters), filters
