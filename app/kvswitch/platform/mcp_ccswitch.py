"""MCP servers from CC Switch's database (``~/.cc-switch/cc-switch.db``, table ``mcp_servers``).

CC Switch (3.7+; the 4.0 matrix reads the same table) keeps one row per server: ``id`` (the name it
writes into each app's file), ``name`` (a display name), ``server_config`` (the entry in Claude Code's
shape: ``type``, ``command``/``args``/``env`` or ``url``/``headers``) and one ``enabled_<app>`` flag per
app. The table is opened read-only; columns a version lacks are simply not read.
"""

from __future__ import annotations

import json
from pathlib import Path

from kvswitch.core.ccswitch_db import read_only_db
from kvswitch.core.errors import ConfigParseError, FileAccessError, UsageError
from kvswitch.core.mcp import CLIENTS, McpServer
from kvswitch.core.mcp_formats import from_client
from kvswitch.core.paths import home_dir
from kvswitch.core.strictparse import loads_json


def read_cc_switch_mcp(path: Path | str | None = None) -> tuple[list[McpServer], list[str]]:
    """CC Switch's servers, each enabled in the clients CC Switch enables it in; problems by name."""
    base = Path(path) if path else home_dir() / ".cc-switch"
    if base.is_dir():
        base = base / "cc-switch.db"
    if not base.is_file():
        raise FileAccessError(
            base, "not found; is CC Switch installed (its database is ~/.cc-switch/cc-switch.db)?"
        )
    with read_only_db(base) as conn:
        columns = {row[1] for row in conn.execute("PRAGMA table_info(mcp_servers)")}
        if not {"id", "server_config"} <= columns:
            raise ConfigParseError(
                base, "no 'mcp_servers' table with id and server_config; is this CC Switch 3.7 or newer?"
            )
        flags = [c for c in CLIENTS if f"enabled_{c}" in columns]
        picked = ", ".join(f"enabled_{c}" for c in flags)
        rows = conn.execute(
            f"SELECT id, server_config{', ' + picked if picked else ''} FROM mcp_servers ORDER BY rowid"
        ).fetchall()
    found: list[McpServer] = []
    problems: list[str] = []
    for server_id, config, *enabled in rows:
        where = f"{base} [mcp server {server_id!r}]"
        try:
            entry = loads_json(where, str(config))
            server = from_client(str(server_id), entry, "claude")
        except (UsageError, json.JSONDecodeError) as exc:
            problems.append(f"{where}: {exc}")
            continue
        found.append(server.with_clients([c for c, on in zip(flags, enabled, strict=True) if on]))
    return found, problems
