"""The MCP page (``ui.mcp.mcp_page``) on real files in the temporary HOME, through its real controller:
pasted servers appear as rows, checking a cell writes the server into that client's file (the same
journal as the CLI: ``kvswitch undo`` takes it back, and the cell then shows the server as enabled but
not written), unchecking takes it out, secrets never reach a widget, and a refused write says why."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from tests.ui.uihelpers import mcp_cell, mcp_page

from kvswitch.core.paths import AppPaths
from kvswitch.targets.engine import Engine
from kvswitch.ui.mcp.mcp_page import McpPage

PASTE = json.dumps(
    {
        "mcpServers": {
            "fetch": {
                "command": "uvx",
                "args": ["mcp-server-fetch"],
                "env": {"FETCH_TOKEN": "tok-0123456789"},
            },
            "docs": {
                "type": "http",
                "url": "https://example.net/mcp",
                "headers": {"X-Api-Key": "key-0123456789"},
            },
        }
    }
)


def _texts(page: McpPage) -> str:
    cells = [
        page.table.item(r, c) for r in range(page.table.rowCount()) for c in range(page.table.columnCount())
    ]
    return " ".join(cell.text() + cell.toolTip() for cell in cells if cell is not None) + page.status.text()


def test_matrix_writes_one_cell_and_undo_shows_it_pending(qtbot: Any, fake_home: Path) -> None:
    paths = AppPaths.default()
    controller, page = mcp_page(qtbot, paths)
    with qtbot.waitSignal(controller.write_finished, timeout=30_000):
        controller.import_from("paste", PASTE)
    assert page.table.rowCount() == 2
    assert "tok-0123456789" not in _texts(page)
    assert "key-0123456789" not in _texts(page)

    with qtbot.waitSignal(controller.write_finished, timeout=30_000):
        mcp_cell(page, "fetch", "codex").setCheckState(Qt.CheckState.Checked)
    config = fake_home / ".codex" / "config.toml"
    assert 'command = "uvx"' in config.read_text()
    assert mcp_cell(page, "fetch", "codex").checkState() == Qt.CheckState.Checked
    assert not (fake_home / ".claude.json").exists()  # only the cell that was checked

    Engine(paths).undo()
    controller.reload()
    assert not config.exists()  # KV Switch created it: undo takes it away
    assert mcp_cell(page, "fetch", "codex").checkState() == Qt.CheckState.PartiallyChecked

    with qtbot.waitSignal(controller.write_finished, timeout=30_000):
        mcp_cell(page, "fetch", "codex").setCheckState(Qt.CheckState.Checked)
    with qtbot.waitSignal(controller.write_finished, timeout=30_000):
        mcp_cell(page, "fetch", "codex").setCheckState(Qt.CheckState.Unchecked)
    assert not config.exists()
    assert mcp_cell(page, "fetch", "codex").checkState() == Qt.CheckState.Unchecked


def test_a_refused_write_changes_nothing_and_says_why(qtbot: Any, fake_home: Path) -> None:
    paths = AppPaths.default()
    controller, page = mcp_page(qtbot, paths)
    with qtbot.waitSignal(controller.write_finished, timeout=30_000):
        controller.import_from("paste", PASTE)
    state = fake_home / ".claude.json"
    state.write_text('{"numStartups": 1,\n  "mcpServers": {,}\n}\n')
    with qtbot.waitSignal(controller.write_failed, timeout=30_000):
        mcp_cell(page, "docs", "claude").setCheckState(Qt.CheckState.Checked)
    assert f"{state}:2" in page.status.text()
    assert state.read_text() == '{"numStartups": 1,\n  "mcpServers": {,}\n}\n'
    assert mcp_cell(page, "docs", "claude").checkState() == Qt.CheckState.Unchecked
