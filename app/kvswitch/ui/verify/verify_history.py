"""The profile's verify history in the Verify tab: every run, a chart over runs, compare two, export.

People tune a server by experiment (change one setting, run the same check, compare), so each run the
CLI or the window recorded is a row: when, which check (synthetic probe or Claude Code with its
version), verdict, reuse, TTFT cold → warm, and the server build. The files are small (at most a
thousand lines per profile), so they are read on the GUI thread when the tab is shown or a run ends.

Table and chart read the same way: oldest first, the newest at the bottom of the table (scrolled into
view) and on the right of the chart, whose runs spread over its whole width above local-time ticks.
Times are recorded in UTC and shown in local time.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QSize, Qt, Slot
from PySide6.QtGui import QBrush, QPaintEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from kvswitch.core.errors import KvSwitchError
from kvswitch.ui.control import engine_text
from kvswitch.ui.verify.verify_compare import (
    CompareDialog,
    client_text,
    local_time,
    local_time_text,
    ttft_text,
)
from kvswitch.ui.widgets import theme
from kvswitch.ui.widgets.reuse_chart import StripLayout, paint_strip

if TYPE_CHECKING:
    from kvswitch.verify.history import HistoryEntry


@dataclass(frozen=True)
class _RunPoint:
    reuse_ratio: float
    verdict: str
    prompt_ms: float | None


class HistoryChart(QWidget):
    """Reuse % per run as bars coloured by verdict, warm TTFT as the line (the live log's look)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.entries: list[HistoryEntry] = []
        self.layout_drawn: StripLayout | None = None
        self.setMinimumHeight(110)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setAccessibleName(self.tr("Cache reuse and time to first token per verify run"))

    def sizeHint(self) -> QSize:
        return QSize(400, 130)

    def points(self) -> list[_RunPoint]:
        return [_RunPoint(e.reuse_ratio or 0.0, e.verdict.lower(), e.ttft_warm_ms) for e in self.entries]

    def tick_labels(self) -> list[str]:
        """Each run's local time, as short as the runs allow: the time of day when they are all on one
        day, else the date and time."""
        times = [local_time(e.time) for e in self.entries]
        days = {when.date() for when in times if when is not None}
        form = "%H:%M" if len(days) <= 1 else "%m-%d %H:%M"
        return ["?" if when is None else when.strftime(form) for when in times]

    def paintEvent(self, _event: QPaintEvent) -> None:
        legend = self.tr("bars: reuse %   line: warm TTFT   (%1 runs, local time)")
        legend = legend.replace("%1", str(len(self.entries)))
        empty = self.tr("No verify runs recorded yet.")
        self.layout_drawn = paint_strip(self, self.points(), empty, legend, min_slots=1,
                                        x_labels=self.tick_labels())


#: what a history column gets beyond its widest text (two 8 px grid units)
COLUMN_PADDING = 16


class VerifyHistoryPanel(QWidget):
    """Table + chart of one profile's runs; select two rows to compare them; export as CSV."""

    COLUMNS = ("time", "check", "client", "verdict", "reuse", "ttft", "server")

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.directory: Path | None = None
        self.profile: str | None = None
        self.entries: list[HistoryEntry] = []
        self.title = QLabel()
        self.chart = HistoryChart()
        self.table = QTableWidget(0, len(self.COLUMNS))
        self.table.setHorizontalHeaderLabels([
            self.tr("Time"), self.tr("Check"), self.tr("Client"), self.tr("Verdict"), self.tr("Reuse"),
            self.tr("TTFT cold → warm"), self.tr("Server build")])
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.verticalHeader().hide()
        # sized to their contents with room to breathe once filled (``_size_columns``), still
        # resizable by hand; the server build, the last, takes what is left
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.compare_button = QPushButton(self.tr("Compare selected"))
        self.compare_button.setToolTip(self.tr("Select two runs to see them side by side."))
        self.compare_button.setEnabled(False)
        self.export_button = QPushButton(self.tr("Export CSV…"))
        self.export_button.setEnabled(False)
        self.status_label = QLabel()
        buttons = QHBoxLayout()
        buttons.addWidget(self.title, 1)
        buttons.addWidget(self.compare_button)
        buttons.addWidget(self.export_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(buttons)
        layout.addWidget(self.chart)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.status_label)
        self.table.itemSelectionChanged.connect(self._on_table_selection_changed)
        self.compare_button.clicked.connect(self._on_compare_clicked)
        self.export_button.clicked.connect(self._on_export_clicked)

    def bind(self, directory: Path | None, profile: str | None) -> None:
        """Show ``profile``'s runs from the history files under ``directory`` (read again each call)."""
        from kvswitch.verify.history import VerifyHistory  # noqa: PLC0415 - loads httpx; on first use

        self.directory, self.profile = directory, profile
        self.entries = VerifyHistory(directory).load(profile) if directory and profile else []
        self.title.setText(self.tr("Verify history of “%1”").replace("%1", profile) if profile
                           else self.tr("Verify history"))
        self.table.setRowCount(len(self.entries))
        for row, entry in enumerate(self.entries):  # oldest first, as the chart reads left to right
            cells = (local_time_text(entry.time), entry.check, client_text(entry),
                     entry.verdict.lower(), "–" if entry.reuse_ratio is None else f"{entry.reuse_ratio:.0%}",
                     ttft_text(entry), str(entry.server.get("build") or entry.server.get("url") or "–"))
            for column, text in enumerate(cells):
                item = QTableWidgetItem(engine_text.translate(text) if column in (1, 3) else text)
                if column == 0:
                    item.setToolTip(self.tr("Recorded as %1").replace("%1", entry.time))
                if column == 3:
                    item.setForeground(QBrush(theme.state_color(theme.as_state(entry.verdict))))
                self.table.setItem(row, column, item)
        self._size_columns()
        if self.entries:
            self.table.scrollToBottom()  # the newest run, as on the chart's right
        self.chart.entries = self.entries
        self.chart.update()
        self.export_button.setEnabled(bool(self.entries))
        self._on_table_selection_changed()

    def _size_columns(self) -> None:
        """Each column as wide as its widest text or title plus two grid units of padding: packed to the
        pixel ("synthetic|–|miss|2%"), the columns read as one run-on line."""
        self.table.resizeColumnsToContents()
        for column in range(self.table.columnCount() - 1):
            self.table.setColumnWidth(column, self.table.columnWidth(column) + COLUMN_PADDING)

    def selected_entries(self) -> list[HistoryEntry]:
        rows = sorted({index.row() for index in self.table.selectionModel().selectedRows()})
        return [self.entries[row] for row in rows if row < len(self.entries)]

    @Slot()
    def _on_table_selection_changed(self) -> None:
        self.compare_button.setEnabled(len(self.selected_entries()) == 2)

    @Slot()
    def _on_compare_clicked(self) -> None:
        chosen = self.selected_entries()
        if len(chosen) != 2:
            return
        older, newer = sorted(chosen, key=lambda e: e.time)
        dialog = CompareDialog(older, newer, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.compare_dialog = dialog
        dialog.show()

    @Slot()
    def _on_export_clicked(self) -> None:
        from kvswitch.core.fsutil import atomic_write  # noqa: PLC0415
        from kvswitch.verify.history import to_csv  # noqa: PLC0415

        suggested = f"{self.profile or 'verify'}-history.csv"
        target, _filter = QFileDialog.getSaveFileName(self, self.tr("Export verify history"), suggested,
                                                      self.tr("CSV files (*.csv)"))
        if not target:
            return
        try:
            atomic_write(Path(target), to_csv(self.entries).encode("utf-8"), mode=0o644)
        except (OSError, KvSwitchError) as exc:  # atomic_write names the file in its error
            self.status_label.setText(self.tr("Could not export: %1").replace("%1", str(exc)))
            return
        self.status_label.setText(self.tr("Exported %1 runs to %2").replace("%1", str(len(self.entries)))
                                  .replace("%2", target))
