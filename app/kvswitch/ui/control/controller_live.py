"""The controller's side of "which profile each client runs": the per-client list, saving a profile that
is live (written through, or left ``differs``), the one call that applies it to the clients that differ,
and switch messages that name the clients actually written or re-routed.

A mixin of ``AppController`` (which declares ``live_clients_changed``). The list comes from
``targets.live`` (the clients' own files, a few small reads); ``live_clients_changed(list)`` is emitted
after every apply, undo, save and import the controller makes, and when a watched client file changes
(``watch_live_clients``: another tool, an editor, a second KV Switch process).

For the window the files are read on a worker (``refresh_live_clients``) and the last answer is kept
as the engine returned it (``live_snapshot``, ``live_for``), so a paint never reads a file; while an
apply of this window is being read back, ``live_for`` answers None and the cards go by that apply.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QCoreApplication, QFileSystemWatcher, QObject, QTimer

from kvswitch.core.errors import KvSwitchError
from kvswitch.ui.control import tasks

if TYPE_CHECKING:
    from kvswitch.core.paths import AppPaths
    from kvswitch.core.store import ProfileStore
    from kvswitch.targets.engine import Engine
    from kvswitch.targets.live import LiveClient
    from kvswitch.targets.live_sync import SaveOutcome

log = logging.getLogger("kvswitch.ui.live")

#: the name lupdate looks for; these texts are in the controller's context, where its other messages are
translate = QCoreApplication.translate


#: file events come in bursts (an atomic write is a create and a rename): one refresh after the last
LIVE_REFRESH_DELAY_MS = 250


class LiveControllerMixin:
    """``AppController`` supplies the paths, the store, the engine, ``tr`` and the signals."""

    paths: AppPaths
    if TYPE_CHECKING:
        @property
        def store(self) -> ProfileStore: ...
        @property
        def engine(self) -> Engine: ...
        def preference(self, name: str) -> Any: ...
    live_clients_changed: Any
    apply_failed: Any
    _live_watcher: QFileSystemWatcher | None = None
    _live_timer: QTimer | None = None
    _live: list[LiveClient] | None = None
    _live_task: tasks.BackgroundTask | None = None
    _live_again = False
    _live_after_write = False
    #: labels of the clients the last apply wrote, and of those it (only) re-routed
    last_written_clients: list[str] = []  # noqa: RUF012 - replaced, never mutated
    last_routed_clients: list[str] = []  # noqa: RUF012 - replaced, never mutated

    # -- reading -----------------------------------------------------------------------------------

    def live_clients(self) -> list[LiveClient]:
        """Every client and the profile its live file runs now (``targets.live``); [] when the profiles
        cannot be read (the store's own error is shown elsewhere)."""
        from kvswitch.targets.live import live_clients  # noqa: PLC0415 - the engine loads lazily

        try:
            return live_clients(self.paths, self.store.profiles(), self.engine.env)
        except KvSwitchError as exc:
            log.warning("reading the live clients failed: %s", exc)
            return []

    def clients_running(self, name: str) -> list[LiveClient]:
        """The clients whose live file runs profile ``name`` (or was applied it and differs)."""
        from kvswitch.targets.live_sync import running  # noqa: PLC0415

        return running(self.live_clients(), name)

    def emit_live_clients(self) -> None:
        """Tell the views what every client runs now (after any change the controller made): read on a
        worker, ``live_clients_changed`` when it is in."""
        self.refresh_live_clients(after_write=True)

    def live_snapshot(self) -> list[LiveClient]:
        """What each client runs, as last read in the background (empty until the first read)."""
        return list(self._live or [])

    def live_for(self, name: str) -> list[LiveClient] | None:
        """The clients running profile ``name`` now (a card's badges); None before the first read and
        while this window's own apply is read back (the cards go by that apply meanwhile)."""
        if self._live is None or self._live_after_write:
            return None
        return [client for client in self._live if client.profile == name]

    def refresh_live_clients(self, after_write: bool = False) -> None:
        """Read the clients' files again on a worker; ``live_clients_changed(list)`` follows.

        The profiles and the engine's environment are taken here, on the GUI thread; only the file
        reads run on the worker. A request while a read runs reads once more after it (only the
        last read is emitted: an earlier one may predate the change)."""
        if after_write:
            self._live_after_write = True
        if self._live_task is not None and self._live_task.running:
            self._live_again = True
            return
        self._live_again = False
        from kvswitch.targets.live import live_clients  # noqa: PLC0415 - the engine loads lazily

        try:
            profiles, env = self.store.profiles(), self.engine.env
        except KvSwitchError as exc:
            log.warning("reading the profiles for the live clients failed: %s", exc)
            self._live_after_write = False
            return
        paths = self.paths
        self._live_task = tasks.run_in_background(
            self, lambda _cancel, _progress: live_clients(paths, profiles, env),  # type: ignore[arg-type]
            on_success=self._on_live_read, on_failure=self._on_live_failed)

    def _on_live_read(self, clients: list[LiveClient]) -> None:
        self._live_task = None
        if self._live_again:  # a change came while reading: this answer may predate it
            self.refresh_live_clients()
            return
        self._live = list(clients)
        self._live_after_write = False
        self._watch_paths(self._live)
        self.live_clients_changed.emit(self._live)

    def _on_live_failed(self, exc: BaseException) -> None:
        self._live_task = None
        if self._live_again:
            self.refresh_live_clients()
            return
        self._live_after_write = False
        if isinstance(exc, (KvSwitchError, OSError)):
            log.warning("reading the clients' live files: %s", exc)
            return
        from kvswitch.ui.errors import report_exception  # noqa: PLC0415

        report_exception(type(exc), exc, exc.__traceback__, "live clients")

    # -- saving and re-applying --------------------------------------------------------------------

    def save_profile(self, old_name: str, profile: Any, *, write_through: bool | None = None
                     ) -> SaveOutcome | None:
        """Save ``profile`` in place of ``old_name``; the clients that ran it get the new version
        (``write_through``; default: the ``write_through_live`` setting), or are left ``differs``.

        Returns the ``SaveOutcome`` naming the clients written, re-routed or left as they were (``None``
        when saving failed: ``apply_failed`` said why). The files written are one journaled apply:
        ``undo`` puts them back.
        """
        from kvswitch.targets.live_sync import save_profile  # noqa: PLC0415

        chosen = bool(self.preference("write_through_live")) if write_through is None else write_through
        try:
            outcome = save_profile(self.store, self.engine, old_name, profile, write_through=chosen)
        except (KvSwitchError, OSError) as exc:
            log.warning("saving %s failed: %s", old_name, exc)
            self.apply_failed.emit(old_name, str(exc))
            return None
        if outcome.result is not None:
            self.last_written_clients, self.last_routed_clients = outcome.written, outcome.rerouted
        self.emit_live_clients()
        return outcome

    def apply_to_clients(self, name: str, keys: list[str] | None = None) -> SaveOutcome | None:
        """The one click on a ``differs`` badge: write profile ``name`` to the clients that differ from
        it (or to those whose ``LiveClient.key`` is in ``keys``), and to no other."""
        from kvswitch.targets.live_sync import write_to_clients  # noqa: PLC0415

        clients = [c for c in self.clients_running(name) if (c.key in keys if keys else c.differs)]
        try:
            outcome = write_to_clients(self.engine, self.store.get(name), clients)
        except (KvSwitchError, OSError) as exc:
            self.apply_failed.emit(name, str(exc))
            return None
        self.last_written_clients, self.last_routed_clients = outcome.written, outcome.rerouted
        self.emit_live_clients()
        return outcome

    def mark_imported_live(self, current: dict[str, str]) -> list[str]:
        """After an import: record that each target id (``claude``, ``codex``) runs the named imported
        profile, where its live file does not say otherwise (``live_sync.mark_live``); returns the ids."""
        from kvswitch.targets.live_sync import imported_marks, mark_live  # noqa: PLC0415

        try:
            marked = mark_live(self.engine, imported_marks(self.engine, self.store, current))
        except KvSwitchError as exc:  # bookkeeping: the import itself succeeded
            log.warning("marking the imported profiles live failed: %s", exc)
            marked = []
        self.emit_live_clients()
        return marked

    # -- messages ----------------------------------------------------------------------------------

    def note_switch(self, result: Any, profile: Any, routed_only: bool) -> None:
        """Remember which clients an apply wrote (``result``) or re-routed, for ``switch_message``."""
        from kvswitch.core.gateway_config import clients_of_targets  # noqa: PLC0415
        from kvswitch.targets.live import client_label  # noqa: PLC0415
        from kvswitch.targets.live_sync import written_clients  # noqa: PLC0415

        written = [] if routed_only or result is None else written_clients(result, self.engine)
        routed = [client_label(c) for c in clients_of_targets(list(profile.targets))] \
            if getattr(profile, "via_gateway", False) else []
        self.last_written_clients = written
        self.last_routed_clients = [label for label in routed if label not in written]

    def switch_message(self, name: str) -> str:
        """The message bar's text for the last switch to ``name``, naming only the clients written or
        re-routed (translated; client names stay as the clients call themselves)."""
        written, routed = self.last_written_clients, self.last_routed_clients
        parts = []
        if written:
            joined = ", ".join(written)
            text = translate("AppController", "Switched %1 to “%2”: new sessions use it.")
            parts.append(text.replace("%1", joined))
        if routed:
            text = translate("AppController", "%1 routed to “%2” through the gateway: running sessions "
                                              "follow from their next request.")
            parts.append(text.replace("%1", ", ".join(routed)))
        if not parts:
            parts.append(translate("AppController", "“%2” already runs in every client it targets: nothing "
                                                    "was written."))
        if any(label in ("bash", "zsh", "fish", "pwsh") for label in written):
            parts.append(translate("AppController", "Open shells need to re-read their rc file."))
        return " ".join(parts).replace("%2", name)

    def save_message(self, outcome: SaveOutcome) -> str:
        """The message bar's text after saving a profile (which clients got it, which still differ)."""
        name = outcome.profile
        parts = [translate("AppController", "Saved “%1”.").replace("%1", name)]
        if outcome.written:
            written = ", ".join(outcome.written)
            parts.append(translate("AppController", "Written to %1.").replace("%1", written))
        if outcome.rerouted or outcome.follows:
            joined = ", ".join([*outcome.rerouted, *outcome.follows])
            text = translate("AppController", "%1 use it from the next request (through the gateway).")
            parts.append(text.replace("%1", joined))
        if outcome.error:
            text = translate("AppController", "Writing it to the clients failed: %1")
            parts.append(text.replace("%1", outcome.error))
        if outcome.differs:
            joined = ", ".join(outcome.differs)
            text = translate("AppController", "%1 still run the earlier version.")
            parts.append(text.replace("%1", joined))
        return " ".join(parts)

    # -- watching ----------------------------------------------------------------------------------

    def watch_live_clients(self) -> None:
        """Emit ``live_clients_changed`` when a client's live file changes on disk (a hand edit, CC
        Switch, another KV Switch process): its file and its folder are watched (an atomic write
        replaces the file, which a watch on the file alone would lose)."""
        if self._live_watcher is None:
            owner = self if isinstance(self, QObject) else None
            self._live_watcher = QFileSystemWatcher(owner)
            self._live_timer = QTimer(owner)
            self._live_timer.setSingleShot(True)
            self._live_timer.setInterval(LIVE_REFRESH_DELAY_MS)
            self._live_timer.timeout.connect(self.refresh_live_clients)
            self._live_watcher.fileChanged.connect(self._on_live_watcher_changed)
            self._live_watcher.directoryChanged.connect(self._on_live_watcher_changed)
            if self._live is not None:
                self._watch_paths(self._live)
                return
        self.refresh_live_clients()

    def _on_live_watcher_changed(self, _path: str) -> None:
        if self._live_timer is not None:
            self._live_timer.start()

    def _watch_paths(self, clients: list[LiveClient]) -> None:
        if self._live_watcher is None:
            self.watch_live_clients()  # the first read starts the watch (no second read: it emits)
            if self._live_watcher is None:
                return
        wanted: set[str] = set()
        for client in clients:
            if client.path is None:
                continue
            if client.path.exists():
                wanted.add(str(client.path))
            if client.path.parent.is_dir():
                wanted.add(str(client.path.parent))
        watched = set(self._live_watcher.files()) | set(self._live_watcher.directories())
        missing = sorted(wanted - watched)
        if missing:
            self._live_watcher.addPaths(missing)
