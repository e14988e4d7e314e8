"""The verify history's columns have room (issue 38, item 8): each as wide as its widest text or title
plus padding, instead of packed to the pixel, and the server build takes what is left."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from test_ui_verify_history import history_dir

from kvswitch.ui.verify.verify_history import VerifyHistoryPanel

__all__ = ["history_dir"]  # the fixture: two runs written by the engine's own VerifyHistory


def test_each_column_fits_its_widest_text_with_room_to_spare(qtbot: Any, history_dir: Path) -> None:
    panel = VerifyHistoryPanel()
    qtbot.addWidget(panel)
    panel.resize(1000, 500)
    panel.show()
    panel.bind(history_dir, "local")
    table = panel.table
    metrics = table.fontMetrics()
    header_metrics = table.horizontalHeader().fontMetrics()
    last = table.columnCount() - 1
    for column in range(last):
        texts = [table.item(row, column).text() for row in range(table.rowCount())]
        widest = max(metrics.horizontalAdvance(text) for text in texts)
        title = header_metrics.horizontalAdvance(table.horizontalHeaderItem(column).text())
        assert table.columnWidth(column) >= max(widest, title) + 20, (column, table.columnWidth(column))
    used = sum(table.columnWidth(c) for c in range(last))
    assert table.columnWidth(last) >= table.viewport().width() - used - 2  # the build takes the rest
