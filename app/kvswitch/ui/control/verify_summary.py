"""The latest recorded verify of every profile, read off the GUI thread for the cards and the tray.

Cards paint often and the history files are the truth: reading them (and loading the verify engine,
which brings httpx) on every paint, or before the window is ready, would stall it. This is a read
cache of those files, refilled in the background whenever a verify adds to them or profiles change.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal

from kvswitch.ui.control import tasks

if TYPE_CHECKING:
    from kvswitch.core.paths import AppPaths

log = logging.getLogger("kvswitch.ui.control.verify_summary")


def read_latest(paths: AppPaths, names: list[str]) -> dict[str, Any]:
    """Each named profile's newest history entry (profiles never verified are left out)."""
    from kvswitch.verify.records import history  # noqa: PLC0415 - the verify engine loads httpx

    records = history(paths)
    latest: dict[str, Any] = {}
    for name in names:
        try:
            entries = records.load(name)
        except OSError as exc:
            log.info("verify history of %s unreadable: %s", name, exc)
            continue
        if entries:
            latest[name] = entries[-1]
    return latest


class VerifySummary(QObject):
    """``get(name)`` answers from the last background read; ``changed`` says a read finished.

    Signals:
        changed(): new latest entries are in (the cards and the tray repaint).
    """

    changed = Signal()

    def __init__(self, paths: AppPaths, names: Callable[[], list[str]], parent: QObject | None = None):
        super().__init__(parent)
        self._paths = paths
        self._names = names
        self._latest: dict[str, Any] = {}
        self._running: tasks.BackgroundTask | None = None
        self._again = False
        self._seen: tuple[tuple[str, int, int], ...] | None = None
        self.loaded = False

    def get(self, name: str) -> Any | None:
        """The profile's latest ``HistoryEntry`` as last read, or None (never verified, or not read yet)."""
        return self._latest.get(name)

    def history_stamp(self) -> tuple[tuple[str, int, int], ...]:
        """Name, size and mtime of every history file: a cheap test of whether anything was added."""
        try:
            with os.scandir(self._paths.data_dir / "verify-history") as entries:
                return tuple(sorted((e.name, e.stat().st_size, e.stat().st_mtime_ns) for e in entries))
        except OSError:
            return ()

    def reload_if_changed(self) -> None:
        """Read again when another process (``kvswitch verify``) added to the history files."""
        if self.history_stamp() != self._seen:
            self.reload()

    def reload(self) -> None:
        """Read the history files again in the background (one read at a time; a request during a read
        starts another after it, so a verify that just finished is never missed)."""
        if self._running is not None:
            self._again = True
            return
        names = list(self._names())
        paths = self._paths
        self._seen = self.history_stamp()

        def read(_cancel: threading.Event, _progress: Any) -> dict[str, Any]:
            return read_latest(paths, names)

        self._running = tasks.run_in_background(self, read, on_success=self._on_task_finished,
                                                on_failure=self._on_task_failed)

    def _on_task_finished(self, latest: object) -> None:
        self._running = None
        self._latest = dict(latest) if isinstance(latest, dict) else {}
        self.loaded = True
        self.changed.emit()
        self._again_if_asked()

    def _on_task_failed(self, exc: BaseException) -> None:
        self._running = None
        log.warning("verify history could not be read: %s", exc)
        self._again_if_asked()

    def _again_if_asked(self) -> None:
        if self._again:
            self._again = False
            self.reload()
