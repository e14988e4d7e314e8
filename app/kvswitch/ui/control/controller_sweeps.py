"""The controller's sweeps: the newest ``kvswitch sweep`` of a profile, read from its verify history.

A mixin of ``AppController``. The history file is read (and the verify engine, with httpx, imported)
on the task pool, never on the GUI thread; the view gets the ``SweepRun`` back by callback, on the GUI
thread, and keeps no copy of the file beyond what it draws.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kvswitch.ui.control import tasks

if TYPE_CHECKING:
    from PySide6.QtCore import QObject

    from kvswitch.core.paths import AppPaths
    from kvswitch.verify.sweep_history import SweepRun


class SweepControllerMixin:
    paths: AppPaths

    def load_latest_sweep(self, name: str, on_loaded: Callable[[SweepRun | None], None],
                          on_failed: Callable[[BaseException], None]) -> tasks.BackgroundTask:
        """Read ``name``'s newest sweep in the background; ``on_loaded(None)`` when it has none."""
        paths = self.paths

        def read(_cancel: Any, _progress: Any) -> SweepRun | None:
            from kvswitch.verify.records import history  # noqa: PLC0415 - loads httpx, off the GUI thread
            from kvswitch.verify.sweep_history import latest_sweep  # noqa: PLC0415

            return latest_sweep(history(paths), name)

        parent: QObject = self  # type: ignore[assignment]  # the AppController, a QObject
        return tasks.run_in_background(parent, read, on_success=on_loaded, on_failure=on_failed)
