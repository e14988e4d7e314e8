"""One index pass in a child interpreter, for the window: ``python -m kvswitch.sessions.child CONFIG DATA
LOG`` (the three ``AppPaths`` directories).

A pass is seconds of JSON parsing, and listing 1,000 sessions a quarter of a second of Python; run in
threads of the window's process they take the GIL from the GUI thread (measured with 1,000 Claude Code
files on a loaded 2-core machine: stalls of 90-130 ms where the idle loop showed 8 ms). Here they run in
their own interpreter, as the log engine's follower does (``kvswitch.logs.follow``), and the window's
worker only reads what this prints, one JSON object a line:

    {"session": {...}}               a session new or changed since the last list (``to_json``)
    {"listed": [[client, id], ...]}  every session, newest first: what is indexed already, then again
                                     while the pass runs and at its end (each after its changed sessions)
    {"progress": [done, total]}      at most every 0.1 s, and after the last file
    {"report": {...}}                the pass's ``IndexReport`` (``report_to_json``), last

SIGTERM ends the pass between files, keeping what was read (``should_stop``), and still prints the report.
The child lowers its own priority (``nice`` 10): on a loaded machine the window goes first.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from dataclasses import fields
from pathlib import Path
from typing import Any

from kvswitch.core.paths import AppPaths
from kvswitch.sessions import IndexReport, SessionSummary, index_sessions, list_sessions

PROGRESS_EVERY_S = 0.1
#: the list is printed at most this often while a pass runs, and never more than a fifth of the time
LIST_EVERY_S = 1.0

_SUMMARY_FIELDS = tuple(field.name for field in fields(SessionSummary))
_TUPLES = frozenset({"versions", "models", "unpriced", "notes", "files"})


def report_to_json(report: IndexReport) -> dict[str, Any]:
    return {
        "files_seen": report.files_seen,
        "files_read": report.files_read,
        "bytes_read": report.bytes_read,
        "sessions_changed": sorted([client, session] for client, session in report.sessions_changed),
        "notes": report.notes,
    }


def report_from_json(data: dict[str, Any]) -> IndexReport:
    return IndexReport(
        files_seen=int(data.get("files_seen", 0)),
        files_read=int(data.get("files_read", 0)),
        bytes_read=int(data.get("bytes_read", 0)),
        sessions_changed={(str(c), str(s)) for c, s in data.get("sessions_changed", [])},
        notes={str(path): [str(note) for note in notes] for path, notes in data.get("notes", {}).items()},
    )


def summary_from_json(data: dict[str, Any]) -> SessionSummary:
    """The ``SessionSummary`` that ``to_json`` gave (its derived keys ignored)."""
    values = {name: data[name] for name in _SUMMARY_FIELDS if name in data}
    for name in _TUPLES & values.keys():
        values[name] = tuple(values[name])
    return SessionSummary(**values)


def _say(value: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(value) + "\n")
    sys.stdout.flush()


class _Lister:
    """Prints the list now and then while the pass runs, at most a fifth of the time: each session whose
    summary changed since the last list on a line of its own (small lines: the reader never holds its
    GIL for one long parse), then the order of all of them."""

    def __init__(self, paths: AppPaths):
        self.paths = paths
        self.due = 0.0
        self.sent: dict[tuple[str, str], str] = {}

    def say(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now < self.due:
            return
        sessions = list_sessions(self.paths)
        for summary in sessions:
            text = json.dumps(summary.to_json())
            key = (summary.client, summary.session_id)
            if self.sent.get(key) != text:
                self.sent[key] = text
                sys.stdout.write('{"session": ' + text + "}\n")
        _say({"listed": [[summary.client, summary.session_id] for summary in sessions]})
        self.due = time.monotonic() + max(LIST_EVERY_S, (time.monotonic() - now) * 4)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 3:
        sys.stderr.write("usage: python -m kvswitch.sessions.child CONFIG_DIR DATA_DIR LOG_DIR\n")
        return 2
    paths = AppPaths(Path(args[0]), Path(args[1]), Path(args[2]))
    if hasattr(os, "nice"):
        os.nice(10)  # background work: on a busy machine the window the user looks at goes first
    stopping: list[bool] = []
    signal.signal(signal.SIGTERM, lambda _signum, _frame: stopping.append(True))
    lister = _Lister(paths)
    lister.say(force=True)
    last = [0.0]

    def progress(done: int, total: int, _path: str) -> None:
        now = time.monotonic()
        if now - last[0] >= PROGRESS_EVERY_S or done >= total:
            last[0] = now
            _say({"progress": [done, total]})
            if done < total:
                lister.say()

    report = index_sessions(paths, None, progress, lambda: bool(stopping))
    if report.sessions_changed:
        lister.say(force=True)
    _say({"report": report_to_json(report)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
