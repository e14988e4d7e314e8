"""The Sessions view's actions: index the clients' own files, list and open sessions, export and resume
one, and the tray's alert for a session from files whose hit rate fell under the threshold.

Everything that reads the index or the clients' files runs off the GUI thread: ``kvswitch.sessions`` opens
its own SQLite connection per call (WAL), so the list is read again while a pass still indexes, and the
view fills as the pass goes. The pass runs in a child interpreter (``session_index_run``) that also
lists the sessions now and then, so neither its parsing nor the listing takes the GIL from the GUI
thread; the filters and the search are applied here to the list it gave (``SessionFilter.matches``).
"""

from __future__ import annotations

import logging
import subprocess
import threading
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QTimer, Signal

from kvswitch.ui.control import tasks
from kvswitch.ui.control.session_file_alerts import FileSessionAlerts, LowSession, low_sessions
from kvswitch.ui.control.session_index_run import IndexProgress, index_pass

if TYPE_CHECKING:
    from kvswitch.sessions import SessionFilter, SessionSummary, Turn
    from kvswitch.ui.control.controller import AppController

log = logging.getLogger("kvswitch.ui.control.sessions")

#: the tray's pass over the clients' files (incremental: only what was appended is read)
POLL_MS = 60_000
#: the first pass waits until the start-up is long over (showing the tab indexes at once)
FIRST_PASS_MS = 30_000


def matches(summary: SessionSummary, words: list[str]) -> bool:
    """The search box: every word in the title, project, id, client or a model (case-insensitive)."""
    text = " ".join((summary.title, summary.project, summary.session_id, summary.client,
                     *summary.models)).lower()
    return all(word in text for word in words)


class SessionsController(QObject):
    """Sessions from the clients' files for the window and the tray.

    Signals:
        index_started(): a pass over the clients' files began.
        index_progressed(int, int): files done and to do in the running pass.
        sessions_indexed(object): the pass's ``IndexReport`` (its notes name the files it could not read).
        index_failed(str): the index itself could not be read or written.
        sessions_listed(object): the ``SessionSummary`` list for the filters and search, newest first.
        session_loaded(object, object): one session's ``SessionSummary`` and its ``Turn`` list.
        session_failed(str): a session could not be opened (gone from the index, say).
    """

    index_started = Signal()
    index_progressed = Signal(int, int)
    sessions_indexed = Signal(object)
    index_failed = Signal(str)
    sessions_listed = Signal(object)
    session_loaded = Signal(object, object)
    session_failed = Signal(str)

    def __init__(self, app: AppController, parent: QObject | None = None):
        super().__init__(parent)
        from kvswitch.sessions import SessionFilter  # noqa: PLC0415 - loaded with the tab, not at start

        self.app = app
        self.paths = app.paths
        self.filters: SessionFilter = SessionFilter()
        self.search = ""
        self.progress = IndexProgress()
        self.passes = 0
        self.alerts = FileSessionAlerts()
        self._index_task: tasks.BackgroundTask | None = None
        #: every indexed session, newest first, as the last pass listed them (``refresh_list`` filters)
        self.all_sessions: list[SessionSummary] = []
        self._list_version = 0
        self._load_task: tasks.BackgroundTask | None = None
        self._timer: QTimer | None = None
        self._stopped = False
        #: the child interpreter of the running pass (``index_pass``), ended by ``stop``
        self._children: list[subprocess.Popen[str]] = []

    @property
    def indexing(self) -> bool:
        return self._index_task is not None and self._index_task.running

    @property
    def busy(self) -> bool:
        """Any of this controller's work still on a worker."""
        return any(task is not None and task.running
                   for task in (self._index_task, self._load_task))

    # -- indexing ----------------------------------------------------------------------------------

    def watch(self, interval_ms: int = POLL_MS, first_ms: int = FIRST_PASS_MS) -> None:
        """Index every ``interval_ms`` (the tray's alert), the first pass after ``first_ms``."""
        if self._timer is None:
            self._timer = QTimer(self)
            self._timer.timeout.connect(self.index)
        self._timer.start(interval_ms)
        QTimer.singleShot(first_ms, self, self.index)

    def index(self) -> None:
        """One incremental pass on a worker, unless one runs; ``sessions_indexed`` when it ends."""
        if self._stopped or self.indexing:
            return
        paths, state, threshold = self.paths, self.progress, self._threshold()
        announce = self.passes > 0  # the first pass only learns what is low already
        state.done = state.total = 0

        children = self._children

        def op(cancel: threading.Event, progress: tasks.ProgressFn) -> tuple[Any, list[LowSession]]:
            report = index_pass(paths, state, progress, cancel, children)
            low = [] if threshold is None else low_sessions(paths, state.sessions, report.sessions_changed,
                                                            threshold, causes=announce)
            return report, low

        self._index_task = tasks.run_in_background(self, op, on_success=self._on_index_succeeded,
                                                   on_failure=self._on_index_failed,
                                                   on_progress=self._on_index_progressed)
        self.index_started.emit()

    def _threshold(self) -> float | None:
        """The Settings threshold, or None when the alerts are switched off (nothing to judge then)."""
        if self.app.preference("reuse_alerts") is False or self.app.preference("cache_alerts") is False:
            return None
        value = self.app.preference("cache_alert_threshold")
        return float(value if value is not None else 0.8)

    def _on_index_progressed(self, _path: str, _fraction: float) -> None:
        self.index_progressed.emit(self.progress.done, self.progress.total)
        self._take_list()

    def _take_list(self) -> None:
        """The pass's latest list of every session, when it is newer than the one shown."""
        if self.progress.version != self._list_version:
            self._list_version = self.progress.version
            self.all_sessions = self.progress.sessions
            self.refresh_list()

    def _on_index_succeeded(self, outcome: tuple[Any, list[LowSession]]) -> None:
        report, low = outcome
        self.passes += 1
        self._take_list()
        self.sessions_indexed.emit(report)
        threshold = self._threshold()
        if threshold is None:
            return
        for text in self.alerts.feed(low, report.sessions_changed, threshold, announce=self.passes > 1):
            self.app.raise_session_alert(text)

    def _on_index_failed(self, exc: BaseException) -> None:
        log.warning("indexing sessions: %s", exc)
        self.index_failed.emit(str(exc) or type(exc).__name__)

    # -- the list ----------------------------------------------------------------------------------

    def set_filters(self, client: str | None, project: str | None, since: float | None, search: str) -> None:
        """What the list keeps; the list is read again on a worker."""
        self.filters = replace(self.filters, client=client or None, project=project or None, since=since)
        self.search = search
        self.refresh_list()

    def refresh_list(self) -> None:
        """The list for the current filters and search, from the pass's latest list of every session
        (in memory: filtering 5,000 sessions takes a few milliseconds, reading them from the index a
        second of Python that would take the GIL from this thread)."""
        keep, words = self.filters.matches, self.search.lower().split()
        self.sessions_listed.emit([s for s in self.all_sessions if keep(s) and matches(s, words)])

    # -- one session -------------------------------------------------------------------------------

    def open_session(self, session_id: str) -> None:
        """A session's summary and turn table, on a worker: ``session_loaded`` or ``session_failed``."""
        paths = self.paths

        def op(_cancel: threading.Event, _progress: Any) -> tuple[SessionSummary, list[Turn]]:
            from kvswitch.sessions import session_turns  # noqa: PLC0415

            return session_turns(paths, session_id)

        self._load_task = tasks.run_in_background(self, op, on_success=self._on_load_succeeded,
                                                  on_failure=self._on_load_failed)

    def _on_load_succeeded(self, outcome: tuple[SessionSummary, list[Turn]]) -> None:
        self.session_loaded.emit(*outcome)

    def _on_load_failed(self, exc: BaseException) -> None:
        self.session_failed.emit(str(exc) or type(exc).__name__)

    def export_markdown(self, path: Path, summary: SessionSummary, turns: list[Turn]) -> Path:
        """Write the session as masked Markdown (``session_markdown``); raises ``OSError`` or
        ``KvSwitchError`` with a message for the user."""
        from kvswitch.ui.control.session_markdown import write_session_markdown  # noqa: PLC0415

        return write_session_markdown(path, summary, turns)

    def resume(self, summary: SessionSummary) -> str | None:
        """Open the user's terminal in the project running the resume command; the terminal used, or
        None when none was found (the view copies the command then)."""
        from kvswitch.ui.control.terminal_launch import open_in_terminal  # noqa: PLC0415

        terminal = open_in_terminal(summary.resume_command, summary.project)
        log.info("resume %s %s in %s", summary.client, summary.session_id, terminal or "no terminal")
        return terminal

    def stop(self) -> None:
        """Stop the timer and ask a running pass to end between files (the app is quitting)."""
        self._stopped = True
        if self._timer is not None:
            self._timer.stop()
        if self._index_task is not None:
            self._index_task.cancel()
        for child in list(self._children):
            child.terminate()  # the pass ends between files, keeping what it read

