"""The controller's verify side: the synthetic cache probe and the scripted client session, one at a
time on the thread pool, their outcome turned into the tray's cache state and the profile's history.

A mixin of ``AppController`` (which declares the ``verify_*`` signals and sets the ``verify*`` fields in
its ``__init__``), split out so the controller stays under the project's 400-line module size; the
messages keep the ``AppController`` translation context they had there.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QCoreApplication, Slot

from kvswitch.core.errors import KvSwitchError
from kvswitch.ui.cache_state import CacheState, VerifyTraffic, verify_state
from kvswitch.ui.control import tasks
from kvswitch.ui.control.verify_ops import client_verify_op, synthetic_verify_op

if TYPE_CHECKING:
    from pathlib import Path

    from kvswitch.core.paths import AppPaths
    from kvswitch.core.store import ProfileStore
    from kvswitch.ui.control.verify_summary import VerifySummary


class VerifyControllerMixin:
    """``AppController`` supplies the paths, the store, ``note_verdict`` and the signals."""

    paths: AppPaths
    if TYPE_CHECKING:
        @property
        def store(self) -> ProfileStore: ...
        def note_verdict(self, verdict: object) -> None: ...
        def set_cache_state(self, state: CacheState | str) -> None: ...
    verify_started: Any
    verify_progressed: Any
    verify_finished: Any
    verify_failed: Any
    client_verify_finished: Any
    history_changed: Any
    _verify_task: tasks.BackgroundTask | None
    _verify_summary: VerifySummary | None
    last_verify_result: Any
    verifying: str | None
    verify_timeout_s: float
    client_verify_timeout_s: float
    claude_bin: str | None
    verify_kind: str
    verify_client: str
    verify_traffic: VerifyTraffic

    # -- verify ------------------------------------------------------------------------------------

    @property
    def verify_running(self) -> bool:
        return self._verify_task is not None and self._verify_task.running

    def start_verify(self, name: str | None = None) -> bool:
        """Run the cache probe for a profile (default: the active one); a running one is cancelled."""
        target = self._verify_target(name)
        if target is None:
            return False
        name, profile = target
        op = synthetic_verify_op(self.paths, profile, self.verify_timeout_s)
        return self._start_verify_task(name, "synthetic", op, self._on_verify_succeeded)

    def start_client_verify(self, name: str | None = None, client: str = "claude") -> bool:
        """Run the scripted session of the user's own client (``claude``, ``codex`` or ``opencode``)
        through a profile, in the background, as ``kvswitch verify --client CLIENT`` does.

        Progress comes per conversation turn; Cancel stops the running client. The run is added to
        the profile's history.
        """
        from kvswitch.ui.control.clients import client_label  # noqa: PLC0415

        target = self._verify_target(name)
        if target is None:
            return False
        name, profile = target
        binary = self.find_client_binary(name, client)
        if binary is None:
            return False
        label, self.verify_client = client_label(client) + ": %1", client
        op = client_verify_op(self.paths, profile, binary, self.client_verify_timeout_s, label, client)
        return self._start_verify_task(name, "client", op, self._on_client_verify_succeeded)

    def find_client_binary(self, name: str, client: str) -> Path | None:
        """The client to run for a verify of ``name``, or None after ``verify_failed`` said why not."""
        from kvswitch.ui.control.clients import ClientUnavailable, locate_client_binary  # noqa: PLC0415

        option = self.claude_bin if client == "claude" else os.environ.get(f"KVSWITCH_{client.upper()}_BIN")
        try:
            return locate_client_binary(client, option or None)
        except ClientUnavailable as exc:
            self.verifying, self.verify_kind = name, "client"
            self.verify_failed.emit(str(exc))
            return None

    def _verify_target(self, name: str | None) -> tuple[str, Any] | None:
        """The profile a verify is for (default: the active one), after cancelling a running verify;
        ``None`` when there is none, the reason already said by ``verify_failed``."""
        self.cancel_verify()
        name = name or self.store.active_name
        if not name:
            self.verify_failed.emit(QCoreApplication.translate(
                "AppController", "No active profile: apply a profile first, then verify it."))
            return None
        try:
            return name, self.store.get(name)
        except KvSwitchError as exc:
            self.verify_failed.emit(str(exc))
            return None

    def _start_verify_task(self, name: str, kind: str, op: Any, on_success: Any) -> bool:
        """One verify at a time, on the thread pool; progress and the outcome come back by signal."""
        self.verify_traffic.started()
        self.verifying = name
        self.verify_kind = kind
        self._verify_task = tasks.run_in_background(
            self, op, on_success=on_success, on_failure=self._on_verify_raised,  # type: ignore[arg-type]
            on_progress=self.verify_progressed.emit)
        self.verify_started.emit(name)
        return True

    def _on_client_verify_succeeded(self, report: object) -> None:
        self.verify_traffic.finished(None)
        self.last_verify_result = report
        self.note_verdict(getattr(report, "verdict", None))
        self.client_verify_finished.emit(report)
        if self.verifying:
            self.history_changed.emit(self.verifying)

    @property
    def verify_summary(self) -> VerifySummary:
        """Every profile's latest verify, read in the background (what cards and the tray show)."""
        if self._verify_summary is None:
            from kvswitch.ui.control.verify_summary import VerifySummary  # noqa: PLC0415

            self._verify_summary = VerifySummary(
                self.paths, lambda: self.store.names(), parent=self)  # type: ignore[arg-type]
            self.history_changed.connect(self._verify_summary.reload)
        return self._verify_summary

    def last_verify(self, name: str) -> Any | None:
        """The profile's latest recorded verify (a ``HistoryEntry``), or None when never verified.

        Reads the files now (it loads the verify engine); paints use ``verify_summary`` instead.
        """
        from kvswitch.verify.records import history  # noqa: PLC0415

        try:
            entries = history(self.paths).load(name)
        except OSError:
            return None
        return entries[-1] if entries else None

    def cancel_verify(self) -> None:
        if self._verify_task is not None and self._verify_task.running:
            self._verify_task.cancel()

    def _on_verify_succeeded(self, result: object) -> None:
        self.verify_traffic.finished(getattr(result, "requests_sent", None), self.verify_timeout_s)
        self.last_verify_result = result
        replay = getattr(result, "claude_replay", None)
        self.set_cache_state(verify_state(getattr(result, "verdict", None), getattr(replay, "error", None)))
        self.verify_finished.emit(result)
        if self.verifying:
            self.history_changed.emit(self.verifying)

    @Slot(list)
    def note_log_requests(self, batch: list[tuple[str, int]]) -> None:
        """Requests the server log reported (``(verdict, requests)``, oldest first): the user's latest
        decides the tray; the verify's own (``verify_traffic``) do not, a cold miss it sent on purpose
        least of all."""
        # a server's first request ("cold") had nothing to reuse: it tells the tray nothing either way
        theirs = [verdict for verdict in self.verify_traffic.users(batch) if verdict != "cold"]
        if theirs:
            self.note_verdict(theirs[-1])

    def _on_verify_raised(self, exc: BaseException) -> None:
        self.verify_traffic.finished(None)
        from kvswitch.ui.control.clients import cancelled_text  # noqa: PLC0415
        from kvswitch.verify.client_run import ClientCancelled  # noqa: PLC0415

        if isinstance(exc, ClientCancelled):
            self.verify_failed.emit(cancelled_text(self.verify_client))
            return
        if isinstance(exc, KvSwitchError):
            self.verify_failed.emit(str(exc))
            return
        from kvswitch.ui.errors import report_exception  # noqa: PLC0415

        report_exception(type(exc), exc, exc.__traceback__, "verify")
        self.verify_failed.emit(QCoreApplication.translate(
            "AppController", "Verify stopped because of an internal error (it was reported)."))
