"""The MCP page's status line follows the list: "No MCP servers yet" goes once servers are there.

Servers added outside the window (``kvswitch mcp add``, an import in another window) arrive by a reload
with no write of the page's own; the empty-list sentence used to stay under the filled matrix (seen in
the docs' screenshot of the tab)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kvswitch.core.mcp import McpServer
from kvswitch.core.mcp_store import McpStore
from kvswitch.core.paths import AppPaths
from kvswitch.ui.control.controller_mcp import McpController
from kvswitch.ui.mcp.mcp_page import McpPage


def test_the_empty_list_sentence_goes_when_servers_arrive(qtbot: Any, fake_home: Path) -> None:
    controller = McpController(AppPaths.default())
    page = McpPage(controller)
    qtbot.addWidget(page)
    assert page.status.text().startswith("No MCP servers yet")
    with McpStore(AppPaths.default()).editing() as servers:  # as `kvswitch mcp add` leaves the list
        servers.append(McpServer("fetch", "stdio", command="uvx", args=("mcp-server-fetch",)))
    controller.reload()
    assert page.table.rowCount() == 1
    assert page.status.text() == ""
    with McpStore(AppPaths.default()).editing() as servers:
        servers.clear()
    controller.reload()
    assert page.status.text().startswith("No MCP servers yet")
