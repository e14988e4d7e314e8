"""The MCP tab for the docs' screenshots (states ``mcp`` and ``mcp-form`` of ``screenshot_states``' tour).

The demo HOME gets three MCP servers, written into the clients' files through KV Switch's own engines
(``McpStore`` and ``McpSync``, as the tab's check boxes write them): the test server ``kvs-stdio`` with
a secret env value, enabled in all three clients; ``docs`` over streamable HTTP with a secret header,
in Claude Code and OpenCode; ``fetch`` in Codex only. The secrets are made up for the demo and only
ever shown masked (``main`` checks that no sidecar holds one).

The one cost shown is the one measured in docs/mcp.md (``kvs-stdio`` with Claude Code 2.1.332 on
llama-server b11434, tests/e2e/test_e2e_mcp_cost.py: 13,795 tokens with it, 13,706 without), recorded in
the demo's ``mcp-costs.json`` as ``kvswitch mcp measure`` records it; it is not measured again here.
Everything else is "unknown", as it is until measured.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

#: made up for the demo; none may appear in a screenshot or its sidecar
SECRETS = ("kvs-demo-token-5f1c9a", "sk-docs-demo-0123456789")
#: when the figure was written into docs/mcp.md (commit 8039fec), the measurement itself ran before it
DOCUMENTED_AT = "2026-12-07T09:35:26+00:00"


def make_servers(tour: Any) -> None:
    """The servers in KV Switch's list and in each client's file, and the one documented cost."""
    from kvswitch.core.mcp import McpServer  # noqa: PLC0415
    from kvswitch.core.mcp_costs import McpCost, McpCostStore, definition_fingerprint  # noqa: PLC0415
    from kvswitch.core.mcp_store import McpStore  # noqa: PLC0415
    from kvswitch.targets.mcp_sync import McpSync  # noqa: PLC0415

    store = McpStore(tour.paths)
    if store.servers():
        return
    stdio = McpServer("kvs-stdio", "stdio", command="python3", args=("mcp_server.py", "stdio"),
                      env={"KVS_API_TOKEN": SECRETS[0]}, clients=("claude", "codex", "opencode"))
    servers = [
        stdio,
        McpServer("docs", "http", url="https://docs.example.net/mcp", headers={"X-Api-Key": SECRETS[1]},
                  clients=("claude", "opencode")),
        McpServer("fetch", "stdio", command="uvx", args=("mcp-server-fetch",), clients=("codex",)),
    ]
    with store.editing() as listed:
        McpSync(tour.paths).apply(servers)
        listed[:] = servers
    McpCostStore(tour.paths).record([McpCost(
        "kvs-stdio", "claude", 89, 13_795, 13_706, DOCUMENTED_AT, "llama.cpp b11434 (the tests' tiny model)",
        "Claude Code 2.1.332", definition_fingerprint(stdio), ("mcp__kvs-stdio__kvswitch_echo",))])


def mcp(tour: Any) -> None:
    """The matrix (costs in the cells) and the Edit form of the stdio server, its env value masked."""
    from kvswitch.ui.mcp.mcp_form import McpServerDialog  # noqa: PLC0415
    from kvswitch.ui.mcp.mcp_page import McpPage  # noqa: PLC0415

    make_servers(tour)
    window = tour.window
    if not window.isVisible():  # the state taken alone (KVSWITCH_SCREENSHOTS_STATES)
        window.resize(1180, 760)
        if not window.content_built:
            window.build_content()
        window.show()
        tour.pump(400)
    window.build_tabs()
    window.message_bar.hide()
    page: McpPage = window.mcp_page
    page.controller.reload()
    window.tabs.setCurrentWidget(page)
    page.table.setCurrentCell(0, 0)
    tour.pump(400)
    tour.take("mcp", window)
    # what Edit… opens (McpPage.open_form), shown instead of run modally so the tour goes on
    dialog = McpServerDialog(page.controller.masked_definition("kvs-stdio"), page)
    dialog.resize(620, 480)
    dialog.show()
    tour.pump(400)
    tour.take("mcp-form", dialog)
    dialog.reject()


def main() -> int:
    """Check every committed MCP sidecar for the demo secrets (none may be there unmasked)."""
    shots = Path(__file__).resolve().parent.parent / "docs" / "screenshots"
    leaks = [p.name for p in sorted(shots.glob("mcp*.json"))
             if any(secret in json.dumps(json.loads(p.read_text())) for secret in SECRETS)]
    print("secrets in: " + ", ".join(leaks) if leaks else "no secret in any MCP sidecar")
    return 1 if leaks else 0


if __name__ == "__main__":
    raise SystemExit(main())
