"""MCP servers in each client's own shape, both ways, and pasted JSON or TOML holding many of them.

- Claude Code (``~/.claude.json`` / ``.mcp.json`` ``mcpServers``): ``{"type": "stdio", "command",
  "args", "env"}`` or ``{"type": "http"|"sse", "url", "headers"}``, as ``claude mcp add`` writes them.
- Codex (``[mcp_servers.NAME]``): ``command``, ``args``, ``env`` or ``url``, ``http_headers``; never a
  ``type`` key (one broke Codex 0.158+) and no SSE (Codex speaks streamable HTTP only).
- OpenCode (``mcp``): ``{"type": "local", "command": [cmd, *args], "environment", "enabled"}`` or
  ``{"type": "remote", "url", "headers", "enabled"}``.

Reading is lenient about what a client adds (``cwd``, timeouts): those keys are not kept, and an entry
whose shape KV Switch cannot represent is reported by name, never guessed.
"""

from __future__ import annotations

import json
import re
import tomllib
from typing import Any

from kvswitch.core.errors import ConfigParseError, UsageError
from kvswitch.core.mcp import MAX_SERVERS, McpServer
from kvswitch.core.strictparse import loads_json

#: the member each client keeps its servers under (Codex: a top-level table)
SECTIONS = {"claude": "mcpServers", "codex": "mcp_servers", "opencode": "mcp"}
_TOML_AT = re.compile(r"\(at line (\d+), column (\d+)\)")


class Unsupported(UsageError):
    """The server cannot be written in this client's format (an SSE server for Codex)."""


def client_kind(spec: str) -> str:
    """``claude`` for both Claude Code scopes, else the spec itself."""
    return "claude" if spec.startswith("claude") else spec


def to_client(server: McpServer, kind: str) -> dict[str, Any]:
    """The entry ``server`` is written as in client ``kind``'s file."""
    if kind == "claude":
        if server.transport == "stdio":
            return {
                "type": "stdio",
                "command": server.command,
                "args": list(server.args),
                "env": dict(server.env),
            }
        entry: dict[str, Any] = {"type": server.transport, "url": server.url}
        if server.headers:
            entry["headers"] = dict(server.headers)
        return entry
    if kind == "codex":
        if server.transport == "sse":
            raise Unsupported(
                f"MCP server {server.name!r} speaks SSE, which Codex does not (it connects to "
                "stdio and streamable-HTTP servers only); enable it for the other clients"
            )
        if server.transport == "stdio":
            entry = {"command": server.command}
            if server.args:
                entry["args"] = list(server.args)
            if server.env:
                entry["env"] = dict(server.env)
            return entry
        entry = {"url": server.url}
        if server.headers:
            entry["http_headers"] = dict(server.headers)
        return entry
    if server.transport == "stdio":
        entry = {"type": "local", "command": [server.command, *server.args]}
        if server.env:
            entry["environment"] = dict(server.env)
    else:
        entry = {"type": "remote", "url": server.url}
        if server.headers:
            entry["headers"] = dict(server.headers)
    entry["enabled"] = True
    return entry


def _texts(value: Any, what: str, name: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
        isinstance(v, str | int | float | bool) for v in value.values()
    ):
        raise UsageError(f"MCP server {name!r}: {what} must be an object of text values")
    return {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in value.items()}


def from_client(name: str, entry: Any, kind: str) -> McpServer:
    """``entry`` of client ``kind`` as a server (no clients set); ``UsageError`` naming it otherwise."""
    if not isinstance(entry, dict):
        raise UsageError(f"MCP server {name!r}: expected an object, found {type(entry).__name__}")
    if kind == "opencode":
        command = entry.get("command")
        if entry.get("type") == "remote" or ("url" in entry and not command):
            transport = "http"
            return McpServer(
                name,
                transport,
                url=str(entry.get("url", "")),
                headers=_texts(entry.get("headers"), "headers", name),
            )
        if not isinstance(command, list) or not command or not all(isinstance(c, str) for c in command):
            raise UsageError(f"MCP server {name!r}: OpenCode's 'command' must be a list of text")
        return McpServer(
            name,
            "stdio",
            command=command[0],
            args=tuple(command[1:]),
            env=_texts(entry.get("environment"), "environment", name),
        )
    if "url" in entry and not entry.get("command"):
        kind_type = str(entry.get("type") or "http")
        transport = "sse" if kind_type == "sse" else "http"
        headers = entry.get("http_headers") if kind == "codex" else entry.get("headers")
        return McpServer(name, transport, url=str(entry["url"]), headers=_texts(headers, "headers", name))
    command = entry.get("command")
    args = entry.get("args") or []
    if (
        not isinstance(command, str)
        or not isinstance(args, list)
        or not all(isinstance(a, str) for a in args)
    ):
        raise UsageError(
            f"MCP server {name!r}: needs a text 'command' and a list of text 'args' (or a 'url')"
        )
    return McpServer(
        name, "stdio", command=command, args=tuple(args), env=_texts(entry.get("env"), "env", name)
    )


def servers_in(section: Any, kind: str, where: str) -> tuple[list[McpServer], list[str]]:
    """Every server of a client's section; entries that cannot be read are returned as problems."""
    if section is None:
        return [], []
    if not isinstance(section, dict):
        raise UsageError(f"{where}: '{SECTIONS[kind]}' must be an object of servers")
    if len(section) > MAX_SERVERS:
        raise UsageError(
            f"{where}: {len(section):,} MCP servers, more than the {MAX_SERVERS:,} KV Switch reads"
        )
    found: list[McpServer] = []
    problems: list[str] = []
    for name, entry in section.items():
        try:
            found.append(from_client(str(name), entry, kind))
        except UsageError as exc:
            problems.append(f"{where}: {exc}")
    return found, problems


def parse_pasted(text: str, where: str = "pasted text") -> tuple[list[McpServer], list[str]]:
    """Servers in pasted JSON (Claude's ``{"mcpServers": …}``, OpenCode's ``{"mcp": …}``, a bare
    ``{name: entry}``) or TOML (Codex's ``[mcp_servers.NAME]``). Syntax errors name the line."""
    stripped = text.strip()
    if not stripped:
        raise UsageError(f"{where}: nothing to import")
    if stripped.startswith("{"):
        try:
            data = loads_json(where, stripped)
        except json.JSONDecodeError as exc:
            raise ConfigParseError(where, f"not valid JSON: {exc.msg}", exc.lineno, exc.colno) from None
        if not isinstance(data, dict):
            raise ConfigParseError(where, "expected a JSON object")
        for kind, key in SECTIONS.items():
            if key in data:
                return servers_in(data[key], kind, where)
        return servers_in(data, "claude", where)
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        at = _TOML_AT.search(str(exc))
        line, column = (int(at.group(1)), int(at.group(2))) if at else (None, None)
        raise ConfigParseError(
            where, f"not valid TOML: {_TOML_AT.sub('', str(exc)).strip()}", line, column
        ) from None
    if "mcp_servers" not in doc:
        raise UsageError(f"{where}: no [mcp_servers.NAME] tables, 'mcpServers' or 'mcp' found")
    return servers_in(doc["mcp_servers"], "codex", where)
