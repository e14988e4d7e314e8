"""Run slow work off the GUI thread and get the outcome back on it.

The shape follows Anki's ``QueryOp``: the work is a plain function that never touches widgets; its
result, its exception or its progress reports come back through a ``QObject`` emitter living on the GUI
thread, so Qt delivers them with queued connections. Every task gets a ``threading.Event`` to poll, and
the pool can be drained on quit so no worker outlives the window.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal, Slot

log = logging.getLogger("kvswitch.ui.control.tasks")

ProgressFn = Callable[[str, float], None]


class _Emitter(QObject):
    """Carries a worker's outcome to the GUI thread.

    Signals:
        succeeded(object): the function's return value.
        failed(object): the exception it raised.
        progressed(str, float): a status line and a fraction 0..1.
    """

    succeeded = Signal(object)
    failed = Signal(object)
    progressed = Signal(str, float)


class _Runnable(QRunnable):
    def __init__(self, fn: Callable[[threading.Event, ProgressFn], Any], cancel: threading.Event,
                 emitter: _Emitter):
        super().__init__()
        self.setAutoDelete(True)
        self._fn = fn
        self._cancel = cancel
        self._emitter = emitter

    def run(self) -> None:
        try:
            result = self._fn(self._cancel, self._emitter.progressed.emit)
        except BaseException as exc:  # every failure must reach the GUI, never the void
            self._emitter.failed.emit(exc)
        else:
            self._emitter.succeeded.emit(result)


class BackgroundTask(QObject):
    """One unit of background work; keep a reference while it runs.

    Signals:
        finished(object): the return value, on the GUI thread.
        failed(object): the exception, on the GUI thread.
        progressed(str, float): progress reports, on the GUI thread.
    """

    finished = Signal(object)
    failed = Signal(object)
    progressed = Signal(str, float)

    def __init__(self, fn: Callable[[threading.Event, ProgressFn], Any], parent: QObject | None = None):
        super().__init__(parent)
        self.cancel_event = threading.Event()
        self.running = False
        self._emitter = _Emitter()
        self._emitter.succeeded.connect(self._on_worker_succeeded)
        self._emitter.failed.connect(self._on_worker_failed)
        self._emitter.progressed.connect(self.progressed)
        self._fn = fn

    def start(self, pool: QThreadPool | None = None) -> None:
        self.running = True
        (pool or task_pool()).start(_Runnable(self._fn, self.cancel_event, self._emitter))

    def cancel(self) -> None:
        """Ask the worker to stop; it polls the event, and its outcome still arrives."""
        self.cancel_event.set()

    @Slot(object)
    def _on_worker_succeeded(self, result: object) -> None:
        self.running = False
        self.finished.emit(result)

    @Slot(object)
    def _on_worker_failed(self, exc: object) -> None:
        self.running = False
        self.failed.emit(exc)


def run_in_background(parent: QObject, fn: Callable[[threading.Event, ProgressFn], Any], *,
                      on_success: Callable[[Any], None], on_failure: Callable[[BaseException], None],
                      on_progress: Callable[[str, float], None] | None = None) -> BackgroundTask:
    """Start ``fn(cancel_event, progress)`` on the shared pool; callbacks run on the GUI thread."""
    task = BackgroundTask(fn, parent)
    task.finished.connect(on_success)
    task.failed.connect(on_failure)
    if on_progress is not None:
        task.progressed.connect(on_progress)
    task.start()
    return task


_POOL: QThreadPool | None = None


def task_pool() -> QThreadPool:
    """The app's pool: separate from Qt's global one so draining it on quit touches only our work."""
    global _POOL
    if _POOL is None:
        _POOL = QThreadPool()
        _POOL.setMaxThreadCount(4)
    return _POOL


def drain(timeout_ms: int = 5000) -> bool:
    """Wait for running tasks (call after cancelling them); True when the pool is idle."""
    if _POOL is None:
        return True
    return _POOL.waitForDone(timeout_ms)
