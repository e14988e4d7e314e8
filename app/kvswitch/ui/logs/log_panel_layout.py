"""Where the live log panel's parts sit: the summary strip, then the requests (chart and table) above the
raw log and its controls, under a splitter that gives the requests the larger share."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QSplitter, QVBoxLayout, QWidget

if TYPE_CHECKING:
    from kvswitch.ui.logs.log_panel import LogPanel


def arrange(panel: LogPanel) -> QSplitter:
    """Lay out ``panel``'s widgets (made by the panel itself); returns the splitter between the requests
    and the raw log."""
    requests = QWidget()
    requests_layout = QVBoxLayout(requests)
    requests_layout.setContentsMargins(0, 0, 0, 0)
    requests_layout.addWidget(panel.chart)
    requests_layout.addWidget(panel.table, 1)
    raw = QWidget()
    raw_layout = QVBoxLayout(raw)
    raw_layout.setContentsMargins(0, 0, 0, 0)
    controls = QHBoxLayout()
    for widget in (panel.follow_box, panel.cache_only_box, panel.pause_box):
        controls.addWidget(widget)
    controls.addWidget(panel.search_edit, 1)
    controls.addWidget(panel.copy_button)
    controls.addWidget(panel.clear_button)
    raw_layout.addLayout(controls)
    raw_layout.addWidget(panel.view, 1)
    splitter = QSplitter(Qt.Orientation.Vertical)
    splitter.addWidget(requests)
    splitter.addWidget(raw)
    splitter.setChildrenCollapsible(False)
    splitter.setStretchFactor(0, 3)  # the requests first and larger; the raw log is the detail
    splitter.setStretchFactor(1, 2)
    splitter.setSizes([600, 400])
    layout = QVBoxLayout(panel)
    layout.addWidget(panel.summary)
    layout.addWidget(panel.status_label)
    layout.addWidget(splitter, 1)
    return splitter
