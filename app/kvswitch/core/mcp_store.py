"""KV Switch's list of MCP servers: ``mcp.json`` in its config dir, 0600 (env and header values are
secrets), written atomically under a lock so the window and a terminal can both edit it.

The store is the list the user manages; what is in each client's file is the writers' business
(``targets.mcp_sync``), which plans from this list and records ownership in the ledger like a profile.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kvswitch.core.errors import ConfigParseError, UsageError
from kvswitch.core.fsutil import atomic_write, read_bytes
from kvswitch.core.knownsecrets import remember_secrets
from kvswitch.core.lock import FileLock
from kvswitch.core.mcp import MAX_SERVERS, McpServer, server_from_json
from kvswitch.core.paths import AppPaths
from kvswitch.core.strictparse import loads_json

MCP_SCHEMA = 1


class McpStore:
    """The MCP servers, in the user's order. Every mutation re-reads the file under the lock."""

    def __init__(self, paths: AppPaths):
        self.paths = paths

    @property
    def file(self) -> Path:
        return self.paths.config_dir / "mcp.json"

    def servers(self) -> list[McpServer]:
        raw = read_bytes(self.file)
        if raw is None or not raw.strip():
            return []
        try:
            data = loads_json(self.file, raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise ConfigParseError(self.file, f"not UTF-8 text (byte {exc.start})") from None
        except json.JSONDecodeError as exc:
            raise ConfigParseError(self.file, f"not valid JSON: {exc.msg}", exc.lineno, exc.colno) from None
        items = data.get("servers") if isinstance(data, dict) else None
        if not isinstance(items, list):
            raise ConfigParseError(self.file, 'expected {"schema_version": 1, "servers": [...]}')
        found = [server_from_json(item, f"{self.file} server {n}") for n, item in enumerate(items, 1)]
        remember_secrets([s for server in found for s in server.secrets])
        return found

    def get(self, name: str) -> McpServer:
        for server in self.servers():
            if server.name == name:
                return server
        raise UsageError(f"no MCP server named {name!r} ('kvswitch mcp list' shows them)")

    def names(self) -> list[str]:
        return [s.name for s in self.servers()]

    @contextmanager
    def editing(self) -> Iterator[list[McpServer]]:
        """The list to change in place; saved (when changed) if the block ends without an error."""
        with FileLock(self.paths.config_dir / "mcp.lock", timeout=10.0, what="saving MCP servers"):
            servers = self.servers()
            before = list(servers)
            yield servers
            if servers != before:  # an import that brought nothing leaves no file behind
                self._write(servers)

    def _write(self, servers: list[McpServer]) -> None:
        names = [s.name for s in servers]
        if len(set(names)) != len(names):
            raise UsageError("two MCP servers would have the same name")
        if len(servers) > MAX_SERVERS:
            raise UsageError(f"more than {MAX_SERVERS:,} MCP servers")
        payload = {"schema_version": MCP_SCHEMA, "servers": [s.store_json() for s in servers]}
        text = json.dumps(payload, indent=2, ensure_ascii=False) + "\n"
        atomic_write(self.file, text.encode("utf-8"), secret=True)
