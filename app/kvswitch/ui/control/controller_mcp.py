"""The MCP page's actions: the servers × clients matrix, toggles, removal and imports, off the GUI thread.

Every write goes through ``targets.mcp_sync`` exactly as ``kvswitch mcp`` does (planned, all files or
none, journaled, undone by the window's Undo), and the list is saved only once the files were written.
A write can take seconds (a 50 MB ``~/.claude.json``), so it runs on the task pool and reports by signal;
one runs at a time. Rows carry masked text only: env and header values never reach a widget.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal

from kvswitch.core.errors import KvSwitchError
from kvswitch.ui.control import tasks
from kvswitch.ui.i18n import fill

if TYPE_CHECKING:
    from kvswitch.core.mcp import McpServer
    from kvswitch.core.paths import AppPaths


# the clients every row has a column for (project scopes a server uses are added after them)
BASE_CLIENTS = ("claude", "codex", "opencode")


@dataclass(frozen=True)
class McpRow:
    """One server as the page shows it: ``states`` maps a client spec to ``on`` (written there),
    ``pending`` (enabled but not in the file, after an undo) or ``off``."""

    name: str
    transport: str
    summary: str
    states: dict[str, str]


class McpController(QObject):
    """MCP servers for the window.

    Signals:
        rows_changed(object): the list of ``McpRow`` after a load or a write.
        busy_changed(bool): a write or import started (True) or ended (False).
        write_finished(str): what was written, for the status line.
        write_failed(str): the engine's message; nothing was changed.
    """

    rows_changed = Signal(object)
    busy_changed = Signal(bool)
    write_finished = Signal(str)
    write_failed = Signal(str)

    def __init__(self, paths: AppPaths, parent: QObject | None = None):
        super().__init__(parent)
        self.paths = paths
        self.rows: list[McpRow] = []
        self.clients: list[str] = list(BASE_CLIENTS)
        self._task: tasks.BackgroundTask | None = None

    @property
    def busy(self) -> bool:
        return self._task is not None

    # -- reading -----------------------------------------------------------------------------------
    def reload(self) -> None:
        """Read the list and what the ledger says is written; ``rows_changed`` (or ``write_failed``)."""
        try:
            self._publish(self._read())
        except KvSwitchError as exc:
            self.write_failed.emit(str(exc))

    def _read(self) -> tuple[list[McpRow], list[str]]:
        from kvswitch.core.mcp_store import McpStore  # noqa: PLC0415 - engine models load on first use
        from kvswitch.targets.mcp_sync import McpSync  # noqa: PLC0415

        servers = McpStore(self.paths).servers()
        written = McpSync(self.paths).owned_names()
        clients = list(BASE_CLIENTS) + sorted({c for s in servers for c in s.clients} - set(BASE_CLIENTS))
        rows = [
            McpRow(
                s.name,
                s.transport,
                _summary(s),
                {
                    c: ("on" if s.name in written.get(c, set()) else "pending") if c in s.clients else "off"
                    for c in clients
                },
            )
            for s in servers
        ]
        return rows, clients

    def _publish(self, outcome: tuple[list[McpRow], list[str]]) -> None:
        self.rows, self.clients = outcome
        self.rows_changed.emit(self.rows)

    # -- writing -----------------------------------------------------------------------------------
    def set_enabled(self, name: str, client: str, enabled: bool) -> None:
        """Enable or disable one server in one client (one cell of the matrix)."""

        def change(servers: list[McpServer]) -> list[McpServer]:
            return [
                s.with_clients([*s.clients, client] if enabled else [c for c in s.clients if c != client])
                if s.name == name
                else s
                for s in servers
            ]

        self._write(
            change,
            fill(self.tr("enabled %1 in %2") if enabled else self.tr("disabled %1 in %2"), name, client),
        )

    def set_enabled_everywhere(self, client: str, enabled: bool) -> None:
        """A whole column at once (the window's Undo takes it back as one change)."""

        def change(servers: list[McpServer]) -> list[McpServer]:
            return [
                s.with_clients([*s.clients, client] if enabled else [c for c in s.clients if c != client])
                for s in servers
            ]

        self._write(
            change,
            fill(
                self.tr("enabled every server in %1") if enabled else self.tr("disabled every server in %1"),
                client,
            ),
        )

    def remove(self, name: str) -> None:
        self._write(lambda servers: [s for s in servers if s.name != name], fill(self.tr("removed %1"), name))

    def import_from(self, source: str, text: str = "", replace_all: bool = False) -> None:
        """Bring servers in (``claude``, ``codex``, ``opencode``, ``cc-switch`` or ``paste`` with
        ``text``); nothing is written to a client. The report arrives in ``write_finished``."""

        def work(cancel: threading.Event, progress: Any) -> Any:
            from kvswitch.core.mcp import merge_imported  # noqa: PLC0415
            from kvswitch.core.mcp_formats import parse_pasted  # noqa: PLC0415
            from kvswitch.core.mcp_store import McpStore  # noqa: PLC0415
            from kvswitch.platform.mcp_ccswitch import read_cc_switch_mcp  # noqa: PLC0415
            from kvswitch.targets.mcp_sync import read_client  # noqa: PLC0415

            if source == "paste":
                incoming, problems = parse_pasted(text)
            elif source == "cc-switch":
                incoming, problems = read_cc_switch_mcp()
            else:
                incoming, problems = read_client(source, os.environ)
            with McpStore(self.paths).editing() as servers:
                servers[:], report = merge_imported(servers, incoming, replace_all=replace_all)
            return "\n".join([*report, *(f"not imported: {p}" for p in problems)]), self._read()

        self._start(work)

    def _write(self, change: Callable[[list[McpServer]], list[McpServer]], what: str) -> None:
        def work(cancel: threading.Event, progress: Any) -> Any:
            from kvswitch.core.mcp_formats import client_kind, to_client  # noqa: PLC0415
            from kvswitch.core.mcp_store import McpStore  # noqa: PLC0415
            from kvswitch.targets.mcp_sync import McpSync  # noqa: PLC0415

            store = McpStore(self.paths)
            with store.editing() as servers:
                wanted = change(list(servers))
                for server in wanted:
                    for spec in server.clients:
                        to_client(server, client_kind(spec))  # an SSE server for Codex: refused by name
                McpSync(self.paths).apply(wanted)
                servers[:] = wanted
            return what, self._read()

        self._start(work)

    def _start(self, work: Callable[[threading.Event, Any], Any]) -> None:
        if self._task is not None:
            self.write_failed.emit("another MCP change is still being written; try again in a moment")
            return
        self.busy_changed.emit(True)
        self._task = tasks.run_in_background(
            self, work, on_success=self._on_task_succeeded, on_failure=self._on_task_failed
        )

    def _on_task_succeeded(self, result: object) -> None:
        self._task = None
        assert isinstance(result, tuple)
        message: str = result[0]
        outcome: tuple[list[McpRow], list[str]] = result[1]
        self._publish(outcome)
        self.busy_changed.emit(False)
        self.write_finished.emit(message)

    def _on_task_failed(self, exc: object) -> None:
        self._task = None
        self.busy_changed.emit(False)
        text = str(exc) if isinstance(exc, KvSwitchError) else f"{type(exc).__name__}: {exc}"
        self.write_failed.emit(text)
        self.reload()


def _summary(server: McpServer) -> str:
    """The command or URL, credentials masked (``core.redact``), for the row's second column."""
    from kvswitch.core.redact import MASK, mask_text, mask_url  # noqa: PLC0415

    if server.transport == "stdio":
        text = mask_text(" ".join([server.command, *server.args]))
        for secret in server.secrets:
            text = text.replace(secret, MASK)
        extra = f"  ({', '.join(server.env)} = {MASK})" if server.env else ""
        return text + extra
    extra = f"  ({', '.join(server.headers)} = {MASK})" if server.headers else ""
    return mask_url(server.url) + extra
