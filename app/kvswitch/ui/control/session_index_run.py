"""Where an index pass runs for the window: in a child interpreter (``kvswitch.sessions.child``), else
(a frozen bundle, which has no interpreter to start) on the worker thread itself.

Seconds of JSON parsing in a thread of the window's process hold the GIL the GUI thread needs: with
1,000 Claude Code files the event loop stalled 60-90 ms on a loaded 2-core machine. In a child process
the worker thread only waits on a pipe (the GIL released), as the log panel's follower does
(``logs/log_worker.py``). The child's stderr goes to a temporary file, never a pipe nobody reads.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Any

#: the in-thread pass reports progress at most this often (and after the last file)
PROGRESS_EVERY_S = 0.1


@dataclass
class IndexProgress:
    """Files done and to do in the running pass, and the latest list of every session (``version``
    counts the lists); written by the worker, read on the GUI thread when it reports progress."""

    done: int = 0
    total: int = 0
    sessions: list[Any] = field(default_factory=list)
    version: int = 0

    def listed(self, sessions: list[Any]) -> None:
        self.sessions = sessions  # one assignment: the GUI thread sees the old list or the new one
        self.version += 1


def child_usable() -> bool:
    """A child interpreter can run ``-m kvswitch.sessions.child`` (not inside a frozen bundle)."""
    return not getattr(sys, "frozen", False)


def index_pass(paths: Any, state: IndexProgress, progress: Any, cancel: threading.Event,
               children: list[subprocess.Popen[str]]) -> Any:
    """One pass; returns its ``IndexReport`` (``state.sessions`` holds the list after it). ``children``
    holds the child while it runs (``stop`` terminates it: it ends between files, keeping what it read,
    and still reports)."""
    if not child_usable():
        return _in_thread(paths, state, progress, cancel)
    from kvswitch.sessions.child import report_from_json, summary_from_json  # noqa: PLC0415

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    argv = [sys.executable, "-m", "kvswitch.sessions.child", str(paths.config_dir), str(paths.data_dir),
            str(paths.log_dir)]
    report = None
    known: dict[tuple[str, str], Any] = {}  # every session the child listed, by (client, id)
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errors:
        child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=errors, stdin=subprocess.DEVNULL,
                                 text=True, encoding="utf-8", env=env)
        children.append(child)
        try:
            assert child.stdout is not None
            for line in child.stdout:
                data = json.loads(line)
                if "progress" in data:
                    state.done, state.total = (int(n) for n in data["progress"])
                    progress("", state.done / state.total if state.total else 1.0)
                elif "session" in data:
                    summary = summary_from_json(data["session"])
                    known[(summary.client, summary.session_id)] = summary
                elif "listed" in data:
                    state.listed([known[(c, i)] for c, i in data["listed"] if (c, i) in known])
                    progress("", state.done / state.total if state.total else 0.0)
                elif "report" in data:
                    report = report_from_json(data["report"])
                if cancel.is_set():
                    child.terminate()
            code = child.wait()
        finally:
            children.remove(child)
            if child.poll() is None:
                child.kill()
                child.wait()
        errors.seek(0)
        said = errors.read()[-1000:].strip()
    if report is None:
        raise RuntimeError(f"the index pass stopped (exit code {code}): {said}" if said
                           else f"the index pass stopped (exit code {code})")
    return report


def _in_thread(paths: Any, state: IndexProgress, progress: Any, cancel: threading.Event) -> Any:
    from kvswitch.sessions import index_sessions, list_sessions  # noqa: PLC0415

    state.listed(list_sessions(paths))
    progress("", 0.0)

    last = [0.0]

    def report(done: int, total: int, _path: str) -> None:
        state.done, state.total = done, total
        now = time.monotonic()
        if now - last[0] >= PROGRESS_EVERY_S or done >= total:
            last[0] = now
            progress("", done / total if total else 1.0)

    found = index_sessions(paths, None, report, cancel.is_set)
    state.listed(list_sessions(paths))
    return found
