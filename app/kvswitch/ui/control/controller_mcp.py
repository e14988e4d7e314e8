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
from dataclasses import dataclass, field, replace
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
    #: per client, what the server was measured to add to every request (``kvswitch mcp measure``);
    #: a client never measured is absent (shown as unknown)
    costs: dict[str, str] = field(default_factory=dict)
    #: per client, the measurement's whole sentence (when, with which client version, on which server)
    cost_details: dict[str, str] = field(default_factory=dict)


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
        from kvswitch.core.mcp_costs import McpCostStore  # noqa: PLC0415 - engine models load on first use
        from kvswitch.core.mcp_store import McpStore  # noqa: PLC0415
        from kvswitch.targets.mcp_sync import McpSync  # noqa: PLC0415

        servers = McpStore(self.paths).servers()
        written = McpSync(self.paths).owned_names()
        costs = McpCostStore(self.paths).current(servers)
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
                {c: f"~{cost.tokens:,}" for (name, c), cost in costs.items() if name == s.name},
                {c: cost.describe() for (name, c), cost in costs.items() if name == s.name},
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
            warn=[client],
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

    def save(self, server: McpServer, original: str | None) -> None:
        """Add ``server`` (``original`` None) or put it in place of the one named ``original`` (the form's
        Edit: the clients it is enabled in are kept, and it is rewritten in each of them). A value left
        as the mask keeps the value it had: the form never holds a secret it did not need."""
        from kvswitch.core.mcp import same_definition  # noqa: PLC0415
        from kvswitch.core.redact import MASK, mask_url  # noqa: PLC0415

        def change(servers: list[McpServer]) -> list[McpServer]:
            names = [s.name for s in servers]
            if server.name != original and server.name in names:
                raise KvSwitchError(f"an MCP server named {server.name!r} exists already")
            if original is None:
                return [*servers, server]
            if original not in names:
                raise KvSwitchError(f"no MCP server named {original!r} any more")
            old = servers[names.index(original)]
            kept = replace(
                server,
                url=old.url if server.url and server.url == mask_url(old.url) else server.url,
                env={k: old.env.get(k, "") if v == MASK else v for k, v in server.env.items()},
                headers={k: old.headers.get(k, "") if v == MASK else v for k, v in server.headers.items()},
            )
            return servers if same_definition(kept, old) and kept.name == old.name else [
                kept if s.name == original else s for s in servers]

        what = fill(self.tr("added %1") if original is None else self.tr("changed %1"), server.name)
        self._write(change, what, warn=list(server.clients))

    def masked_definition(self, name: str) -> dict[str, Any] | None:
        """The server for the form: env and header values replaced by the mask (``McpServer.as_json``)."""
        from kvswitch.core.mcp_store import McpStore  # noqa: PLC0415

        try:
            found = [s for s in McpStore(self.paths).servers() if s.name == name]
        except KvSwitchError as exc:
            self.write_failed.emit(str(exc))
            return None
        return found[0].as_json(show_secrets=False) if found else None

    def _write(self, change: Callable[[list[McpServer]], list[McpServer]], what: str,
               warn: list[str] | None = None) -> None:
        """``warn``: clients whose running process re-processes its prompt after this change (said with
        the last prompt size the gateway recorded: ``commands.mcp_cost.toggle_warning``)."""

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
            return "\n".join([what, *self._warnings(warn or [])]), self._read()

        self._start(work)

    def _warnings(self, clients: list[str]) -> list[str]:
        """For each running client of ``clients``: its next request re-processes its whole prompt, and
        how many tokens that was the last time the gateway saw it (or that it does not know)."""
        if not clients:
            return []
        from kvswitch.commands.mcp_cost import last_prompt, running_clients  # noqa: PLC0415
        from kvswitch.core.mcp_formats import client_kind  # noqa: PLC0415

        running = running_clients()
        lines = []
        for client in dict.fromkeys(client_kind(c) for c in clients):
            if client not in running:
                continue
            seen = last_prompt(self.paths, client)
            size = (fill(self.tr("%1 tokens, the last prompt the gateway recorded for it"), f"{seen:,}")
                    if seen is not None else self.tr("a size the gateway has not recorded"))
            if client == "claude":  # measured with Claude Code 2.1.332 (commands.mcp_cost.toggle_warning)
                lines.append(fill(self.tr(
                    "Claude Code is running: with ENABLE_TOOL_SEARCH=false its next request re-processes its "
                    "whole prompt (%1); with tool search on (its default) the tools come after the "
                    "conversation and the cache is kept."), size))
            else:
                lines.append(fill(self.tr(
                    "%1 is running: its next request's tool list changes, so the server may re-process up "
                    "to its whole prompt (%2)."), client, size))
        return lines

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
