"""A strip chart of the last requests: reuse % as coloured bars, prompt time as a line.

Painted by hand with QPainter (no chart dependency). A run of misses shows as a red streak, which is
the whole point: a broken prompt cache is visible at a glance, before reading any number.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QPointF, QRectF, QSize, Qt, QTimer, Slot
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPalette, QPen, QPolygonF
from PySide6.QtWidgets import QSizePolicy, QWidget

from kvswitch.ui.widgets import theme

if TYPE_CHECKING:
    from PySide6.QtCore import QAbstractItemModel

MAX_BARS = 120
# bars never get wider than this many to a plot, so a handful of requests do not look like a wall
MIN_SLOTS = 40
# a flood adds requests every tick; repainting the chart that often costs the window more than it shows
REPAINT_INTERVAL_MS = 250


class ReuseChart(QWidget):
    """Reads the last ``MAX_BARS`` points from ``points`` each time it paints, and repaints when ``model``
    gains rows: any table model (the log panel's events) with a reader of its last points."""

    def __init__(self, model: QAbstractItemModel, points: Callable[[int], Sequence[StripPoint]],
                 parent: QWidget | None = None):
        super().__init__(parent)
        self._points = points
        self.setMinimumHeight(90)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self._repaint_timer = QTimer(self)
        self._repaint_timer.setSingleShot(True)
        self._repaint_timer.setInterval(REPAINT_INTERVAL_MS)
        self._repaint_timer.timeout.connect(self.update)
        model.rowsInserted.connect(self._on_model_rows_inserted)
        model.modelReset.connect(self._on_model_reset)
        self.setAccessibleName(self.tr("Prompt cache reuse per request"))

    @Slot()
    def _on_model_rows_inserted(self, *_args: object) -> None:
        if not self._repaint_timer.isActive():
            self._repaint_timer.start()

    @Slot()
    def _on_model_reset(self) -> None:
        self.update()

    def sizeHint(self) -> QSize:
        return QSize(400, 110)

    def paintEvent(self, _event: QPaintEvent) -> None:
        events = self._points(MAX_BARS)
        legend = self.tr("bars: reuse %   line: prompt ms   (last %1 requests)")
        empty = self.tr("No requests yet: cache reuse per request appears here.")
        paint_strip(self, events, empty, legend.replace("%1", str(len(events))))


class StripPoint(Protocol):
    """What a bar needs: reuse 0..1, a verdict naming its colour, and a time for the line."""

    @property
    def reuse_ratio(self) -> float: ...
    @property
    def verdict(self) -> str: ...
    @property
    def prompt_ms(self) -> float | None: ...


def paint_strip(widget: QWidget, events: Sequence[StripPoint], empty_text: str, legend: str) -> None:
    """Reuse bars coloured by verdict and a time line; shared by the live log and the verify history."""
    painter = QPainter(widget)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    pal = widget.palette()
    painter.fillRect(widget.rect(), pal.color(QPalette.ColorRole.Base))
    margin_left, margin_right, margin_top, margin_bottom = 38, 46, 8, 16
    plot = QRectF(margin_left, margin_top, max(10, widget.width() - margin_left - margin_right),
                  max(10, widget.height() - margin_top - margin_bottom))
    grid = QColor(pal.color(QPalette.ColorRole.Mid))
    painter.setPen(QPen(grid, 1, Qt.PenStyle.DotLine))
    for fraction in (0.0, 0.5, 1.0):
        y = plot.bottom() - fraction * plot.height()
        painter.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y))
    painter.setPen(pal.color(QPalette.ColorRole.Text))
    font = painter.font()
    font.setPointSizeF(max(8.0, font.pointSizeF() * 0.9))  # legends and axis labels stay legible
    painter.setFont(font)
    for fraction, label in ((1.0, "100%"), (0.5, "50%"), (0.0, "0%")):
        y = plot.bottom() - fraction * plot.height()
        painter.drawText(QRectF(0, y - 8, margin_left - 4, 16),
                         Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, label)
    if not events:
        painter.setPen(theme.muted_color(pal))
        painter.drawText(plot, Qt.AlignmentFlag.AlignCenter, empty_text)
        painter.end()
        return
    slot = plot.width() / max(MIN_SLOTS, len(events))
    bar = max(1.0, slot * 0.8)
    x0 = plot.right() - len(events) * slot
    painter.setPen(Qt.PenStyle.NoPen)
    # one drawRects per verdict and colour: a per-bar brush change and draw call cost ms per paint
    columns: dict[str, list[QRectF]] = {}
    bars: dict[str, list[QRectF]] = {}
    for i, event in enumerate(events):
        ratio = max(0.0, min(1.0, float(event.reuse_ratio)))
        height = max(2.0, ratio * plot.height())
        left = x0 + i * slot
        # A full-height tinted column per request, so a miss (reuse ~0) still reads as a red streak.
        columns.setdefault(event.verdict, []).append(QRectF(left, plot.top(), bar, plot.height()))
        bars.setdefault(event.verdict, []).append(QRectF(left, plot.bottom() - height, bar, height))
    for verdict, rects in columns.items():
        painter.setBrush(theme.tinted_background(verdict, pal))
        painter.drawRects(rects)
    for verdict, rects in bars.items():
        painter.setBrush(theme.state_color(verdict, pal))
        painter.drawRects(rects)
    times = [e.prompt_ms for e in events]
    known = [t for t in times if t is not None]
    if known:
        peak = max(known) or 1.0
        line_color = theme.timing_color(pal)
        points = [QPointF(x0 + i * slot + bar / 2, plot.bottom() - (value / peak) * plot.height())
                  for i, value in enumerate(times) if value is not None]
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.setPen(QPen(line_color, 1.6))
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, len(points) < 60)
        painter.drawPolyline(QPolygonF(points))
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.drawText(QRectF(plot.right() + 4, plot.top() - 8, margin_right - 4, 16),
                         Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, f"{peak:,.0f}ms")
        painter.drawText(QRectF(plot.right() + 4, plot.bottom() - 8, margin_right - 4, 16),
                         Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, "0")
    painter.setPen(theme.muted_color(pal))
    painter.drawText(QRectF(plot.left(), plot.bottom() + 1, plot.width(), margin_bottom - 1),
                     Qt.AlignmentFlag.AlignLeft, legend)
    painter.end()
