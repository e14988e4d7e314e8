"""The Usage tab's request log: every request through the gateway with its cache verdict and reason.

Filters (client, profile, session, verdict) narrow the log, the session summary and the KPI figures
alike; a row that is not a HIT opens its reason with the evidence the gateway recorded
(``reason_detail``: where the prompt first differed, the differing bytes, what ran in between). The
read runs on a worker through the controller (``load_usage_log``); this widget keeps only what the
last read returned, to show it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from kvswitch.servers.tier_words import tiers_line
from kvswitch.ui.control.reason_words import explanation, reason_text
from kvswitch.ui.control.shown_names import recorded_client_name, verdict_word
from kvswitch.ui.control.usage_log import LogFilter, UsageLog, detail_of, reason_lines
from kvswitch.ui.widgets import spacing, theme

if TYPE_CHECKING:
    from kvswitch.ui.control.usage_log import SessionLine


def _item(value: object, numeric: bool = False, data: Any = None) -> QTableWidgetItem:
    item = QTableWidgetItem(str(value))
    if numeric:
        item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    if data is not None:
        item.setData(Qt.ItemDataRole.UserRole, data)
    return item


def _reason_item(reason: str | None) -> QTableWidgetItem:
    """A reason in words; the gateway's code (as the CLI and the docs name it) in the tooltip."""
    if not reason:
        return _item("")
    item = _item(reason_text(reason), data=reason)
    item.setToolTip(reason)
    return item


def _table(headers: list[str]) -> QTableWidget:
    table = QTableWidget(0, len(headers))
    table.setHorizontalHeaderLabels(headers)
    table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
    table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
    table.setSelectionMode(QTableWidget.SelectionMode.SingleSelection)
    table.verticalHeader().setVisible(False)
    table.horizontalHeader().setStretchLastSection(True)
    table.setWordWrap(False)  # one line a request: a long profile name is elided, not wrapped
    return table


def seconds_text(ms: float) -> str:
    return f"{ms / 1000:.1f} s" if ms >= 1000 else f"{ms:.0f} ms"


class Kpis(QFrame):
    """The period's figures: requests, hit rate, tokens re-processed, time lost, requests that missed."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        grid = QGridLayout(self)
        grid.setContentsMargins(spacing.UNIT, spacing.HALF, spacing.UNIT, spacing.HALF)
        names = {"requests": self.tr("Requests"), "hit_rate": self.tr("Hit rate"),
                 "reprocessed": self.tr("Tokens re-processed"), "time_lost": self.tr("Time lost"),
                 "misses": self.tr("Not a hit")}
        self.values: dict[str, QLabel] = {}
        for column, (key, title) in enumerate(names.items()):
            value = QLabel("—")
            font = value.font()
            font.setPointSizeF(font.pointSizeF() * 1.4)
            font.setBold(True)
            value.setFont(font)
            caption = QLabel(title)
            grid.addWidget(value, 0, column)
            grid.addWidget(caption, 1, column)
            self.values[key] = value

    def show_log(self, log: UsageLog) -> None:
        prompt = sum(s.prompt_tokens for s in log.sessions)
        cached = sum(s.cached_tokens for s in log.sessions)
        figures = {"requests": str(sum(s.requests for s in log.sessions)),
                   "hit_rate": f"{cached / prompt:.0%}" if prompt else "—",
                   "reprocessed": f"{sum(s.reprocessed_tokens for s in log.sessions):,}",
                   "time_lost": seconds_text(sum(s.time_lost_ms for s in log.sessions)),
                   "misses": str(sum((r.verdict or "").upper() in ("MISS", "PARTIAL") for r in log.requests))}
        for key, text in figures.items():
            self.values[key].setText(text)


class RequestLog(QWidget):
    """Filters, the session summary, the request table and the reason of the row chosen.

    Signals:
        filters_changed(): a filter was chosen (the view reads again).
    """

    filters_changed = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.log: UsageLog | None = None
        self.client_combo = self._combo(self.tr("All clients"))
        self.profile_combo = self._combo(self.tr("All profiles"))
        self.session_combo = self._combo(self.tr("All sessions"))
        self.verdict_combo = self._combo(self.tr("Any verdict"))
        for verdict in ("HIT", "PARTIAL", "MISS", "COLD"):
            self.verdict_combo.addItem(verdict_word(verdict), verdict)
        self.kpis = Kpis()
        self.sessions_table = _table([self.tr("Session"), self.tr("Client"), self.tr("Profiles"),
                                      self.tr("Requests"), self.tr("Hit %"), self.tr("Re-processed"),
                                      self.tr("Time lost"), self.tr("Last reason")])
        self.requests_table = _table([self.tr("Time"), self.tr("Client"), self.tr("Session"),
                                      self.tr("Profile"), self.tr("Prompt"), self.tr("Cached"),
                                      self.tr("Reusable"), self.tr("TTFT"), self.tr("Verdict"),
                                      self.tr("Reason")])
        self.reason_view = QPlainTextEdit()
        self.reason_view.setReadOnly(True)
        self.reason_view.setPlaceholderText(self.tr("Choose a request that is not a hit to see why."))
        filters = QHBoxLayout()
        for label, combo in ((self.tr("Client:"), self.client_combo),
                             (self.tr("Profile:"), self.profile_combo),
                             (self.tr("Session:"), self.session_combo),
                             (self.tr("Verdict:"), self.verdict_combo)):
            filters.addWidget(QLabel(label))
            filters.addWidget(combo)
        filters.addStretch(1)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.sessions_table)
        split.addWidget(self.requests_table)
        split.addWidget(self.reason_view)
        split.setSizes([150, 260, 110])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(filters)
        layout.addWidget(self.kpis)
        layout.addWidget(split, 1)
        self.requests_table.currentCellChanged.connect(self._on_requests_table_current_cell_changed)
        self.sessions_table.cellDoubleClicked.connect(self._on_sessions_table_cell_double_clicked)

    def _combo(self, everything: str) -> QComboBox:
        combo = QComboBox()
        combo.addItem(everything, None)
        combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        combo.activated.connect(lambda _index: self.filters_changed.emit())
        return combo

    def filters(self, since: float | None) -> LogFilter:
        return LogFilter(since=since, client=self.client_combo.currentData(),
                         profile=self.profile_combo.currentData(), session=self.session_combo.currentData(),
                         verdict=self.verdict_combo.currentData())

    def choose(self, combo: QComboBox, value: str | None) -> None:
        """Pick a filter value (a test, a double-clicked session) and read again."""
        index = combo.findData(value)
        if index >= 0:
            combo.setCurrentIndex(index)
            self.filters_changed.emit()

    def show_log(self, log: UsageLog) -> None:
        self.log = log
        for combo, values in ((self.client_combo, log.clients), (self.profile_combo, log.profiles),
                              (self.session_combo, log.session_ids)):
            self._offer(combo, values, recorded_client_name if combo is self.client_combo else str)
        self.kpis.show_log(log)
        self._fill_sessions(log.sessions)
        self._fill_requests(log.requests)

    @staticmethod
    def _offer(combo: QComboBox, values: list[str], shown: Callable[[str], str] = str) -> None:
        chosen = combo.currentData()
        combo.blockSignals(True)
        while combo.count() > 1:
            combo.removeItem(1)
        for value in values:
            text = shown(value)
            combo.addItem(text if len(text) <= 24 else text[:10] + "…" + text[-10:], value)
        combo.setCurrentIndex(max(0, combo.findData(chosen)))
        combo.blockSignals(False)

    def _fill_sessions(self, sessions: list[SessionLine]) -> None:
        table = self.sessions_table
        table.setRowCount(len(sessions))
        for row, line in enumerate(reversed(sessions)):  # the most recently active first
            cells = (_item(line.session or self.tr("(no session)"), data=line.session),
                     _item(recorded_client_name(line.client or "")), _item(", ".join(line.profiles)),
                     _item(line.requests, True), _item(f"{line.hit_rate:.0%}", True),
                     _item(f"{line.reprocessed_tokens:,}", True),
                     _item(seconds_text(line.time_lost_ms), True),
                     _reason_item(line.last_reason))
            for column, item in enumerate(cells):
                table.setItem(row, column, item)

    def _fill_requests(self, requests: list[Any]) -> None:
        table = self.requests_table
        table.setRowCount(len(requests))
        pal = self.palette()
        for row, record in enumerate(requests):
            verdict = (record.verdict or "").upper()
            cells = (_item(time.strftime("%m-%d %H:%M:%S", time.localtime(record.time)), data=record),
                     _item(recorded_client_name(record.client_name or record.client or "")),
                     _item(record.session or ""),
                     _item(record.profile or ""), _item(f"{record.input_tokens or 0:,}", True),
                     _item(f"{record.cached_tokens or 0:,}", True),
                     _item("" if record.reusable_tokens is None else f"{record.reusable_tokens:,}", True),
                     _item("" if record.ttft_ms is None else seconds_text(record.ttft_ms), True),
                     _item(verdict_word(verdict) if verdict else ""),
                     _reason_item(record.reason or _opening(record)))
            tiers = tiers_line(getattr(record, "tiers", None))
            if tiers:  # the cached figure's sources, from the server's and its cache tier's counters
                cells[5].setToolTip(self.tr("Prompt tokens by cache tier: %1").replace("%1", tiers))
            if verdict in ("MISS", "PARTIAL"):
                cells[8].setForeground(theme.state_color(theme.as_state(verdict), pal))
            for column, item in enumerate(cells):
                table.setItem(row, column, item)

    def selected_record(self) -> Any | None:
        item = self.requests_table.item(self.requests_table.currentRow(), 0)
        return item.data(Qt.ItemDataRole.UserRole) if item is not None else None

    @Slot(int, int, int, int)
    def _on_requests_table_current_cell_changed(self, row: int, *_args: int) -> None:
        item = self.requests_table.item(row, 0)
        record = item.data(Qt.ItemDataRole.UserRole) if item is not None else None
        if record is None:
            self.reason_view.clear()
            return
        lines = reason_lines(record)
        if not lines:
            text = self.tr("%1: the prompt was reused as far as it could be.").replace(
                "%1", record.verdict or self.tr("no verdict"))
            self.reason_view.setPlainText(text)
            return
        told = explanation(record.reason, detail_of(record))
        evidence = "\n".join(f"{label}: {value}" for label, value in lines)
        if told:
            evidence = "\n".join(f"{label}: {value}" for label, value in told) + "\n\n" + \
                self.tr("As recorded:") + "\n" + evidence
        self.reason_view.setPlainText(evidence)

    @Slot(int, int)
    def _on_sessions_table_cell_double_clicked(self, row: int, _column: int) -> None:
        item = self.sessions_table.item(row, 0)
        if item is not None and item.data(Qt.ItemDataRole.UserRole):
            self.choose(self.session_combo, str(item.data(Qt.ItemDataRole.UserRole)))


def _opening(record: Any) -> str | None:
    """``new_conversation`` for a new conversation's opening that reused what it could (a HIT has no
    reason, but the Cache log calls the same request a shared prefix: both say it was expected)."""
    if record.reason_detail is None or "new_conversation" not in record.reason_detail:
        return None
    return "new_conversation" if detail_of(record).get("new_conversation") else None


class GatewayOffer(QWidget):
    """The empty state: no request went through the gateway, and the switch that sends one there.

    Signals:
        route_requested(str): send this profile through the gateway (the controller does it).
    """

    route_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.text = QLabel(self.tr("No request went through KV Switch's gateway in this period. Through it, "
                                   "every request gets a cache verdict and, when it misses, the reason."))
        self.text.setWordWrap(True)
        self.profile_combo = QComboBox()
        self.route_button = QPushButton(self.tr("Send through the gateway"))
        self.route_button.setToolTip(self.tr("Ticks “through the gateway” on the profile and applies it: its "
                                             "clients' files point at the gateway from then on"))
        row = QHBoxLayout()
        row.addWidget(self.profile_combo)
        row.addWidget(self.route_button)
        row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.text)
        layout.addLayout(row)
        layout.addStretch(1)
        self.route_button.clicked.connect(self._on_route_button_clicked)

    def offer(self, names: list[str], preferred: str | None) -> None:
        self.profile_combo.clear()
        for name in names:
            self.profile_combo.addItem(name, name)
        self.profile_combo.setCurrentIndex(max(0, self.profile_combo.findData(preferred)))
        self.route_button.setEnabled(bool(names))

    @Slot()
    def _on_route_button_clicked(self) -> None:
        name = self.profile_combo.currentData()
        if name:
            self.route_requested.emit(str(name))
