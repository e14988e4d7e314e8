"""What a verify runs on the worker thread: the synthetic cache probe and the scripted Claude Code session.

Kept apart from the controller because these functions cross the thread boundary: each is built on the
GUI thread from plain values (paths, the profile, a timeout, an already-translated label) and then runs on
the pool (``tasks.run_in_background``), where it may touch only the engines — never the controller, a
widget or a signal. Their outcome and progress reach the GUI thread through the task. The engines are
imported inside the functions, on first use, so the window starts without them.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kvswitch.core.errors import KvSwitchError

if TYPE_CHECKING:
    from kvswitch.core.paths import AppPaths
    from kvswitch.ui.control.tasks import ProgressFn


def synthetic_verify_op(paths: AppPaths, profile: Any,
                        timeout: float) -> Callable[[threading.Event, ProgressFn], Any]:
    """The cache probe of ``profile``; a finished (not cancelled) run is added to its history."""

    def op(cancel: threading.Event, progress: ProgressFn) -> Any:
        from kvswitch.verify import run_verify  # noqa: PLC0415 - loaded on first use
        from kvswitch.verify.records import remember_synthetic  # noqa: PLC0415

        result = run_verify(profile, timeout=timeout, cancel=cancel, progress=progress)
        if not cancel.is_set():  # a cancelled run says nothing about the server
            with contextlib.suppress(OSError, KvSwitchError):  # a full disk must not hide the verdict
                remember_synthetic(paths, profile, result)
        return result

    return op


def client_verify_op(paths: AppPaths, profile: Any, binary: Path, timeout: float, label: str,
                     client: str = "claude") -> Callable[[threading.Event, ProgressFn], Any]:
    """The scripted session of a client (``binary``: Claude Code, Codex or OpenCode) through ``profile``,
    recorded in its history.

    Progress comes per conversation turn, as ``label`` with ``%1`` replaced by the turn's text.
    """

    def op(cancel: threading.Event, progress: ProgressFn) -> Any:
        from kvswitch.verify.client_run import SCRIPT  # noqa: PLC0415
        from kvswitch.verify.records import run_client_check  # noqa: PLC0415

        done = [0]

        def step(text: str) -> None:
            progress(label.replace("%1", text), done[0] / len(SCRIPT))
            done[0] += 1

        report = run_client_check(paths, profile, binary, timeout=timeout, on_step=step, cancel=cancel,
                                  client=client)
        progress(label.replace("%1", "done"), 1.0)
        return report

    return op
