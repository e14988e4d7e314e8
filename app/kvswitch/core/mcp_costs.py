"""What each MCP server was measured to add to every request of a client: ``mcp-costs.json``.

An enabled MCP server's tools sit at the start of every request its client sends, so they cost the
prompt cache what they weigh in the serving model's own tokens. Only a measurement can say how much
(``kvswitch mcp measure``: the server's own prompt count of a real client request with the MCP server,
less that of the same request without it), and only for the server, client and version measured. So
each figure is kept with when, with which client version and on which server it was measured, and
with a fingerprint of the MCP server's definition: after an edit it is unknown again, never stale.
Nothing here makes a number up: what was not measured is absent, and shown as unknown.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from kvswitch.core.errors import ConfigParseError
from kvswitch.core.fsutil import atomic_write, read_bytes
from kvswitch.core.lock import FileLock
from kvswitch.core.mcp import McpServer
from kvswitch.core.paths import AppPaths
from kvswitch.core.strictparse import loads_json

COSTS_SCHEMA = 1
#: the largest costs file read (one entry per server and client: far below this)
MAX_BYTES = 8 << 20


def definition_fingerprint(server: McpServer) -> str:
    """A digest of what the server runs (its clients aside): a measurement holds for this only."""
    data = {k: v for k, v in server.store_json().items() if k != "clients"}
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class McpCost:
    """One measurement: ``tokens`` = ``with_tokens`` - ``without_tokens``, the server's own prompt counts."""

    server: str
    client: str
    tokens: int
    with_tokens: int
    without_tokens: int
    #: ISO 8601, UTC
    measured_at: str
    #: the serving model's server, URL masked (the kind's label and its URL)
    measured_on: str
    #: the client and its version (``Claude Code 2.1.332``)
    client_version: str
    fingerprint: str
    #: the MCP server's tool names as the client sent them (``mcp__NAME__tool``)
    tools: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["tools"] = list(self.tools)
        return data

    def describe(self) -> str:
        return (f"~{self.tokens:,} tokens a request (measured {self.measured_at[:16].replace('T', ' ')} UTC "
                f"with {self.client_version} on {self.measured_on})")


def _cost_from_json(data: Any) -> McpCost | None:
    if not isinstance(data, dict):
        return None
    try:
        cost = McpCost(**{**data, "tools": tuple(data.get("tools", ()))})
    except TypeError:
        return None
    numbers = (cost.tokens, cost.with_tokens, cost.without_tokens)
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in numbers):
        return None
    return cost


class McpCostStore:
    """The measured costs, keyed by (server, client); 0644 (no secrets: names and counts only)."""

    def __init__(self, paths: AppPaths):
        self.paths = paths

    @property
    def file(self) -> Path:
        return self.paths.config_dir / "mcp-costs.json"

    def _read(self) -> list[McpCost]:
        raw = read_bytes(self.file, limit=MAX_BYTES)
        if raw is None or not raw.strip():
            return []
        try:
            data = loads_json(self.file, raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ConfigParseError(self.file, f"not valid JSON ({type(exc).__name__})") from None
        items = data.get("costs") if isinstance(data, dict) else None
        if not isinstance(items, list):
            raise ConfigParseError(self.file, 'expected {"schema_version": 1, "costs": [...]}')
        return [cost for cost in map(_cost_from_json, items) if cost is not None]

    def current(self, servers: list[McpServer]) -> dict[tuple[str, str], McpCost]:
        """The costs still true of ``servers`` as they are defined now, by (server, client). A costs file
        that cannot be read counts as no measurement (it holds only figures to show, never the user's
        data); ``record`` refuses to write over it, naming it."""
        prints = {s.name: definition_fingerprint(s) for s in servers}
        try:
            found = self._read()
        except ConfigParseError:
            return {}
        return {(c.server, c.client): c for c in found if prints.get(c.server) == c.fingerprint}

    def record(self, costs: list[McpCost]) -> None:
        """Keep ``costs``, each replacing an earlier one of the same server and client."""
        with FileLock(self.paths.config_dir / "mcp-costs.lock", timeout=10.0, what="saving MCP costs"):
            kept = {(c.server, c.client): c for c in self._read()}
            kept.update({(c.server, c.client): c for c in costs})
            payload = {"schema_version": COSTS_SCHEMA, "costs": [c.as_json() for c in kept.values()]}
            atomic_write(self.file, (json.dumps(payload, indent=2, ensure_ascii=False) + "\n").encode())
