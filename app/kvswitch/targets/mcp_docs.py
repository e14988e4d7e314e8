"""The three clients' MCP sections as documents the key merge (``keyed``) can plan over.

Each server is one key, ``<section>.<name>``, whose value is the whole entry as canonical JSON text: the
ledger holds text, a server is owned (and recognised as edited by hand) as a whole, and a hand-made
server beside it is a different key the merge never touches. Every ``set`` / ``delete`` is also noted
in ``touched``, so a writer can replay exactly those changes onto a file another program rewrote in
the meantime (``~/.claude.json``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, MutableMapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import tomlkit
from tomlkit.items import InlineTable, Table

from kvswitch.core.errors import ConfigParseError
from kvswitch.targets.claude import JsonDocument, canonical_json
from kvswitch.targets.codex import TomlDocument
from kvswitch.targets.keyed import MISSING

#: the order entries are written in, as the clients' own commands write them (canonical text is sorted)
ORDER = ("type", "command", "args", "env", "environment", "url", "headers", "http_headers", "enabled")


def ordered(entry: Any) -> Any:
    """``entry`` (decoded canonical text) with its keys in ``ORDER``, others after them."""
    if not isinstance(entry, dict):
        return entry
    rank = {key: index for index, key in enumerate(ORDER)}
    return dict(sorted(entry.items(), key=lambda item: rank.get(item[0], len(ORDER))))


class McpSectionMixin:
    """Bookkeeping shared by the JSON and TOML documents (``section``, ``touched``, ``dropped``)."""

    section: str
    touched: dict[str, Any]
    dropped: bool

    def server_name(self, key: str) -> str | None:
        head = self.section + "."
        return key[len(head) :] if key.startswith(head) else None

    if TYPE_CHECKING:
        def entries(self) -> MutableMapping[str, Any]: ...

    def delete_key(self, key: str, delete_outside: Callable[[str], None]) -> None:
        """Delete ``key``: a server of the section is removed and noted as touched; any other key goes
        to the document's own ``delete_outside`` (the whole section: noted as dropped)."""
        name = self.server_name(key)
        if name is None:
            delete_outside(key)
            if key == self.section:
                self.dropped = True
            return
        self.entries().pop(name, None)
        self.touched[name] = None


class McpJsonDocument(JsonDocument, McpSectionMixin):
    """``mcpServers`` (Claude Code) or ``mcp`` (OpenCode) of a JSON object."""

    def __init__(self, data: dict[str, Any], path: Path | str, section: str):
        super().__init__(data, path)
        self.section = section
        self.touched = {}
        self.dropped = False

    def entries(self) -> dict[str, Any]:
        node = self.data.get(self.section)
        return node if isinstance(node, dict) else {}

    def get(self, key: str) -> Any:
        name = self.server_name(key)
        if name is None:
            return super().get(key)
        entry = self.entries().get(name, MISSING)
        return entry if entry is MISSING else canonical_json(entry)

    def set(self, key: str, value: Any) -> list[str]:
        name = self.server_name(key)
        if name is None:
            return super().set(key, value)
        created = []
        if self.section not in self.data:
            self.data[self.section] = {}
            created.append(self.section)
        node = self.data[self.section]
        if not isinstance(node, dict):
            raise ConfigParseError(self.path, f"'{self.section}' must be an object to hold MCP servers")
        node[name] = ordered(json.loads(value) if isinstance(value, str) else value)
        self.touched[name] = node[name]
        return created

    def delete(self, key: str) -> None:
        self.delete_key(key, super().delete)


def _toml_value(value: Any) -> Any:
    if isinstance(value, dict):
        table = tomlkit.inline_table()
        for k, v in value.items():
            table[k] = v
        return table
    return value


class McpTomlDocument(TomlDocument, McpSectionMixin):
    """Codex's ``[mcp_servers.NAME]`` tables: written as tables under a super-table, comments and the
    order of everything else kept (tomlkit)."""

    def __init__(self, doc: tomlkit.TOMLDocument, path: Path | str, section: str = "mcp_servers"):
        super().__init__(doc, path)
        self.section = section
        self.touched = {}
        self.dropped = False

    def entries(self) -> dict[str, Any]:
        node = self.doc.get(self.section)
        return node if isinstance(node, Table | dict) else {}

    def get(self, key: str) -> Any:
        name = self.server_name(key)
        if name is None:
            return super().get(key)
        entry = self.entries().get(name, MISSING)
        if entry is MISSING:
            return MISSING
        return canonical_json(entry.unwrap() if hasattr(entry, "unwrap") else entry)

    def set(self, key: str, value: Any) -> list[str]:
        name = self.server_name(key)
        if name is None:
            return super().set(key, value)
        entry = ordered(json.loads(value) if isinstance(value, str) else value)
        created = []
        if self.section not in self.doc:
            self.doc[self.section] = tomlkit.table(is_super_table=True)
            created.append(self.section)
        node = self.doc[self.section]
        if not isinstance(node, Table):
            raise ConfigParseError(self.path, f"'{self.section}' must be a table to hold MCP servers")
        table = tomlkit.table()
        for k, v in entry.items():
            table[k] = _toml_value(v)
        if name in node and isinstance(node[name], Table | InlineTable):
            node[name] = table
        else:
            node.append(name, table)
        self.touched[name] = entry
        return created

    def delete(self, key: str) -> None:
        self.delete_key(key, super().delete)


def section_secrets(entries: dict[str, Any]) -> list[str]:
    """Every env / header value of every entry in a section (the user's own servers too): a diff shows
    unchanged lines around a change, so theirs must be masked as well as ours."""
    found: list[str] = []
    for entry in entries.values():
        if not isinstance(entry, dict):
            continue
        for field in ("env", "environment", "headers", "http_headers"):
            values = entry.get(field)
            if isinstance(values, dict):
                found.extend(str(v) for v in values.values() if isinstance(v, str) and v)
    return found
