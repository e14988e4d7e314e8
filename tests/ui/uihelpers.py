"""Helpers shared by the desktop app tests."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


def make_profile(name: str, kind: str = "llama.cpp", base_url: str = "http://127.0.0.1:8080",
                 **extra: Any) -> Any:
    from kvswitch.core.models import Profile

    return Profile.model_validate({"name": name, "kind": kind, "base_url": base_url, **extra})


def mcp_page(qtbot: Any, paths: Any) -> tuple[Any, Any]:
    """The MCP tab on its own over ``paths``: its controller and the page (closed with the test)."""
    from kvswitch.ui.control.controller_mcp import McpController
    from kvswitch.ui.mcp.mcp_page import McpPage

    controller = McpController(paths)
    page = McpPage(controller)
    qtbot.addWidget(page)
    return controller, page


def mcp_cell(page: Any, name: str, client: str) -> Any:
    """The MCP page's cell of server ``name`` for ``client`` (its toggle and measured cost)."""
    from kvswitch.ui.mcp.mcp_page import FIXED_COLUMNS

    column = FIXED_COLUMNS + page.controller.clients.index(client)
    for row in range(page.table.rowCount()):
        if page.table.item(row, 0).text() == name:
            return page.table.item(row, column)
    raise AssertionError(f"no row {name}")


@pytest.fixture(name="shell")
def shell_fixture(qtbot: Any, paths: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The whole app (window, tray, controller) over the test's ``paths``, not shown; Quit does not end
    the test's QApplication, and the shell is shut down after the test."""
    from PySide6.QtWidgets import QApplication

    from kvswitch.ui.shell.shell import AppShell

    monkeypatch.setattr(QApplication, "quit", staticmethod(lambda: None))
    app_shell = AppShell(paths, None, tray_available=True)
    qtbot.addWidget(app_shell.window)
    yield app_shell
    app_shell.shutdown()
