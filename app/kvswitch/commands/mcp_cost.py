"""``kvswitch mcp measure``, and what ``kvswitch mcp list`` says each server costs the prompt cache.

The figures come from ``verify.mcp_cost`` (the real client, the server's own counts) and are kept in
``core.mcp_costs``; a server, client or definition never measured is "unknown", never estimated.
Toggling a server while a client runs can rewrite the start of that client's next request, so the
whole prompt is processed again: ``toggle_warning`` says when, and how many tokens that was the last
time the gateway saw that client (``kvswitch.usage``), or that it does not know.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
from typing import Any

from kvswitch.commands.common import err, out, paths_from, store_from
from kvswitch.core.errors import KvSwitchError, UsageError
from kvswitch.core.gateway_config import usage_db
from kvswitch.core.mcp import CLIENTS, McpServer
from kvswitch.core.mcp_costs import McpCost, McpCostStore
from kvswitch.core.mcp_formats import client_kind
from kvswitch.core.mcp_store import McpStore
from kvswitch.core.paths import AppPaths
from kvswitch.usage.queries import UsageFilter, requests_page
from kvswitch.verify.client_run import find_client
from kvswitch.verify.client_specs import CLIENTS as CLIENT_SPECS
from kvswitch.verify.mcp_cost import measure
from kvswitch.verify.processes import find_agent_processes

#: ``mcp list``'s word for a client never measured
UNKNOWN = "unknown ('kvswitch mcp measure --client claude|codex|opencode' measures it)"
#: the gateway's agent name for each client kind
AGENTS = {"claude": "claude-code", "codex": "codex", "opencode": "opencode"}


def register(sub: Any) -> None:
    measure = sub.add_parser(
        "measure",
        help="measure what servers add to every request of a client (real client, the server's own counts)",
        description="Runs the installed client (Claude Code by default, or Codex or OpenCode) headless "
        "through the active profile's backend, with no MCP server, then each named one alone, then none "
        "again, in a throw-away home (never touching your own files), and keeps the difference in the "
        "server's own prompt token count. No figure when the client did not send the server's tools.",
    )
    measure.add_argument("names", nargs="*", metavar="NAME",
                         help="default: every server enabled for the client")
    measure.add_argument("--client", choices=CLIENTS, default="claude",
                         help="the client to measure with (default: claude)")
    for spec in CLIENT_SPECS.values():
        measure.add_argument(spec.bin_option, metavar="PATH", dest=f"{spec.name}_bin",
                             help=f"the {spec.executable} binary to run (default: on PATH)")
    measure.add_argument("--timeout", type=float, default=600.0, help="seconds for all runs (default 600)")
    measure.add_argument("--json", action="store_true")
    measure.set_defaults(func=cmd_measure)


def cmd_measure(args: argparse.Namespace) -> int:
    client = args.client
    servers = McpStore(paths_from(args)).servers()
    if args.names:
        known = {s.name: s for s in servers}
        missing = [n for n in args.names if n not in known]
        if missing:
            raise UsageError(f"no MCP server named {missing[0]!r} ('kvswitch mcp list' shows them)")
        chosen = [known[n] for n in args.names]
    else:
        chosen = [s for s in servers if any(client_kind(c) == client for c in s.clients)]
    if not chosen:
        raise UsageError(f"no MCP server to measure: name one, or enable one for {client}")
    profiles = store_from(args)
    if not profiles.active_name:
        raise UsageError("no profile is in use: the cost is measured on the active profile's server")
    profile = profiles.get(profiles.active_name)
    binary = find_client(client, getattr(args, f"{client}_bin"))
    costs = measure(profile, binary, chosen, client=client, timeout=args.timeout,
                    on_step=lambda text: err(f"running {text}..."))
    McpCostStore(paths_from(args)).record(costs)
    if args.json:
        out(json.dumps([c.as_json() for c in costs], indent=2, ensure_ascii=False))
        return 0
    for cost in costs:
        out(f"{cost.server}: {cost.describe()}; tools: {', '.join(cost.tools)}")
    return 0


def costs_for(paths: AppPaths, servers: list[McpServer]) -> dict[tuple[str, str], McpCost]:
    return McpCostStore(paths).current(servers)


def cost_json(costs: dict[tuple[str, str], McpCost], server: McpServer) -> dict[str, Any]:
    """``{client: measurement or None}`` for ``mcp list --json`` (None: unknown)."""
    return {client: (costs[(server.name, client)].as_json() if (server.name, client) in costs else None)
            for client in CLIENTS}


def cost_line(costs: dict[tuple[str, str], McpCost], server: McpServer) -> str:
    """``    cost: claude ~N tokens a request (...); codex unknown; opencode unknown``."""
    parts = []
    for client in CLIENTS:
        cost = costs.get((server.name, client))
        parts.append(f"{client} {cost.describe() if cost else 'unknown'}")
    line = "    cost: " + "; ".join(parts)
    return line if any(costs.get((server.name, c)) for c in CLIENTS) else f"    cost: {UNKNOWN}"


def last_prompt(paths: AppPaths, client: str) -> int | None:
    """The whole prompt of the client's last request the gateway recorded (``input_tokens`` is the
    server's prompt count, cached part included), or ``None`` when it recorded none."""
    agent = AGENTS.get(client_kind(client))
    try:
        rows = requests_page(usage_db(paths), UsageFilter(client=agent), limit=50)
    except (OSError, ValueError, sqlite3.Error, KvSwitchError):
        return None
    for row in reversed(rows):
        if row.input_tokens is not None:
            return row.input_tokens
    return None


def running_clients() -> set[str]:
    """The clients with a process running now (``claude``, ``codex``, ``opencode``)."""
    return {p.agent for p in find_agent_processes({})}


def toggle_warning(paths: AppPaths, clients: list[str], running: set[str] | None = None) -> list[str]:
    """One line per running client: what its next request re-processes once it has the change.

    Measured with Claude Code 2.1.332 (tests/e2e/test_e2e_mcp_live.py): with ``ENABLE_TOOL_SEARCH=false``
    the tools sit at the start of the prompt, so the whole prompt is processed again; with tool search on
    (its default) a resumed session gets the new tools' names after the conversation and keeps its cache.
    For Codex and OpenCode where the tools sit was not measured: "up to" the last prompt."""
    running = running_clients() if running is None else running
    lines = []
    for client in dict.fromkeys(client_kind(c) for c in clients):
        if client not in running:
            continue
        seen = last_prompt(paths, client)
        size = (f"{seen:,} tokens, the last prompt the gateway recorded for it"
                if seen is not None else "a size the gateway has not recorded")
        if client == "claude":
            lines.append("claude is running: with ENABLE_TOOL_SEARCH=false its next request re-processes its "
                         f"whole prompt ({size}); with tool search on (Claude Code's default) the tools "
                         "come after the conversation and the cache is kept")
        else:
            lines.append(f"{client} is running: its next request's tool list changes, so the server may "
                         f"re-process up to its whole prompt ({size})")
    return lines
