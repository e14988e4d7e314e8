"""The Usage tab: what went through the local gateway — requests, tokens, cost and cache hit rate per
day and per profile, from the gateway's SQLite usage store, with a trend chart.

The numbers are the upstream's own (the answer's usage fields or the server's ``timings``), summed here
only by day. The store is read through the controller on a worker, every ``REFRESH_MS`` while the tab
is shown, so a large database never stalls the window. The chart is the strip chart of the cache log
(``reuse_chart.paint_strip``): one bar per day, its hit rate, coloured like a verdict, and the day's mean
time to first token as the line.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QSize, Slot
from PySide6.QtGui import QHideEvent, QPaintEvent, QShowEvent
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from kvswitch.ui.i18n import fill
from kvswitch.ui.widgets.reuse_chart import paint_strip

if TYPE_CHECKING:
    from kvswitch.ui.control.controller import AppController

REFRESH_MS = 10_000
#: hit rate at or above which a day is drawn as a hit, and below which it is a miss
HIT_AT, MISS_BELOW = 0.8, 0.3


@dataclass
class DayTotals:
    """One day (local time) of usage; ``reuse_ratio``/``verdict``/``prompt_ms`` are what the chart reads."""

    day: str
    requests: int = 0
    input_tokens: int = 0
    cached_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0
    _ttft_sum: float = 0.0
    _ttft_n: int = 0

    @property
    def hit_rate(self) -> float:
        return self.cached_tokens / self.input_tokens if self.input_tokens else 0.0

    @property
    def reuse_ratio(self) -> float:
        return self.hit_rate

    @property
    def verdict(self) -> str:
        if not self.input_tokens:
            return "unknown"
        return "hit" if self.hit_rate >= HIT_AT else "partial" if self.hit_rate >= MISS_BELOW else "miss"

    @property
    def prompt_ms(self) -> float | None:
        """The day's mean time to first token (the chart's line)."""
        return self._ttft_sum / self._ttft_n if self._ttft_n else None


def per_day(rows: Iterable[Any]) -> list[DayTotals]:
    """Usage rows (``UsageRow``) summed per local calendar day, oldest first."""
    days: dict[str, DayTotals] = {}
    for row in rows:
        day = time.strftime("%Y-%m-%d", time.localtime(row.time))
        entry = days.setdefault(day, DayTotals(day))
        entry.requests += 1
        entry.input_tokens += row.input_tokens or 0
        entry.cached_tokens += row.cached_tokens or 0
        entry.output_tokens += row.output_tokens or 0
        entry.cost += row.cost or 0.0
        if row.ttft_ms is not None:
            entry._ttft_sum += row.ttft_ms
            entry._ttft_n += 1
    return [days[d] for d in sorted(days)]


class UsageTrend(QWidget):
    """The hit rate per slice of the period as bars (every slice, quiet ones empty, so the bars lie over
    the whole period), the slice's mean time to first token as the line, local-time ticks below."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.days: Sequence[Any] = []
        self.bucket_s = 86400.0
        self.now = time.time()  # "today" for the ticks: set with each read
        self.setMinimumHeight(120)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setAccessibleName(self.tr("Cache hit rate over the period"))

    def set_days(self, days: Sequence[Any]) -> None:
        self.days = days
        self.now = time.time()
        self.update()

    def sizeHint(self) -> QSize:
        return QSize(400, 140)

    def ticks(self) -> list[str]:
        """A local time under each bar: for slices under a day the hour, and the date too on every bar
        of an earlier day than today's (only every few bars are labelled, so the bar where the day
        changes may not be: "21:00" is never read as today's when it was yesterday's); else the date."""
        if self.bucket_s >= 86400:
            return [time.strftime("%m-%d", time.localtime(getattr(bar, "start", 0.0))) for bar in self.days]
        today = time.strftime("%Y-%m-%d", time.localtime(self.now))
        labels = []
        for bar in self.days:
            moment = time.localtime(getattr(bar, "start", 0.0))
            same_day = time.strftime("%Y-%m-%d", moment) == today
            labels.append(time.strftime("%H:%M" if same_day else "%m-%d %H:%M", moment))
        return labels

    def paintEvent(self, _event: QPaintEvent) -> None:
        legend = self.tr("bars: cache hit rate   line: mean time to first token   (%1 requests)")
        empty = self.tr("No requests through the gateway yet: the hit rate over time appears here.")
        requests = sum(getattr(bar, "requests", 0) for bar in self.days)
        shown = self.days if requests else []
        paint_strip(self, shown, empty, legend.replace("%1", str(requests)), min_slots=1,
                    x_labels=self.ticks() if shown and hasattr(shown[0], "start") else None)


def _cell(value: object, numeric: bool = False) -> QTableWidgetItem:
    from PySide6.QtCore import Qt  # noqa: PLC0415 - the enums load after the first paint

    item = QTableWidgetItem(str(value))
    if numeric:
        item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    return item


class UsageView(QWidget):
    """The tab; ``refresh()`` reads the store in the background (also every ``REFRESH_MS`` while shown).

    On top the period, the KPI figures and the hit-rate trend laid over the whole period; below, the
    request log (filters, sessions, each request's verdict and reason) and the totals per day and per
    profile. With no request in the period, the tab offers the gateway switch itself.
    """

    def __init__(self, controller: AppController, parent: QWidget | None = None):
        super().__init__(parent)
        from PySide6.QtCore import QTimer  # noqa: PLC0415
        from PySide6.QtWidgets import QStackedWidget, QTabWidget  # noqa: PLC0415

        from kvswitch.ui.usage.request_log import GatewayOffer, RequestLog  # noqa: PLC0415

        self.controller = controller
        self.loaded_rows: list[Any] = []
        self.summary: dict[str, dict[str, float]] = {}
        self.log: Any = None
        self._task: Any = None
        self._log_task: Any = None
        self._log_again = False
        self.period = QComboBox()
        for days, label in ((1, self.tr("Last 24 hours")), (7, self.tr("Last 7 days")),
                            (30, self.tr("Last 30 days")), (0, self.tr("All time"))):
            self.period.addItem(label, days)
        # the last 24 hours in hourly bars: today's work is what a user checks the cache of; a week in
        # six-hour slices, a month in days, are one choice away
        self.period.setCurrentIndex(0)
        self.refresh_button = QPushButton(self.tr("Refresh"))
        self.totals_label = QLabel()
        self.totals_label.setWordWrap(True)
        self.chart = UsageTrend()
        self.request_log = RequestLog()
        self.offer = GatewayOffer()
        self.day_table = self._table([self.tr("Day"), self.tr("Requests"), self.tr("Input tokens"),
                                      self.tr("Cached tokens"), self.tr("Output tokens"), self.tr("Cost"),
                                      self.tr("Hit rate")])
        self.profile_table = self._table([self.tr("Profile"), self.tr("Requests"), self.tr("Input tokens"),
                                          self.tr("Cached tokens"), self.tr("Output tokens"), self.tr("Cost"),
                                          self.tr("Hit rate")])
        self.sections = QTabWidget()
        self.sections.addTab(self.request_log, self.tr("Requests"))
        self.sections.addTab(self.day_table, self.tr("Per day"))
        self.sections.addTab(self.profile_table, self.tr("Per profile"))
        self.body = QStackedWidget()
        self.body.addWidget(self.sections)
        self.body.addWidget(self.offer)
        top = QHBoxLayout()
        top.addWidget(QLabel(self.tr("Period:")))
        top.addWidget(self.period)
        top.addWidget(self.refresh_button)
        top.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.totals_label)
        layout.addWidget(self.chart)
        layout.addWidget(self.body, 1)
        self.timer = QTimer(self)
        self.timer.setInterval(REFRESH_MS)
        self.timer.timeout.connect(self.refresh)
        self.refresh_button.clicked.connect(self.refresh)
        self.period.currentIndexChanged.connect(self._on_period_current_index_changed)
        self.request_log.filters_changed.connect(self.refresh_log)
        self.offer.route_requested.connect(self._on_offer_route_requested)
        self.totals_label.setText(self.tr("Loading usage…"))

    @staticmethod
    def _table(headers: list[str]) -> QTableWidget:
        table = QTableWidget(0, len(headers))
        table.setHorizontalHeaderLabels(headers)
        table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        table.verticalHeader().setVisible(False)
        table.horizontalHeader().setStretchLastSection(True)
        return table

    @property
    def days(self) -> int:
        return int(self.period.currentData() or 0)

    def since(self) -> float | None:
        return time.time() - self.days * 86400 if self.days else None

    @property
    def loading(self) -> bool:
        return any(task is not None and task.running for task in (self._task, self._log_task))

    @Slot()
    def refresh(self) -> None:
        if self._task is None or not self._task.running:
            self._task = self.controller.load_usage(self.since(), self._on_usage_loaded,
                                                    self._on_usage_failed)
        self.refresh_log()

    @Slot()
    def refresh_log(self) -> None:
        """The request log, sessions and trend for the filters chosen (on a worker)."""
        if self._log_task is not None and self._log_task.running:
            self._log_again = True  # a filter chosen while reading: read once more with it
            return
        self._log_again = False
        self._log_task = self.controller.load_usage_log(self.request_log.filters(self.since()), self.days,
                                                        self._on_log_loaded, self._on_usage_failed)

    def _on_log_loaded(self, log: Any) -> None:
        """Shown even when a newer read was asked for meanwhile (then read once more): a view refreshed
        faster than one read takes must still show the last read, never wait for a quiet moment."""
        self._log_task = None
        self.log = log
        self.request_log.show_log(log)
        self.chart.set_days(log.trend)
        self.chart.bucket_s = log.bucket_s
        if self._log_again:
            self.refresh_log()

    def _on_usage_loaded(self, outcome: tuple[list[Any], dict[str, dict[str, float]]]) -> None:
        self.loaded_rows, self.summary = outcome
        days = per_day(self.loaded_rows)
        self._fill(self.day_table, [(d.day, d.requests, d.input_tokens, d.cached_tokens, d.output_tokens,
                                     d.cost, d.hit_rate) for d in reversed(days)])
        self._fill(self.profile_table, [(name, int(s["requests"]), int(s["input_tokens"]),
                                         int(s["cached_tokens"]), int(s["output_tokens"]), s["cost"],
                                         s["hit_rate"]) for name, s in sorted(self.summary.items())])
        requests = sum(d.requests for d in days)
        prompt = sum(d.input_tokens for d in days)
        cached = sum(d.cached_tokens for d in days)
        if not requests:
            self.totals_label.setText(self.tr("No requests through the gateway in this period."))
            self._offer_gateway()
            return
        self.body.setCurrentWidget(self.sections)
        text = self.tr("%1 requests · %2 prompt tokens, %3 from cache (%4) · %5 output tokens · cost %6")
        values = (str(requests), f"{prompt:,}", f"{cached:,}", f"{cached / prompt:.0%}" if prompt else "—",
                  f"{sum(d.output_tokens for d in days):,}", f"${sum(d.cost for d in days):.4f}")
        self.totals_label.setText(fill(text, *values))

    def _offer_gateway(self) -> None:
        """The empty state: the profiles to send through the gateway, the active one first."""
        try:
            names = self.controller.store.names()
            active = self.controller.store.active_name
        except Exception:  # noqa: BLE001 - a store that cannot be read offers nothing
            names, active = [], None
        self.offer.offer(names, active)
        self.body.setCurrentWidget(self.offer)

    @Slot(str)
    def _on_offer_route_requested(self, name: str) -> None:
        if self.controller.set_via_gateway(name):
            self.offer.text.setText(self.tr("“%1” now goes through the gateway: its next requests appear "
                                            "here.").replace("%1", name))

    def _on_usage_failed(self, exc: BaseException) -> None:
        self.totals_label.setText(self.tr("The usage database cannot be read: %1").replace("%1", str(exc)))

    @staticmethod
    def _fill(table: QTableWidget, rows: list[tuple[Any, ...]]) -> None:
        table.setRowCount(len(rows))
        for r, values in enumerate(rows):
            name, requests, prompt, cached, output, cost, rate = values
            cells = (_cell(name), _cell(requests, True), _cell(f"{prompt:,}", True),
                     _cell(f"{cached:,}", True), _cell(f"{output:,}", True), _cell(f"${cost:.4f}", True),
                     _cell(f"{rate:.0%}", True))
            for c, item in enumerate(cells):
                table.setItem(r, c, item)

    @Slot(int)
    def _on_period_current_index_changed(self, _index: int) -> None:
        self.refresh()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.refresh()
        self.timer.start()

    def hideEvent(self, event: QHideEvent) -> None:
        super().hideEvent(event)
        self.timer.stop()


def add_usage_tab(window: Any) -> UsageView:
    """The window's hook: a Usage tab after the others, over the window's controller."""
    from PySide6.QtCore import QCoreApplication  # noqa: PLC0415

    window.usage_view = UsageView(window.controller)
    window.tabs.addTab(window.usage_view, QCoreApplication.translate("MainWindow", "Usage"))
    return window.usage_view
