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
from kvswitch.ui.cache_state import CacheState, VerifyTraffic
from kvswitch.ui.control import tasks
from kvswitch.ui.control.controller_gateway import GatewayControllerMixin
from kvswitch.ui.control.controller_live import LiveControllerMixin
from kvswitch.ui.control.controller_settings import SettingsControllerMixin
from kvswitch.ui.control.controller_sweeps import SweepControllerMixin
from kvswitch.ui.control.controller_verify import VerifyControllerMixin

if TYPE_CHECKING:  # loaded lazily at run time: the engines' models cost most of the start-up
    from kvswitch.core.models import Profile
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
    # the Cache log's grey "shared prefix": a new conversation reused all it shares with the last one, no
    # loss (the Usage tab's HIT "new conversation"); the tray agrees with both
    "SHARED_PREFIX": CacheState.HIT,
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
                    VerifyControllerMixin, SweepControllerMixin, QObject):
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
        gateway_rows_recorded(list): usage rows the gateway stored since the last poll (``UsageRow``s):
            the Cache log takes the gateway's verdict of the requests it relayed.
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
    gateway_rows_recorded = Signal(list)
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
        self.verify_traffic = VerifyTraffic()  # the server log's requests a verify sent itself
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

    def add_profile(self, profile: Profile) -> Profile:
        """Add a profile made in the window (editor, gallery, setup assistant) as ``kvswitch profile
        add`` does: a local one gets the context window its server reports, so Claude Code and Codex are
        told it. Returns what was stored; raises ``KvSwitchError`` (a taken name, say)."""
        from kvswitch.platform.context_window import with_server_context  # noqa: PLC0415

        profile, _note = with_server_context(profile)
        self.store.add(profile)
        return profile

    def _to_use(self, name: str) -> Profile:
        """The stored profile about to be previewed or written, its server's context window recorded
        first when it has none (as ``kvswitch use`` does)."""
        from kvswitch.platform.context_window import stored_with_server_context  # noqa: PLC0415

        return stored_with_server_context(self.store, name)[0]

    def plan(self, name: str) -> list[Any]:
        """Plans for a profile; raises ``KvSwitchError`` for the caller to show inline."""
        return list(self.engine.plan(self._to_use(name)))

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
            profile = self._to_use(name) if plans is None else self.store.get(name)  # previewed as is
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
        self.cancel_sweep()  # its server is stopped before the pool is drained
        self.stop_gateway()
        tasks.drain(5000)
