"""A strip chart of the last requests: reuse % as coloured bars, prompt time as a line.

Painted by hand with QPainter (no chart dependency). A run of misses shows as a red streak, which is
the whole point: a broken prompt cache is visible at a glance, before reading any number.

The time line is scaled so that ordinary requests stay readable: one cold 11 s request among 80 ms hits
would otherwise flatten every other point to the floor. When the largest time is more than twice the
90th percentile (``OUTLIER_FACTOR``), the scale stops a little above that percentile, rounded up to a
round number, and each point above it is drawn at the top with a ▲ marker (the legend names the
largest). Every label is measured before anything is drawn, so the margins fit it: a label is never
clipped, and the legend is elided rather than cut when the widget is narrow.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QCoreApplication, QPointF, QRectF, QSize, Qt, QTimer, Slot
from PySide6.QtGui import QColor, QFontMetricsF, QPainter, QPaintEvent, QPalette, QPen, QPolygonF
from PySide6.QtWidgets import QSizePolicy, QWidget

from kvswitch.ui.widgets import theme

if TYPE_CHECKING:
    from PySide6.QtCore import QAbstractItemModel

MAX_BARS = 120
# bars never get wider than this many to a plot, so a handful of requests do not look like a wall
MIN_SLOTS = 40
# however few points fill the width, a bar stays a bar, not a block
MAX_BAR_PX = 56.0
# a flood adds requests every tick; repainting the chart that often costs the window more than it shows
REPAINT_INTERVAL_MS = 250
# the time scale is clamped when the largest point is more than this many times the 90th percentile
OUTLIER_FACTOR = 2.0
# below this many timed points a percentile means nothing: the scale is the largest point
MIN_POINTS_FOR_CLAMP = 5
LABEL_GAP = 4.0


class ReuseChart(QWidget):
    """Reads the last ``MAX_BARS`` points from ``points`` each time it paints, and repaints when ``model``
    gains rows: any table model (the log panel's events) with a reader of its last points."""

    def __init__(self, model: QAbstractItemModel, points: Callable[[int], Sequence[StripPoint]],
                 parent: QWidget | None = None):
        super().__init__(parent)
        self._points = points
        self.layout_drawn: StripLayout | None = None
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
        legend = self.tr("bars: reuse %   line: prompt time   (last %1 requests)")
        empty = self.tr("No requests yet: cache reuse per request appears here.")
        self.layout_drawn = paint_strip(self, events, empty, legend.replace("%1", str(len(events))))


class StripPoint(Protocol):
    """What a bar needs: reuse 0..1, a verdict naming its colour, and a time for the line."""

    @property
    def reuse_ratio(self) -> float: ...
    @property
    def verdict(self) -> str: ...
    @property
    def prompt_ms(self) -> float | None: ...


@dataclass
class StripLayout:
    """Where the last paint put things: the plot, every text with its box, the time scale."""

    plot: QRectF
    labels: list[tuple[QRectF, str]] = field(default_factory=list)
    scale_ms: float | None = None
    outliers: list[int] = field(default_factory=list)  # indexes of the points drawn above the scale
    errors: list[QRectF] = field(default_factory=list)  # where a run that measured nothing has its ×


def format_ms(value: float) -> str:
    """A duration in the unit a person reads: ``850 ms``, ``2.5 s``, ``42 s``, ``3.2 min``."""
    if value < 1000:
        return f"{value:,.0f} ms"
    if value < 10_000:
        return f"{value / 1000:.1f} s"
    if value < 120_000:
        return f"{value / 1000:,.0f} s"
    return f"{value / 60_000:,.1f} min"


def nice_ceiling(value: float) -> float:
    """The smallest of 1, 2, 2.5, 5 × 10^k that is at least ``value`` (a scale a person reads)."""
    if value <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    for step in (1.0, 2.0, 2.5, 5.0, 10.0):
        if step * power >= value * (1 - 1e-9):
            return step * power
    return 10 * power


def time_scale(values: Sequence[float | None]) -> float | None:
    """The top of the time axis (see the module doc), or ``None`` when no point has a time."""
    known = sorted(value for value in values if value is not None and value >= 0)
    if not known:
        return None
    top = known[-1]
    if len(known) >= MIN_POINTS_FOR_CLAMP:
        p90 = known[int(0.9 * (len(known) - 1))]
        if p90 > 0 and top > OUTLIER_FACTOR * p90:
            top = p90 * 1.2
    return nice_ceiling(top)


def paint_strip(widget: QWidget, events: Sequence[StripPoint], empty_text: str, legend: str, *,
                min_slots: int = MIN_SLOTS, x_labels: Sequence[str] | None = None) -> StripLayout:
    """Reuse bars coloured by verdict and a time line; shared by the live log, the verify history, the
    subtraction and the gateway's usage. ``min_slots``: the plot holds at least this many bars (fewer
    are drawn from the right); 1 spreads any number over the whole width. ``x_labels``: one text per
    point under its bar (a time axis), thinned so that none overlap. Returns what it drew, and where."""
    painter = QPainter(widget)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    pal = widget.palette()
    painter.fillRect(widget.rect(), pal.color(QPalette.ColorRole.Base))
    font = painter.font()
    font.setPointSizeF(max(8.0, font.pointSizeF() * 0.9))  # legends and axis labels stay legible
    painter.setFont(font)
    metrics = QFontMetricsF(font)
    text_h = metrics.height()
    times = [event.prompt_ms for event in events]
    scale = time_scale(times)
    right_texts = [format_ms(scale), "0"] if scale is not None else []
    margin_left = metrics.horizontalAdvance("100%") + 2 * LABEL_GAP
    margin_right = max([metrics.horizontalAdvance(t) for t in right_texts] + [0.0]) + 2 * LABEL_GAP
    margin_top = text_h / 2 + 2
    ticks_h = text_h + 2 if x_labels else 0.0
    margin_bottom = ticks_h + text_h + 2
    plot = QRectF(margin_left, margin_top, max(10.0, widget.width() - margin_left - margin_right),
                  max(10.0, widget.height() - margin_top - margin_bottom))
    layout = StripLayout(plot=plot, scale_ms=scale)

    def text(rect: QRectF, flags: Qt.AlignmentFlag, value: str) -> None:
        painter.drawText(rect, flags, value)
        layout.labels.append((rect, value))

    grid = QColor(pal.color(QPalette.ColorRole.Mid))
    painter.setPen(QPen(grid, 1, Qt.PenStyle.DotLine))
    for fraction in (0.0, 0.5, 1.0):
        y = plot.bottom() - fraction * plot.height()
        painter.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y))
    painter.setPen(pal.color(QPalette.ColorRole.Text))
    right_align = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
    for fraction, label in ((1.0, "100%"), (0.5, "50%"), (0.0, "0%")):
        y = plot.bottom() - fraction * plot.height()
        text(QRectF(0, y - text_h / 2, margin_left - LABEL_GAP, text_h), right_align, label)
    if not events:
        painter.setPen(theme.muted_color(pal))
        text(plot, Qt.AlignmentFlag.AlignCenter, empty_text)
        painter.end()
        return layout
    slot = plot.width() / max(min_slots, len(events), 1)
    bar = min(MAX_BAR_PX, max(1.0, slot * 0.8))
    x0 = plot.right() - len(events) * slot + (slot - bar) / 2
    _paint_bars(painter, pal, events, plot, x0, slot, bar, layout)
    if scale is not None:
        _paint_line(painter, pal, times, plot, x0 + bar / 2, slot, scale, layout)
        painter.setPen(theme.timing_color(pal))
        left_align = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        for y, label in ((plot.top(), right_texts[0]), (plot.bottom(), right_texts[1])):
            text(QRectF(plot.right() + LABEL_GAP, y - text_h / 2, margin_right - LABEL_GAP, text_h),
                 left_align, label)
    if x_labels:
        painter.setPen(pal.color(QPalette.ColorRole.Text))
        _paint_ticks(painter, metrics, x_labels[-len(events):], plot, x0 + bar / 2, slot, widget.width(),
                     text)
    if layout.outliers:
        peak = max(t for t in times if t is not None)
        note = QCoreApplication.translate("ReuseChart", "▲ %1 above the scale (largest %2)")
        note = note.replace("%1", str(len(layout.outliers)))
        legend = f"{legend}   {note.replace('%2', format_ms(peak))}"
    painter.setPen(theme.muted_color(pal))
    legend_rect = QRectF(plot.left(), plot.bottom() + ticks_h + 1, widget.width() - plot.left() - LABEL_GAP,
                         text_h)
    text(legend_rect, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
         metrics.elidedText(legend, Qt.TextElideMode.ElideRight, legend_rect.width()))
    painter.end()
    return layout


#: a run that failed measured no reuse: it is drawn as a small × on the floor, not as a red column that
#: reads like a miss
ERROR_VERDICTS = ("error", "failed")


def _paint_bars(painter: QPainter, pal: QPalette, events: Sequence[StripPoint], plot: QRectF, x0: float,
                slot: float, bar: float, layout: StripLayout | None = None) -> None:
    painter.setPen(Qt.PenStyle.NoPen)
    # one drawRects per verdict and colour: a per-bar brush change and draw call cost ms per paint
    columns: dict[str, list[QRectF]] = {}
    bars: dict[str, list[QRectF]] = {}
    errors: list[QRectF] = []
    for i, event in enumerate(events):
        if event.verdict == "empty":  # a slice of time with no request: nothing drawn, the gap shows
            continue
        if str(event.verdict).lower() in ERROR_VERDICTS:
            side = min(bar, 9.0)
            errors.append(QRectF(x0 + i * slot + (bar - side) / 2, plot.bottom() - side - 2, side, side))
            continue
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
    painter.setPen(QPen(theme.state_color("miss", pal), 1.8))
    for box in errors:
        painter.drawLine(box.topLeft(), box.bottomRight())
        painter.drawLine(box.topRight(), box.bottomLeft())
    painter.setPen(Qt.PenStyle.NoPen)
    if layout is not None:
        layout.errors.extend(errors)


def _paint_line(painter: QPainter, pal: QPalette, times: Sequence[float | None], plot: QRectF, x0: float,
                slot: float, scale: float, layout: StripLayout) -> None:
    line_color = theme.timing_color(pal)
    points: list[QPointF] = []
    for i, value in enumerate(times):
        if value is None:
            continue
        if value > scale:
            layout.outliers.append(i)
        points.append(QPointF(x0 + i * slot, plot.bottom() - min(value, scale) / scale * plot.height()))
    painter.setBrush(Qt.BrushStyle.NoBrush)
    painter.setPen(QPen(line_color, 1.6))
    painter.setRenderHint(QPainter.RenderHint.Antialiasing, len(points) < 60)
    painter.drawPolyline(QPolygonF(points))
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(line_color)
    size = 4.0
    for i in layout.outliers:
        x, y = x0 + i * slot, plot.top()
        painter.drawPolygon(QPolygonF([QPointF(x - size, y + size * 1.6), QPointF(x + size, y + size * 1.6),
                                       QPointF(x, y)]))


def _paint_ticks(painter: QPainter, metrics: QFontMetricsF, labels: Sequence[str], plot: QRectF, x0: float,
                 slot: float, width: float, text: Callable[[QRectF, Qt.AlignmentFlag, str], None]) -> None:
    """One label under a bar every so many bars, the newest always labelled, none overlapping, each
    moved inside the widget when it would stick out at an edge."""
    widest = max(metrics.horizontalAdvance(label) for label in labels) + 2 * LABEL_GAP
    every = max(1, math.ceil(widest / max(slot, 1.0)))
    y = plot.bottom() + 1
    newest = len(labels) - 1
    for i in range(newest, -1, -every):
        label_w = metrics.horizontalAdvance(labels[i]) + 2
        left = min(max(0.0, x0 + i * slot - label_w / 2), width - label_w)
        text(QRectF(left, y, label_w, metrics.height()), Qt.AlignmentFlag.AlignCenter, labels[i])
