"""Reads and classifies a server log off the GUI thread; the panel collects the result on a timer.

A flood (tens of thousands of lines a second) must not freeze the window, so a worker does all the
per-line work (read, strip, classify, assemble requests) and leaves the results in bounded buffers.
The GUI takes everything waiting every 50 ms in one go and draws it in time-boxed slices
(``log_panel.DRAW_BUDGET_MS``). When the GUI cannot keep up, the oldest lines waiting are dropped (and
counted) — events are never dropped before the table's own cap, because the table is how a broken
cache is seen.

Two workers share that contract: ``ProcessLogFollower`` (the default) runs ``kvswitch.logs.follow`` in its own
process, because classifying a flood in a thread of the GUI process starves the GUI of the GIL;
``LogFollower`` is the in-process thread, used where a child interpreter cannot be started (a frozen
bundle).
"""

from __future__ import annotations

import logging
import os
import pickle
import struct
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from PySide6.QtCore import QProcess, QProcessEnvironment

from kvswitch.logs.follow import DrawBudget, classify_lines

if TYPE_CHECKING:
    from kvswitch.core.models import LogSource
    from kvswitch.logs.model import CacheEvent, ClassifiedLine

__all__ = ["DrawBudget", "LogBatch", "LogFollower", "ProcessLogFollower", "classify_lines"]

log = logging.getLogger("kvswitch.ui.logs")

POLL_INTERVAL_S = 0.05


@dataclass
class LogBatch:
    """Everything the worker produced since the last take."""

    lines: list[ClassifiedLine] = field(default_factory=list)  # oldest first
    events: list[CacheEvent] = field(default_factory=list)  # oldest first
    dropped_lines: int = 0
    status: str | None = None  # the reader's status, when it changed
    error: str | None = None


class LogFollower:
    """A daemon thread following one log source.

    Args:
        source: the profile's ``LogSource``.
        kind_hint: the profile kind, so the classifier tries that server's formats first.
        max_pending_lines: how many lines may wait for the GUI before the oldest are dropped.
        max_pending_events: the same for cache events.
        tail_lines: how many existing lines to show when following starts.
    """

    def __init__(self, source: LogSource, kind_hint: str | None, *, max_pending_lines: int = 5000,
                 max_pending_events: int = 5000, tail_lines: int = 200):
        self.source = source
        self.kind_hint = kind_hint
        self.tail_lines = tail_lines
        self._lines: deque[ClassifiedLine] = deque(maxlen=max_pending_lines)
        self._events: deque[CacheEvent] = deque(maxlen=max_pending_events)
        self._dropped = 0
        self._status: str | None = None
        self._status_changed = False
        self._error: str | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.lines_read = 0

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="kvswitch-log-follower", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        """Stop and wait (the worker checks the flag between polls)."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def take(self) -> LogBatch:
        """Everything waiting, handed over at once (called by the GUI timer)."""
        with self._lock:
            batch = LogBatch(list(self._lines), list(self._events), self._dropped,
                             self._status if self._status_changed else None, self._error)
            self._lines.clear()
            self._events.clear()
            self._dropped = 0
            self._status_changed = False
            self._error = None
        return batch

    # -- worker thread -----------------------------------------------------------------------------

    def _set_status(self, status: str | None) -> None:
        if status is not None and status != self._status:
            with self._lock:
                self._status = status
                self._status_changed = True

    def _run(self) -> None:
        from kvswitch.core.errors import KvSwitchError  # noqa: PLC0415
        from kvswitch.logs import LogAnalyzer  # noqa: PLC0415
        from kvswitch.logs.sources import open_source  # noqa: PLC0415

        try:
            reader = open_source(self.source, start_at_end=True, tail_lines=self.tail_lines)
        except KvSwitchError as exc:
            with self._lock:
                self._error = str(exc)
            return
        analyzer = LogAnalyzer(self.kind_hint)
        line_no = 0
        try:
            while not self._stop.is_set():
                try:
                    lines = reader.read_lines()
                except KvSwitchError as exc:
                    self._set_status(str(exc))
                    lines = []
                self._set_status(_status_text(getattr(reader, "status", None)))
                if lines:
                    classified, events, line_no = classify_lines(analyzer, lines, line_no)
                    self.lines_read += len(lines)
                    with self._lock:
                        overflow = len(self._lines) + len(classified) - (self._lines.maxlen or 0)
                        if overflow > 0:
                            self._dropped += overflow
                        self._lines.extend(classified)
                        self._events.extend(events)
                    if len(lines) >= 2000:
                        time.sleep(0.001)  # a flood: hand the GIL to the GUI between chunks
                        continue
                self._stop.wait(POLL_INTERVAL_S)
        except Exception as exc:  # a broken reader must end the follower, never the app
            log.exception("log follower stopped")
            with self._lock:
                self._error = f"{type(exc).__name__}: {exc}"
        finally:
            try:
                reader.close()
            except Exception:  # closing a vanished source is not worth reporting
                log.debug("closing the log reader failed", exc_info=True)


def _status_text(status: object) -> str | None:
    if status is None:
        return None
    message = getattr(status, "message", None)
    return str(message) if message else str(getattr(status, "value", status))


class ProcessLogFollower:
    """Follows a log source in a child process (``kvswitch.logs.follow``); same API as LogFollower."""

    def __init__(self, source: LogSource, kind_hint: str | None, *, max_pending_lines: int = 5000,
                 max_pending_events: int = 5000, tail_lines: int = 200, max_lines_per_frame: int = 600):
        self.source = source
        self.kind_hint = kind_hint
        self.tail_lines = tail_lines
        self.max_lines_per_frame = max_lines_per_frame
        self._lines: deque[ClassifiedLine] = deque(maxlen=max_pending_lines)
        self._events: deque[CacheEvent] = deque(maxlen=max_pending_events)
        self._buffer = b""
        self._dropped = 0
        self._status: str | None = None
        self._error: str | None = None
        self._stopping = False
        self.lines_read = 0
        self.process = QProcess()
        self.process.setProcessChannelMode(QProcess.ProcessChannelMode.SeparateChannels)
        self.process.finished.connect(self._on_process_finished)

    @staticmethod
    def usable() -> bool:
        """A child interpreter can run ``-m kvswitch.logs.follow`` (not inside a frozen bundle)."""
        return not getattr(sys, "frozen", False)

    def start(self) -> None:
        env = QProcessEnvironment.systemEnvironment()
        env.insert("PYTHONPATH", os.pathsep.join(p for p in sys.path if p))
        self.process.setProcessEnvironment(env)
        self.process.start(sys.executable, ["-m", "kvswitch.logs.follow", self.source.model_dump_json(),
                                            self.kind_hint or "", str(self.tail_lines),
                                            str(self.max_lines_per_frame)])

    def stop(self, timeout: float = 2.0) -> None:
        self._stopping = True
        if self.process.state() == QProcess.ProcessState.NotRunning:
            return
        self.process.closeWriteChannel()  # the child exits when its stdin closes...
        if self.process.waitForFinished(300):
            return
        self.process.terminate()  # ...unless it is blocked writing a frame nobody reads any more
        if not self.process.waitForFinished(int(timeout * 1000)):
            self.process.kill()
            self.process.waitForFinished(1000)

    @property
    def alive(self) -> bool:
        return self.process.state() != QProcess.ProcessState.NotRunning

    def take(self) -> LogBatch:
        self._read_frames()
        batch = LogBatch(list(self._lines), list(self._events), self._dropped, self._status, self._error)
        self._lines.clear()
        self._events.clear()
        self._dropped = 0
        self._status = None
        self._error = None
        return batch

    def _read_frames(self) -> None:
        self._buffer += bytes(self.process.readAllStandardOutput().data())
        while len(self._buffer) >= 4:
            (size,) = struct.unpack(">I", self._buffer[:4])
            if len(self._buffer) < 4 + size:
                break
            frame = pickle.loads(self._buffer[4:4 + size])  # our own child's output, never foreign data
            self._buffer = self._buffer[4 + size:]
            lines = frame.get("lines") or []
            overflow = len(self._lines) + len(lines) - (self._lines.maxlen or 0)
            self._dropped += int(frame.get("dropped", 0)) + max(0, overflow)
            self._lines.extend(lines)
            self._events.extend(frame.get("events") or [])
            self.lines_read = int(frame.get("lines_read", self.lines_read))
            if frame.get("status"):
                self._status = str(frame["status"])
            if frame.get("error"):
                self._error = str(frame["error"])

    def _on_process_finished(self, code: int, _status: QProcess.ExitStatus) -> None:
        if self._stopping:
            return
        errors = bytes(self.process.readAllStandardError().data()).decode("utf-8", "replace").strip()
        if errors:
            log.warning("log reader process ended (%s): %s", code, errors[-2000:])
        self._read_frames()
        if not self._error:
            self._error = f"the log reader stopped unexpectedly (exit code {code}); select the profile again"
