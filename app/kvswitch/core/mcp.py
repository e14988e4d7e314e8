"""MCP servers as KV Switch keeps them: one list for every client, each server enabled per client.

A server is a name, a transport (``stdio``: command, args, env; ``http`` / ``sse``: url, headers) and
the clients it is enabled in. The name becomes a JSON member, a TOML table name and part of a ledger
key, so it is held to what all three clients accept and what cannot walk a path (``../x``): letters,
digits, ``_`` and ``-``, at most ``MAX_NAME`` characters. Every env and header value counts as a
secret: a token hides in ``GITHUB_TOKEN`` as easily as in ``X-Custom``, so all of them are masked in
every output, and the store holding them is 0600.

The clients' own shapes (Claude Code's ``mcpServers``, Codex's ``[mcp_servers.NAME]``, OpenCode's
``mcp``) are in ``core.mcp_formats``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kvswitch.core.errors import UsageError
from kvswitch.core.redact import MASK, mask_url

MAX_NAME = 64
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
TRANSPORTS = ("stdio", "http", "sse")
#: a client spec: ``claude`` (user scope, ``~/.claude.json``), ``claude-project:DIR`` (``DIR/.mcp.json``),
#: ``codex`` (``config.toml``), ``opencode`` (``opencode.json``)
CLIENTS = ("claude", "codex", "opencode")
PROJECT_PREFIX = "claude-project:"
#: the most servers one store (or one paste) holds: far above any real list, low enough to stay quick
MAX_SERVERS = 20_000


def check_name(name: str) -> str:
    """``name`` when it is a valid server name; else a ``UsageError`` saying what is allowed."""
    if not isinstance(name, str) or not name:
        raise UsageError("an MCP server needs a name")
    if len(name) > MAX_NAME:
        raise UsageError(f"MCP server name {name[:MAX_NAME]!r}... is longer than {MAX_NAME} characters")
    if not _NAME.fullmatch(name):
        raise UsageError(
            f"MCP server name {name!r} is not allowed: use letters, digits, '_' and '-' (starting with a "
            "letter or digit); no '/', '\\', '.', spaces or '..', which would reach outside its place"
        )
    return name


def check_client(spec: str) -> str:
    """A client spec, normalised (a project path made absolute); ``UsageError`` when unknown."""
    if spec in CLIENTS:
        return spec
    if spec.startswith(PROJECT_PREFIX) and len(spec) > len(PROJECT_PREFIX):
        directory = Path(spec[len(PROJECT_PREFIX) :]).expanduser()
        if not directory.is_absolute():
            directory = directory.resolve()
        return PROJECT_PREFIX + str(directory)
    raise UsageError(f"unknown MCP client {spec!r}: use claude, claude-project:DIR, codex or opencode")


@dataclass(frozen=True)
class McpServer:
    """One MCP server and the clients it is enabled in (``clients``: specs, see ``check_client``)."""

    name: str
    transport: str = "stdio"
    command: str = ""
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    clients: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        check_name(self.name)
        if self.transport not in TRANSPORTS:
            raise UsageError(
                f"MCP server {self.name!r}: transport must be stdio, http or sse, not {self.transport!r}"
            )
        if self.transport == "stdio" and not self.command:
            raise UsageError(f"MCP server {self.name!r}: a stdio server needs a command")
        if self.transport != "stdio" and not self.url.startswith(("http://", "https://")):
            raise UsageError(
                f"MCP server {self.name!r}: an {self.transport} server needs an http(s) URL, "
                f"not {mask_url(self.url)!r}"
            )
        for what, mapping in (("env", self.env), ("headers", self.headers)):
            if not all(isinstance(k, str) and k and isinstance(v, str) for k, v in mapping.items()):
                raise UsageError(f"MCP server {self.name!r}: {what} must map names to text values")
        if not all(isinstance(a, str) for a in self.args):
            raise UsageError(f"MCP server {self.name!r}: args must be text")

    @property
    def secrets(self) -> list[str]:
        """Every env and header value: masked wherever the server is shown."""
        return [v for v in (*self.env.values(), *self.headers.values()) if v]

    def enabled_in(self, client: str) -> bool:
        return client in self.clients

    def with_clients(self, clients: list[str] | tuple[str, ...]) -> McpServer:
        return replace(self, clients=tuple(dict.fromkeys(check_client(c) for c in clients)))

    def as_json(self, show_secrets: bool = False) -> dict[str, Any]:
        """The server as ``kvswitch mcp list --json`` and the store show it (values masked unless asked)."""

        def shown(mapping: dict[str, str]) -> dict[str, str]:
            return dict(mapping) if show_secrets else {k: MASK if v else v for k, v in mapping.items()}

        data: dict[str, Any] = {"name": self.name, "transport": self.transport}
        if self.transport == "stdio":
            data.update(command=self.command, args=list(self.args), env=shown(self.env))
        else:
            data.update(url=self.url if show_secrets else mask_url(self.url), headers=shown(self.headers))
        data["clients"] = list(self.clients)
        return data

    def store_json(self) -> dict[str, Any]:
        """The server as the store file holds it (in clear: the file is 0600)."""
        data = self.as_json(show_secrets=True)
        return {k: v for k, v in data.items() if v not in ({}, [], "")} | {"clients": list(self.clients)}


def server_from_json(data: Any, where: str) -> McpServer:
    """A server from the store's JSON object (``store_json``); ``UsageError`` naming ``where``."""
    if not isinstance(data, dict):
        raise UsageError(f"{where}: an MCP server must be a JSON object")
    try:
        return McpServer(
            name=data.get("name", ""),
            transport=data.get("transport", "stdio"),
            command=data.get("command", ""),
            args=tuple(data.get("args", ())),
            env=dict(data.get("env", {})),
            url=data.get("url", ""),
            headers=dict(data.get("headers", {})),
            clients=tuple(check_client(c) for c in data.get("clients", ())),
        )
    except (TypeError, ValueError) as exc:
        raise UsageError(f"{where}: {exc}") from None


def define(
    name: str,
    base: McpServer | None,
    *,
    command: list[str],
    url: str | None,
    sse: bool,
    env: dict[str, str],
    headers: dict[str, str],
) -> McpServer:
    """A server from what ``kvswitch mcp add`` / ``edit`` was given, over ``base`` (the one edited):
    a command makes it a stdio server, a URL an HTTP (or ``sse``) one; what is not given is kept."""
    clients = base.clients if base else ()
    if url and command:
        raise UsageError("give either --url or a command after '--', not both")
    if url or (base and base.transport != "stdio" and not command):
        transport = "sse" if sse or (base and base.transport == "sse" and not url) else "http"
        return McpServer(
            name, transport, url=url or (base.url if base else ""), headers=headers, clients=clients
        )
    if not command and base is None:
        raise UsageError(
            "a stdio server needs its command after '--' (kvswitch mcp add NAME -- npx -y pkg), "
            "an HTTP one --url URL"
        )
    head, *rest = command or [base.command if base else "", *(base.args if base else ())]
    return McpServer(name, "stdio", command=head, args=tuple(rest), env=env, clients=clients)


def same_definition(a: McpServer, b: McpServer) -> bool:
    """Whether two servers run the same thing (the clients they are enabled in aside)."""
    return replace(a, clients=()) == replace(b, clients=())


def merge_imported(
    existing: list[McpServer],
    incoming: list[McpServer],
    replace_names: set[str] | None = None,
    replace_all: bool = False,
) -> tuple[list[McpServer], list[str]]:
    """``existing`` with ``incoming`` merged in, and one line per server saying what happened.

    A new name is added. A known name with the same definition gains the incoming clients. A known
    name with a different definition is skipped unless it is in ``replace_names`` (or ``replace_all``):
    then the imported definition wins and keeps the clients of both.
    """
    merged = {s.name: s for s in existing}
    wanted = replace_names or set()
    report: list[str] = []
    for server in incoming:
        known = merged.get(server.name)
        if known is None:
            merged[server.name] = server
            report.append(
                f"added {server.name!r}" + (f" [{', '.join(server.clients)}]" if server.clients else "")
            )
            continue
        clients = tuple(dict.fromkeys((*known.clients, *server.clients)))
        if same_definition(known, server):
            merged[server.name] = replace(known, clients=clients)
            report.append(
                f"{server.name!r} is known already"
                + (
                    f"; now marked enabled in {', '.join(c for c in clients if c not in known.clients)}"
                    if clients != known.clients
                    else ""
                )
            )
        elif replace_all or server.name in wanted:
            merged[server.name] = replace(server, clients=clients)
            report.append(f"replaced {server.name!r} with the imported one")
        else:
            report.append(
                f"skipped {server.name!r}: a different server of that name is known "
                f"(--replace {server.name} takes the imported one)"
            )
    return list(merged.values()), report
