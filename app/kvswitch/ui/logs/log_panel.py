"""The live cache log: a summary strip, then the requests (table and chart), then the server's lines,
which get less room by default below a splitter: the answer first, the detail after.

Bound to the active profile's log source. Reading and classifying happen on a worker
(``log_worker.LogFollower``); a 50 ms timer takes what is waiting and draws it in slices of at most
``DRAW_BUDGET_MS``: laying out a line costs ~25 µs, so drawing a whole burst at once would freeze the
window for tens of ms, while a bounded slice per tick keeps every stall short. Lines that did not fit
wait (in order) for the next tick. Memory is bounded everywhere: the view keeps ``MAX_VIEW_LINES``
blocks, the lines waiting to be drawn ``MAX_VIEW_LINES`` (the oldest are dropped and counted), the
history (for the filter and pause) ``MAX_KEPT_LINES``, the table ``MAX_EVENTS`` requests.
"""

from __future__ import annotations

import logging
from collections import deque
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QElapsedTimer, QEvent, QTimer, Signal, Slot
from PySide6.QtGui import QFontDatabase, QTextCursor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QTableView,
    QWidget,
)

from kvswitch.ui.control import engine_text
from kvswitch.ui.control.log_alerts import ReuseAlerts
from kvswitch.ui.logs.events_model import CacheEventsModel
from kvswitch.ui.logs.log_draw_queue import DrawQueue
from kvswitch.ui.logs.log_highlighter import LogHighlighter
from kvswitch.ui.logs.log_panel_layout import arrange
from kvswitch.ui.logs.log_sources import bind_status
from kvswitch.ui.logs.log_text_actions import LogTextActionsMixin
from kvswitch.ui.logs.log_worker import LogBatch, LogFollower, ProcessLogFollower
from kvswitch.ui.logs.metrics_follower import MetricsFollower
from kvswitch.ui.logs.reuse_summary import ReuseSummary
from kvswitch.ui.widgets.reuse_chart import ReuseChart

if TYPE_CHECKING:
    from kvswitch.core.models import LogSource
    from kvswitch.logs.model import CacheEvent, ClassifiedLine
    from kvswitch.ui.control.controller import AppController


log = logging.getLogger("kvswitch.ui.logpanel")

CACHE_KINDS = frozenset({"hit", "partial", "miss", "timing"})
MAX_VIEW_LINES = 5000
MAX_KEPT_LINES = 20000
MAX_EVENTS = 5000
FLUSH_INTERVAL_MS = 50
# the reader sends at most this many lines per frame; it also thins a sustained flood to 2,000 lines
# a second (``DrawBudget``), so a burst still shows every line
MAX_LINES_PER_FLUSH = 600
# GUI time one tick may spend drawing lines; at 25-40 µs a line that is 2,000-3,200 lines a second,
# what the reader sends during a flood (more waits for the next tick, the oldest dropped past the cap)
DRAW_BUDGET_MS = 4.0
# requests reach the table at most this often: every insert repaints the table and the chart, which
# during a flood (requests every tick) costs more than the lines themselves
LIST_INTERVAL_MS = 250


class LogPanel(LogTextActionsMixin, QWidget):
    """Follows a log source and shows what the server did with its prompt cache.

    Signals:
        verdict_seen(str): the latest request's verdict as the tab shows it (``shared_prefix``, ``cold``…).
        requests_seen(list): this tick's requests, oldest first, as ``(shown verdict, requests)`` (an event
            read from ``/metrics`` may sum several requests): the controller tells a verify's own apart.
        lines_appended(int): lines were appended to the view this tick (how many).
        events_added(int): cache events were added to the table this tick (how many).
        reuse_alert(str): reuse inside a conversation stayed low (``log_alerts``); the message.
        verdict_revised(str): the newest request's verdict changed when the gateway's row for it arrived
            (``take_gateway_rows``): the tray follows, as it follows ``requests_seen``.
    """

    verdict_seen = Signal(str)
    verdict_revised = Signal(str)
    requests_seen = Signal(list)
    reuse_alert = Signal(str)
    lines_appended = Signal(int)
    events_added = Signal(int)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._follower: LogFollower | ProcessLogFollower | None = None
        self._source: LogSource | None = None
        self._metrics: MetricsFollower | None = None
        self._metrics_url: str | None = None
        self._kind_hint: str | None = None
        self._history: deque[ClassifiedLine] = deque(maxlen=MAX_KEPT_LINES)
        self._undrawn = DrawQueue(MAX_VIEW_LINES)  # shown lines not drawn yet, oldest first
        self._unlisted: list[CacheEvent] = []  # requests not in the table yet, oldest first
        self._listed_clock = QElapsedTimer()
        self._listed_clock.start()
        self.dropped_lines = 0
        self._pinned = True  # the view is at the bottom; new lines keep it there while following

        self.view = QPlainTextEdit()
        self.view.setReadOnly(True)
        self.view.setUndoRedoEnabled(False)
        self.view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.view.setMaximumBlockCount(MAX_VIEW_LINES)
        self.view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.view.setCenterOnScroll(False)
        self.highlighter = LogHighlighter(self.view.document())

        self.status_label = QLabel()
        self.status_label.setWordWrap(True)
        self.follow_box = QCheckBox(self.tr("Follow"))
        self.follow_box.setChecked(True)
        self.follow_box.setToolTip(self.tr("Keep the newest line in view while you are at the bottom"))
        self.cache_only_box = QCheckBox(self.tr("Cache lines only"))
        self.pause_box = QCheckBox(self.tr("Pause"))
        self.search_edit = QLineEdit()
        self.search_edit.setPlaceholderText(self.tr("Search (Enter: next, Shift+Enter: previous)"))
        self.search_edit.setClearButtonEnabled(True)
        self.copy_button = QPushButton(self.tr("Copy"))
        self.copy_button.setToolTip(self.tr("Copy the selection, or every shown line if nothing is selected"))
        self.clear_button = QPushButton(self.tr("Clear"))

        self.events_model = CacheEventsModel(MAX_EVENTS, self)
        self.alerts = ReuseAlerts()
        self.table = QTableView()
        self.table.setModel(self.events_model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 6)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.setAlternatingRowColors(True)
        self.chart = ReuseChart(self.events_model, self.events_model.points)
        self.summary = ReuseSummary()

        self.splitter = arrange(self)

        self._timer = QTimer(self)
        self._timer.setInterval(FLUSH_INTERVAL_MS)
        self._timer.timeout.connect(self._on_timer_timeout)
        bar = self.view.verticalScrollBar()
        bar.valueChanged.connect(self._on_scrollbar_value_changed)
        bar.rangeChanged.connect(self._on_scrollbar_range_changed)
        self.cache_only_box.toggled.connect(self._on_filter_toggled)
        self.pause_box.toggled.connect(self._on_pause_toggled)
        self.search_edit.returnPressed.connect(self._on_search_return_pressed)
        self.copy_button.clicked.connect(self.copy_lines)
        self.clear_button.clicked.connect(self.clear)
        self._set_status(self.tr("No log source: set one in the active profile's “Server log” field."))

    # -- binding -----------------------------------------------------------------------------------

    @property
    def following(self) -> bool:
        return self._follower is not None

    def bind(self, source: LogSource | None, kind_hint: str | None, metrics_url: str | None = None) -> None:
        """Follow ``source`` (a ``LogSource`` or None) and, for a server that logs no per-request cache
        line, its ``metrics_url`` (``metrics_follower``); unchanged sources keep following."""
        if ((self._follower is not None or self._metrics is not None) and source == self._source
                and kind_hint == self._kind_hint and metrics_url == self._metrics_url):
            return
        self.stop()
        self._source, self._kind_hint, self._metrics_url = source, kind_hint, metrics_url
        self.highlighter.kind_hint = kind_hint
        self.clear()  # lines and requests belong to the source they came from
        self._set_status(bind_status(source, kind_hint, metrics_url))
        if metrics_url is not None:
            self._metrics = MetricsFollower(metrics_url, max_pending_events=MAX_EVENTS)
            self._metrics.start()
            self._timer.start()
        if source is None:
            return
        if ProcessLogFollower.usable():
            self._follower = ProcessLogFollower(source, kind_hint, max_pending_lines=MAX_KEPT_LINES,
                                                max_pending_events=MAX_EVENTS,
                                                max_lines_per_frame=MAX_LINES_PER_FLUSH)
        else:
            self._follower = LogFollower(source, kind_hint, max_pending_lines=MAX_KEPT_LINES,
                                         max_pending_events=MAX_EVENTS)
        self._follower.start()
        self._timer.start()

    def stop(self) -> None:
        """Stop following and wait for the worker (called on rebind and on quit)."""
        self._timer.stop()
        if self._follower is not None:
            self._follower.stop()
            self._flush(self._follower.take())
            self._follower = None
        if self._metrics is not None:
            self._metrics.stop()
            self._flush(self._metrics.take())
            self._metrics = None
        self._list_unlisted()
        self._draw_undrawn(budget_ms=None)

    # -- view --------------------------------------------------------------------------------------

    def _shown(self, line: ClassifiedLine) -> bool:
        if not self.cache_only_box.isChecked():
            return True
        return str(getattr(line.kind, "value", line.kind)) in CACHE_KINDS

    def _set_status(self, text: str) -> None:
        self.status_label.setText(text)

    @Slot()
    def _on_timer_timeout(self) -> None:
        if self._follower is not None:
            batch = self._follower.take()
            self._flush(batch, list_now=False)
            if batch.events and self._metrics is not None:
                self._stop_counters()
        if self._metrics is not None:
            self._flush(self._metrics.take(), list_now=False)
        if self._unlisted and self._listed_clock.elapsed() >= LIST_INTERVAL_MS:
            self._list_unlisted()
        self._draw_undrawn(DRAW_BUDGET_MS)

    def _stop_counters(self) -> None:
        """The log itself has a line per request (some servers at debug level, or with an in-process
        cache connector): its events are the same requests the counters would list again, so the
        counters stop, their pending events dropped, and the status says why. The scraper thread is
        told to stop but not waited for: it may be inside a GET of up to 5 s, and this runs on the GUI
        thread (a daemon, its last scrape is simply never taken)."""
        assert self._metrics is not None
        self._metrics.stop(timeout=0)
        self._metrics = None
        self._set_status(self.tr("The log has a line per request: the server's counters are no longer "
                                 "read (they would list the same requests twice)."))

    def _flush(self, batch: LogBatch, list_now: bool = True) -> None:
        """Take in a batch: its requests go to the table (now, or with the next listing when
        ``list_now`` is false), its lines wait to be drawn."""
        if batch.status:
            self._set_status(engine_text.translate(batch.status))
        if batch.error:
            self._set_status(engine_text.translate(batch.error))
            self._timer.stop()
        self.dropped_lines += batch.dropped_lines
        if batch.events:
            self._unlisted.extend(batch.events)
            del self._unlisted[:-MAX_EVENTS]  # older than anything the table would still keep
        if batch.lines:
            self._history.extend(batch.lines)
            if not self.pause_box.isChecked():
                shown = self._newest_shown(batch.lines, MAX_VIEW_LINES)
                # what falls out is older than anything the view would still keep
                self.dropped_lines += self._undrawn.add(shown)
        if list_now or batch.error:
            self._list_unlisted()
        if batch.error:  # the timer has stopped: nothing else would draw them
            self._draw_undrawn(budget_ms=None)

    def _list_unlisted(self) -> None:
        self._listed_clock.restart()
        if not self._unlisted:
            return
        events, self._unlisted = self._unlisted, []
        shown = self.events_model.add_events(events)
        self.summary.show_totals(self.events_model.totals)
        self._check_alerts(events)
        if self.follow_box.isChecked():
            self.table.scrollToBottom()
        self.verdict_seen.emit(shown[-1])
        self.requests_seen.emit([(v, e.requests or 1) for v, e in zip(shown, events, strict=True)])
        self.events_added.emit(len(events))

    @Slot(list)
    def take_gateway_rows(self, rows: list[Any]) -> None:
        """The gateway's new usage rows: the requests it relayed show its verdict (``events_model``)."""
        if not self.events_model.rowCount():
            return
        newest = self.events_model.take_gateway_rows(rows)
        self.summary.show_totals(self.events_model.totals)
        self.chart.update()
        if newest is not None:
            self.verdict_seen.emit(newest)
            self.verdict_revised.emit(newest)

    def _check_alerts(self, events: list[CacheEvent]) -> None:
        alert = self.alerts.feed_listed(events, self.events_model)
        if alert:
            self.reuse_alert.emit(alert)

    def attach_alerts(self, controller: AppController) -> None:
        """Alerts go to the controller (the tray shows them); thresholds come from the app settings."""
        settings = controller.settings
        self.alerts.threshold = settings.reuse_alert_threshold
        self.alerts.requests = settings.reuse_alert_requests
        self.reuse_alert.connect(controller.raise_reuse_alert)

    def _draw_undrawn(self, budget_ms: float | None) -> None:
        """Draw waiting lines, oldest first, until ``budget_ms`` is spent (None: all of them)."""
        drawn = self._undrawn.draw(lambda chunk: self._append(chunk, scroll=False), budget_ms)
        if drawn:
            self._scroll_if_following()
            self.lines_appended.emit(drawn)

    def _newest_shown(self, lines: list[ClassifiedLine], limit: int) -> list[ClassifiedLine]:
        """The last ``limit`` lines that pass the filter (a flood is not filtered line by line)."""
        cache_only = self.cache_only_box.isChecked()
        picked: list[ClassifiedLine] = []
        for line in reversed(lines):
            if not cache_only or str(getattr(line.kind, "value", line.kind)) in CACHE_KINDS:
                picked.append(line)
                if len(picked) >= limit:
                    self.dropped_lines += len(lines) - len(picked)  # upper bound: the rest was not drawn
                    break
        picked.reverse()
        return picked

    def _append(self, lines: list[ClassifiedLine], scroll: bool = True) -> None:
        if not lines:
            return
        bar = self.view.verticalScrollBar()
        self._pinned = self._pinned or bar.value() >= bar.maximum() - 2
        self.highlighter.remember(lines)
        cursor = QTextCursor(self.view.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.beginEditBlock()
        text = "\n".join(line.text for line in lines)
        cursor.insertText(text if self.view.document().isEmpty() else "\n" + text)
        cursor.endEditBlock()
        if scroll:
            self._scroll_if_following()
            self.lines_appended.emit(len(lines))

    def _scroll_if_following(self) -> None:
        bar = self.view.verticalScrollBar()
        if self.follow_box.isChecked() and self._pinned:
            bar.setValue(bar.maximum())

    def _rerender(self) -> None:
        self._undrawn.clear()  # the history holds them; the re-render below draws what is shown
        self.view.clear()
        self._append(self._newest_shown(list(self._history), MAX_VIEW_LINES))

    def clear(self) -> None:
        self.view.clear()
        self._undrawn.clear()
        self._unlisted.clear()
        self._history.clear()
        self.events_model.clear()
        self.summary.show_totals(None)
        self.alerts.reset()
        self.dropped_lines = 0

    # -- slots -------------------------------------------------------------------------------------

    @Slot(int)
    def _on_scrollbar_value_changed(self, value: int) -> None:
        """The user scrolled: stay pinned only if they are (back) at the bottom (Frescobaldi's idea)."""
        self._pinned = value >= self.view.verticalScrollBar().maximum() - 2

    @Slot(int, int)
    def _on_scrollbar_range_changed(self, _minimum: int, maximum: int) -> None:
        """The layout grew after an append: keep the newest line in view if we were pinned."""
        if self._pinned and self.follow_box.isChecked():
            self.view.verticalScrollBar().setValue(maximum)

    @Slot(bool)
    def _on_filter_toggled(self, _checked: bool) -> None:
        self._rerender()

    @Slot(bool)
    def _on_pause_toggled(self, paused: bool) -> None:
        if paused:
            self._undrawn.clear()  # kept in the history: resuming re-renders from there
        else:
            self._rerender()

    # -- Qt overrides ------------------------------------------------------------------------------

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:
            self.highlighter.refresh_formats()
            self.chart.update()
            self.summary.show_totals(self.events_model.totals if self.events_model.rowCount() else None)
        super().changeEvent(event)

