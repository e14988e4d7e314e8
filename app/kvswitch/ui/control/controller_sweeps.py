"""The controller's sweeps: the newest ``kvswitch sweep`` of a profile, read from its verify history.

A mixin of ``AppController``. The history file is read (and the verify engine, with httpx, imported)
on the task pool, never on the GUI thread; the view gets the ``SweepRun`` back by callback, on the GUI
thread, and keeps no copy of the file beyond what it draws.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kvswitch.ui.control import tasks

if TYPE_CHECKING:
    from PySide6.QtCore import QObject

    from kvswitch.core.paths import AppPaths
    from kvswitch.verify.sweep_history import SweepRun


class SweepControllerMixin:
    paths: AppPaths
    _sweep_task: tasks.BackgroundTask | None = None

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

    def run_sweep(self, name: str, server_command: str, varies: list[str],
                  on_step: Callable[[str, float], None], on_done: Callable[[Any], None],
                  on_failed: Callable[[BaseException], None], tier_command: str = "") -> tasks.BackgroundTask:
        """``kvswitch sweep NAME --server-cmd CMD --vary ...`` from the window, on the task pool: the same
        engine (``verify.sweep.run_sweep`` with verify's synthetic probe), each row into the profile's
        verify history as it is made (the chart reloads through ``history_changed``), ``on_step(text,
        fraction done)`` for every step the command prints. Cancelling the task stops the sweep between
        steps: the server it started is stopped, the rows measured so far stay. ``tier_command``: a cache
        tier's server started before the server in every setting (``--tier-cmd``), empty for none."""
        paths, store = self.paths, self.store  # type: ignore[attr-defined]

        def work(cancel: Any, progress: Callable[[str, float], None]) -> Any:
            from kvswitch.verify import sweep, sweep_measure  # noqa: PLC0415 - the probe loads only here
            from kvswitch.verify.records import history  # noqa: PLC0415

            profile = store.get(name)
            command = sweep_argv(server_command)
            tier = sweep_argv(tier_command, "cache tier command") if tier_command.strip() else None
            parsed = [sweep.parse_vary(text) for text in varies]
            total = max(1, len(sweep.grid(parsed)))
            records = history(paths)
            done = [0]

            def on_row(row: Any, measured: Any) -> None:
                records.append(sweep.history_entry(profile, row, measured))
                done[0] += 1
                progress(f"{row.setting}: {row.verdict or row.status.upper()}", done[0] / total)

            logs = paths.data_dir / "verify-history" / "sweep-logs" / sweep.run_stamp()
            return sweep.run_sweep(
                profile, command, parsed, sweep_measure.synthetic(), probe="synthetic probe", timeout=60.0,
                start_timeout=300.0, log_dir=logs,
                on_step=lambda text: progress(text, done[0] / total), on_row=on_row, cancel=cancel,
                tier_command=tier)

        def finished(report: Any) -> None:
            self.history_changed.emit(name)  # type: ignore[attr-defined]
            on_done(report)

        def failed(exc: BaseException) -> None:
            self.history_changed.emit(name)  # type: ignore[attr-defined]  # rows made before it failed
            on_failed(exc)

        parent: QObject = self  # type: ignore[assignment]  # the AppController, a QObject
        self._sweep_task = tasks.run_in_background(parent, work, on_success=finished, on_failure=failed,
                                                   on_progress=on_step)
        return self._sweep_task

    def cancel_sweep(self) -> None:
        """Stop a sweep the window runs (on quit): the engine stops the server it started, so none is
        left running once the pool is drained."""
        task = self._sweep_task
        if task is not None and task.running:
            task.cancel()


def sweep_argv(server_command: str, what: str = "server command") -> list[str]:
    """A command as ``kvswitch sweep --server-cmd`` / ``--tier-cmd`` splits it (shell words, no shell)."""
    from kvswitch.core.errors import UsageError  # noqa: PLC0415

    try:
        argv = shlex.split(server_command)
    except ValueError as exc:
        raise UsageError(f"{what}: {exc}") from None
    if not argv:
        raise UsageError(f"the {what} is empty")
    return argv


def sweep_command_line(name: str, server_command: str, varies: list[str], tier_command: str = "") -> str:
    """The ``kvswitch sweep`` command that does what the window's sweep does, to copy into a terminal."""
    words = ["kvswitch", "sweep", name, "--server-cmd", server_command.strip()]
    if tier_command.strip():
        words += ["--tier-cmd", tier_command.strip()]
    words += [f"--vary={vary}" for vary in varies]
    return shlex.join(words)
