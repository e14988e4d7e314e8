"""The controller's view of what each client runs now: Claude Code (each scope), Codex, OpenCode, shells.

``kvswitch.targets.live`` reads the clients' own files and matches them against the profiles; that is
the one truth the cards and the tray show, never "the last apply". The read runs on a worker (it parses
a few JSON/TOML files and may ask the gateway for its routing), after every apply, undo, save and
import, and whenever a watched client file changes on disk (a hand edit, a CLI apply). The last answer
is kept as the engine returned it so a paint never reads files; the window keeps no copy of its own.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QFileSystemWatcher, QTimer

from kvswitch.core.errors import KvSwitchError
from kvswitch.ui.control import tasks

if TYPE_CHECKING:
    from kvswitch.core.paths import AppPaths
    from kvswitch.core.store import ProfileStore
    from kvswitch.targets.live import LiveClient

log = logging.getLogger("kvswitch.ui.control.live")

#: a burst of file events (an editor's save-rename, an apply writing three files) reads the files once
_SETTLE_MS = 150
#: the clients a profile card or the tray section can name, in the order shown
CLIENT_ORDER = ("claude", "codex", "opencode", "shell")


def read_live(paths: AppPaths, store: ProfileStore) -> list[LiveClient]:
    """On the worker: every client's live profile (``targets.live``, the engine's own matching)."""
    from kvswitch.targets.live import live_clients  # noqa: PLC0415 - the engine models load on a worker

    return live_clients(paths, [store.get(name) for name in store.names()])


class LiveControllerMixin:
    """``AppController`` supplies the paths, the store and the ``live_clients_changed`` signal."""

    paths: AppPaths
    if TYPE_CHECKING:
        @property
        def store(self) -> ProfileStore: ...
    live_clients_changed: Any
    _live: list[LiveClient] | None = None
    _live_task: tasks.BackgroundTask | None = None
    _live_again = False
    _live_after_write = False
    _live_watcher: QFileSystemWatcher | None = None
    _live_timer: QTimer | None = None

    def live_clients(self) -> list[LiveClient]:
        """What each client runs now, as last read (empty until the first read finished)."""
        return list(self._live or [])

    def live_for(self, name: str) -> list[LiveClient] | None:
        """The clients running profile ``name`` now (a card's badges); None before the first read."""
        if self._live is None or self._live_after_write:
            return None  # not read yet, or our own apply is being read back: the last apply says it
        return [client for client in self._live if client.profile == name]

    def refresh_live_clients(self, after_write: bool = False) -> None:
        """Read the clients' files again on a worker; ``live_clients_changed`` follows.

        ``after_write``: an apply or undo of this window just wrote them; until they are read back, the
        cards go by that apply (what was read before it is known to be out of date)."""
        if after_write:
            self._live_after_write = True
        if self._live_task is not None and self._live_task.running:
            self._live_again = True  # a change while reading: read once more when this one is done
            return
        self._live_again = False
        self._live_task = tasks.run_in_background(
            self, lambda _cancel, _progress: read_live(self.paths, self.store),  # type: ignore[arg-type]
            on_success=self._on_live_read, on_failure=self._on_live_failed)

    def _on_live_read(self, clients: Sequence[LiveClient]) -> None:
        self._live_task = None  # done: a refresh asked for while reading may start now
        self._live = list(clients)
        if not self._live_again:
            self._live_after_write = False
        self._watch_live_files()
        self.live_clients_changed.emit()
        if self._live_again:
            self.refresh_live_clients()

    def _on_live_failed(self, exc: BaseException) -> None:
        self._live_task = None
        if not self._live_again:
            self._live_after_write = False
        if isinstance(exc, (KvSwitchError, OSError, ImportError)):
            log.warning("reading the clients' live files: %s", exc)
        else:
            from kvswitch.ui.errors import report_exception  # noqa: PLC0415

            report_exception(type(exc), exc, exc.__traceback__, "live clients")
        if self._live_again:
            self.refresh_live_clients()

    def _watch_live_files(self) -> None:
        """Watch each live file (and its folder: editors save by rename, and a file may appear)."""
        if self._live_watcher is None:
            self._live_watcher = QFileSystemWatcher(self)  # type: ignore[arg-type]
            self._live_timer = QTimer(self)  # type: ignore[arg-type]
            self._live_timer.setSingleShot(True)
            self._live_timer.setInterval(_SETTLE_MS)
            self._live_timer.timeout.connect(self.refresh_live_clients)
            self._live_watcher.fileChanged.connect(self._on_live_watcher_changed)
            self._live_watcher.directoryChanged.connect(self._on_live_watcher_changed)
        wanted: set[str] = set()
        for client in self._live or []:
            if client.path is not None:
                wanted.add(str(client.path.parent))
                if client.path.exists():
                    wanted.add(str(client.path))
        watched = set(self._live_watcher.files()) | set(self._live_watcher.directories())
        if watched - wanted:
            self._live_watcher.removePaths(sorted(watched - wanted))
        existing = sorted(path for path in wanted - watched if _exists(path))
        if existing:
            self._live_watcher.addPaths(existing)

    def _on_live_watcher_changed(self, _path: str) -> None:
        assert self._live_timer is not None
        self._live_timer.start()


def _exists(path: str) -> bool:
    from pathlib import Path  # noqa: PLC0415

    return Path(path).exists()
