"""The app's actions, shared by the window and the tray: apply, undo, verify, cache state.

It adapts the engines (store, switching engine, verify probe) and turns their outcomes into signals;
it holds no profile data of its own. Expected failures (``KvSwitchError``) become ``*_failed`` signals
with the engine's message; the window shows them inline.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal, Slot

from kvswitch.core.errors import KvSwitchError
from kvswitch.ui.cache_state import CacheState
from kvswitch.ui.control import tasks
from kvswitch.ui.control.controller_gateway import GatewayControllerMixin
from kvswitch.ui.control.controller_live import LiveControllerMixin
from kvswitch.ui.control.controller_settings import SettingsControllerMixin
from kvswitch.ui.control.controller_sweeps import SweepControllerMixin
from kvswitch.ui.control.verify_ops import client_verify_op, synthetic_verify_op

if TYPE_CHECKING:  # loaded lazily at run time: the engines' models cost most of the start-up
    from pathlib import Path

    from kvswitch.core.paths import AppPaths
    from kvswitch.core.settings import AppSettings
    from kvswitch.core.store import ProfileStore
    from kvswitch.targets.engine import Engine
    from kvswitch.ui.control.verify_summary import VerifySummary

log = logging.getLogger("kvswitch.ui.control.controller")

GUI_LOCK_TIMEOUT_S = 0.5
VERIFY_TIMEOUT_S = 30.0
#: four headless Claude Code runs against a local model: minutes on a slow machine
CLIENT_VERIFY_TIMEOUT_S = 600.0

_VERDICT_STATE = {
    "HIT": CacheState.HIT,
    "PARTIAL": CacheState.PARTIAL,
    "MISS": CacheState.MISS,
}


def verdict_state(verdict: object) -> CacheState:
    """Map a verify/log verdict (enum or string, any case) to the tray's cache state."""
    text = str(getattr(verdict, "value", verdict) or "").upper()
    if "." in text:
        text = text.rsplit(".", 1)[1]
    return _VERDICT_STATE.get(text, CacheState.UNKNOWN)


class AppController(SettingsControllerMixin, GatewayControllerMixin, LiveControllerMixin,
                    SweepControllerMixin, QObject):
    """Actions on the store and engines, reported by signal.

    Signals:
        profile_applied(str): a profile was written to its targets, or routed to (name).
        apply_failed(str, str): applying a profile failed (name, engine message); nothing changed.
        plan_outdated(str, str): a confirmed preview no longer matches the files (name, message);
            nothing changed.
        undo_finished(str): the last apply was undone (a message for the status bar).
        undo_failed(str): undo failed (engine message).
        cache_state_changed(str): the active profile's cache state (a ``CacheState`` value).
        verify_started(str): a verify began for a profile (name).
        verify_progressed(str, float): a verify reported progress.
        verify_finished(object): the ``VerifyResult``.
        verify_failed(str): verify could not run at all (message).
        client_verify_finished(object): the ``ClientReport`` of a "Verify with Claude Code" run.
        history_changed(str): a verify of this profile was added to its history (name).
        alert_raised(str, str): something the user should hear about now, in the tray (title, text).
        gateway_status_changed(object): the local gateway's status dict (``controller_gateway``).
        ablate_finished(object): the ``AblationReport`` of a "Which settings matter?" run (``ablate_view``).
        live_clients_changed(object): the list of ``targets.live.LiveClient`` (``controller_live``).
    """

    profile_applied = Signal(str)
    apply_failed = Signal(str, str)
    plan_outdated = Signal(str, str)
    undo_finished = Signal(str)
    undo_failed = Signal(str)
    cache_state_changed = Signal(str)
    verify_started = Signal(str)
    verify_progressed = Signal(str, float)
    verify_finished = Signal(object)
    verify_failed = Signal(str)
    client_verify_finished = Signal(object)
    history_changed = Signal(str)
    alert_raised = Signal(str, str)
    gateway_status_changed = Signal(object)
    ablate_finished = Signal(object)
    live_clients_changed = Signal(object)

    def __init__(self, paths: AppPaths, store: ProfileStore | None = None, engine: Engine | None = None,
                 parent: QObject | None = None):
        super().__init__(parent)
        self.paths = paths
        self._store = store
        self._engine = engine
        self._settings: AppSettings | None = None
        self._settings_values: dict[str, Any] | None = None
        self.cache_state = CacheState.UNKNOWN
        self._verify_task: tasks.BackgroundTask | None = None
        self.last_verify_result: Any = None  # the latest VerifyResult, for a window opened later
        self.verifying: str | None = None  # the profile the running (or last) verify is about
        self.verify_timeout_s = VERIFY_TIMEOUT_S
        self.client_verify_timeout_s = CLIENT_VERIFY_TIMEOUT_S
        #: the Claude Code to run; empty means the ``claude`` on PATH
        self.claude_bin: str | None = os.environ.get("KVSWITCH_CLAUDE_BIN") or None
        self.verify_kind = "synthetic"  # or "client": which check the running (or last) verify is
        self.verify_client = "claude"  # the client of the running (or last) client verify
        self.preview_outdated: Any = None  # the PlanOutdated of the last apply, if it was refused
        self.switched_by_routing = False  # the last apply only changed the gateway's routing
        self._verify_summary: VerifySummary | None = None

    @property
    def store(self) -> ProfileStore:
        """The profile store, opened on first use (it imports the engine models, slow to load)."""
        if self._store is None:
            from kvswitch.core.store import ProfileStore  # noqa: PLC0415 - keep start-up imports lazy

            self._store = ProfileStore(self.paths)
        return self._store

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            from kvswitch.targets.engine import Engine  # noqa: PLC0415 - keep start-up imports lazy

            # applies run on the GUI thread (they write a few small files); never let a CLI apply that
            # holds the lock freeze the window: give up quickly and say so instead
            self._engine = Engine(self.paths, lock_timeout=GUI_LOCK_TIMEOUT_S)
        return self._engine

    def active_profile(self) -> Any | None:
        name = self.store.active_name
        if not name:
            return None
        try:
            return self.store.get(name)
        except KvSwitchError:
            return None

    # -- switching ---------------------------------------------------------------------------------

    def plan(self, name: str) -> list[Any]:
        """Plans for a profile; raises ``KvSwitchError`` for the caller to show inline."""
        return list(self.engine.plan(self.store.get(name)))

    def apply(self, name: str, plans: list[Any] | None = None, *, rewrite_files: bool = False) -> bool:
        """Write a profile to its targets; on failure nothing changes and ``apply_failed`` says why.

        ``plans``: the preview the user confirmed; exactly it is written. When a file changed since,
        nothing is written, ``preview_outdated`` keeps the engine's ``PlanOutdated`` and
        ``plan_outdated`` is emitted instead of ``apply_failed``, so the window can show a fresh preview.
        Unless ``rewrite_files``, a gateway switch may only re-route (``switched_by_routing``).
        """
        from kvswitch.targets.outcome import PlanOutdated  # noqa: PLC0415 - keep start-up imports lazy

        self.preview_outdated = None
        try:
            profile = self.store.get(name)
            self.switched_by_routing = not rewrite_files and self.switch_by_routing(profile)
            result = None
            if not self.switched_by_routing:
                result = self.engine.apply(profile, plans)
                self.route_gateway(profile)  # a gateway profile: its clients' next requests go to it
            self.note_switch(result, profile, self.switched_by_routing)
        except PlanOutdated as exc:
            log.info("apply %s: preview outdated: %s", name, exc)
            self.preview_outdated = exc
            self.plan_outdated.emit(name, str(exc))
            return False
        except KvSwitchError as exc:
            log.warning("apply %s failed: %s", name, exc)
            self.apply_failed.emit(name, str(exc))
            return False
        except OSError as exc:
            message = f"{exc.filename or ''}: {exc.strerror or exc}".strip(": ")
            log.warning("apply %s failed: %s", name, message)
            self.apply_failed.emit(name, message)
            return False
        log.info("applied profile %s", name)
        self.set_cache_state(CacheState.UNKNOWN)
        self._notify_store()
        self.emit_live_clients()  # read back on a worker; the cards go by this apply meanwhile
        self.profile_applied.emit(name)
        self.emit_live_clients()
        return True

    def undo(self) -> bool:
        try:
            result = self.engine.undo()
        except KvSwitchError as exc:
            self.undo_failed.emit(str(exc))
            return False
        self.set_cache_state(CacheState.UNKNOWN)
        self._notify_store()
        self.emit_live_clients()
        self.undo_finished.emit(self._describe_undo(result))
        self.emit_live_clients()
        return True

    def can_undo(self) -> bool:
        """Whether the ledger records an apply that undo can walk back (the engine's own test)."""
        from kvswitch.core.store_rows import has_undo_history  # noqa: PLC0415

        try:
            return has_undo_history(self.paths.state_file)
        except KvSwitchError:
            return False

    def duplicate_profile(self, name: str) -> str | None:
        """Copy a profile right after itself; returns the copy's name (None: ``apply_failed`` said why)."""
        try:
            return self.store.duplicate(name).name
        except KvSwitchError as exc:
            self.apply_failed.emit(name, str(exc))
            return None

    def move_profile(self, name: str, offset: int) -> None:
        try:
            self.store.move(name, offset)
        except KvSwitchError as exc:
            self.apply_failed.emit(name, str(exc))

    def run_task(self, fn: Any, on_success: Any, on_failure: Any) -> tasks.BackgroundTask:
        """Run ``fn()`` (detection, a model listing, a connection test) off the GUI thread."""
        return tasks.run_in_background(self, lambda _cancel, _progress: fn(),
                                       on_success=on_success, on_failure=on_failure)

    def _describe_undo(self, result: object) -> str:
        text = str(result) if result is not None else ""
        return text or self.tr("Undid the last apply.")

    def _notify_store(self) -> None:
        """Some stores learn about the active profile from the engine; nudge listeners either way."""
        refresh = getattr(self.store, "reload", None) or getattr(self.store, "refresh", None)
        if callable(refresh):
            try:
                refresh()
            except KvSwitchError as exc:
                log.warning("store refresh failed: %s", exc)

    # -- cache state -------------------------------------------------------------------------------

    def set_cache_state(self, state: CacheState | str) -> None:
        state = CacheState(state)
        if state != self.cache_state:
            self.cache_state = state
            self.cache_state_changed.emit(state.value)

    @Slot(object)
    def note_verdict(self, verdict: object) -> None:
        """The latest evidence (a log event or a verify) decides the icon."""
        self.set_cache_state(verdict_state(verdict))

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
            self.verify_failed.emit(self.tr("No active profile: apply a profile first, then verify it."))
            return None
        try:
            return name, self.store.get(name)
        except KvSwitchError as exc:
            self.verify_failed.emit(str(exc))
            return None

    def _start_verify_task(self, name: str, kind: str, op: Any, on_success: Any) -> bool:
        """One verify at a time, on the thread pool; progress and the outcome come back by signal."""
        self.verifying = name
        self.verify_kind = kind
        self._verify_task = tasks.run_in_background(
            self, op, on_success=on_success, on_failure=self._on_verify_raised,
            on_progress=self.verify_progressed.emit)
        self.verify_started.emit(name)
        return True

    def _on_client_verify_succeeded(self, report: object) -> None:
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
                self.paths, lambda: self.store.names(), parent=self)
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
        self.last_verify_result = result
        self.note_verdict(getattr(result, "verdict", None))
        self.verify_finished.emit(result)
        if self.verifying:
            self.history_changed.emit(self.verifying)

    def _on_verify_raised(self, exc: BaseException) -> None:
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
        self.verify_failed.emit(self.tr("Verify stopped because of an internal error (it was reported)."))

    @Slot(str)
    def raise_reuse_alert(self, message: str) -> None:
        """The log panel saw reuse stay low; passed on unless the user switched alerts off in Settings."""
        if self.preference("reuse_alerts"):
            self.alert_raised.emit(self.tr("Prompt cache keeps missing"), message)

    @Slot(str)
    def raise_session_alert(self, message: str) -> None:
        """A session's rolling hit rate through the gateway fell below the threshold (Settings)."""
        if self.preference("reuse_alerts"):
            self.alert_raised.emit(self.tr("A session's cache hit rate dropped"), message)

    def add_fix_env(self, name: str, fix_env: dict[str, str]) -> bool:
        """Merge a diagnosis' fix into the stored profile; the caller offers re-apply."""
        try:
            profile = self.store.get(name)
            env = dict(profile.env)
            env.update(fix_env)
            data = profile.model_dump(context={"secrets": True})
            data["env"] = env
            self.store.update(name, type(profile).model_validate(data))
        except KvSwitchError as exc:
            self.apply_failed.emit(name, str(exc))
            return False
        return True

    def shutdown(self) -> None:
        """Cancel background work and wait for it, so no worker outlives the app."""
        self.cancel_verify()
        self.stop_gateway()
        tasks.drain(5000)
