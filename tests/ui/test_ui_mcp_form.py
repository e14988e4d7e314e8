"""The MCP page's Add / Edit form and its place in the window (issue 36), on real files in the temporary
HOME through the real controller: a server added in the form is written into the clients checked; an
edit shows secret values masked and keeps a value left masked; a name such as ``../x`` is refused in the
form with the engine's words; each cell shows what the server adds to every request of that client as
``kvswitch mcp measure`` recorded it, "unknown" before; the window has an MCP tab holding the page."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from tests.ui.uihelpers import mcp_cell, mcp_page

from kvswitch.core.mcp_costs import McpCost, McpCostStore, definition_fingerprint
from kvswitch.core.mcp_store import McpStore
from kvswitch.core.paths import AppPaths
from kvswitch.core.redact import MASK
from kvswitch.ui.control.controller_mcp import McpController
from kvswitch.ui.mcp.mcp_form import McpServerDialog
from kvswitch.ui.mcp.mcp_page import McpPage

SECRET = "tok-0123456789"


def _add(qtbot: Any, controller: McpController) -> None:
    dialog = McpServerDialog()
    qtbot.addWidget(dialog)
    dialog.name.setText("kvs-stdio")
    dialog.command.setText(sys.executable)
    dialog.args.setText("server.py stdio")
    dialog.env.setPlainText(f"TOKEN={SECRET}")
    dialog.clients["claude"].setChecked(True)
    dialog._on_buttons_accepted()
    assert dialog.result() == McpServerDialog.DialogCode.Accepted, dialog.error.text()
    assert dialog.server is not None
    with qtbot.waitSignal(controller.write_finished, timeout=30_000):
        controller.save(dialog.server, dialog.original)


def test_add_then_edit_keeps_the_masked_secret(qtbot: Any, fake_home: Path) -> None:
    controller, page = mcp_page(qtbot, AppPaths.default())
    _add(qtbot, controller)
    written = json.loads((fake_home / ".claude.json").read_text())["mcpServers"]["kvs-stdio"]
    assert written["args"] == ["server.py", "stdio"]
    assert written["env"] == {"TOKEN": SECRET}
    assert mcp_cell(page, "kvs-stdio", "claude").checkState() == Qt.CheckState.Checked

    definition = controller.masked_definition("kvs-stdio")
    dialog = McpServerDialog(definition)
    qtbot.addWidget(dialog)
    assert SECRET not in dialog.env.toPlainText()
    assert dialog.env.toPlainText() == f"TOKEN={MASK}"
    assert dialog.clients["claude"].isChecked()
    dialog.args.setText("server.py stdio --verbose")
    dialog._on_buttons_accepted()
    assert dialog.server is not None
    with qtbot.waitSignal(controller.write_finished, timeout=30_000):
        controller.save(dialog.server, dialog.original)
    (server,) = McpStore(AppPaths.default()).servers()
    assert server.env == {"TOKEN": SECRET}  # left masked: kept
    assert server.args == ("server.py", "stdio", "--verbose")
    written = json.loads((fake_home / ".claude.json").read_text())["mcpServers"]["kvs-stdio"]
    assert written["args"][-1] == "--verbose"
    assert written["env"] == {"TOKEN": SECRET}


def test_a_name_that_is_a_path_is_refused_in_the_form(qtbot: Any, fake_home: Path) -> None:
    dialog = McpServerDialog()
    qtbot.addWidget(dialog)
    dialog.name.setText("../x")
    dialog.command.setText("true")
    dialog._on_buttons_accepted()
    assert dialog.server is None
    assert "is not allowed" in dialog.error.text()
    dialog.name.setText("ok")
    dialog.env.setPlainText("no equals sign")
    dialog._on_buttons_accepted()
    assert dialog.server is None
    assert "line 1" in dialog.error.text()
    assert not McpStore(AppPaths.default()).file.exists()


def test_cells_show_the_measured_cost_or_unknown(qtbot: Any, fake_home: Path) -> None:
    controller, page = mcp_page(qtbot, AppPaths.default())
    _add(qtbot, controller)
    assert mcp_cell(page, "kvs-stdio", "claude").text() == "unknown"
    (server,) = McpStore(AppPaths.default()).servers()
    # the figures tests/e2e/test_e2e_mcp_cost.py measured (Claude Code 2.1.332, llama-server b11434):
    # here only their display is tested
    McpCostStore(AppPaths.default()).record([McpCost(
        "kvs-stdio", "claude", 89, 13795, 13706, "2026-12-07T09:12:00+00:00", "llama.cpp at http://127.0.0.1:8080",
        "Claude Code 2.1.332", definition_fingerprint(server), ("mcp__kvs-stdio__kvswitch_echo",))])
    controller.reload()
    cell = mcp_cell(page, "kvs-stdio", "claude")
    assert cell.text() == "~89 tokens"
    assert "Claude Code 2.1.332" in cell.toolTip()
    assert mcp_cell(page, "kvs-stdio", "codex").text() == "unknown"


def test_the_window_has_the_mcp_tab(qtbot: Any, window: Any) -> None:
    window.build_tabs()
    titles = [window.tabs.tabText(i) for i in range(window.tabs.count())]
    assert "MCP" in titles, titles
    assert isinstance(window.tabs.widget(titles.index("MCP")), McpPage)
    assert window.mcp_page.table.rowCount() == 0
