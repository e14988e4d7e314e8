"""A session's turns as stacked bars: tokens reused (read from the cache), written to it and sent new,
per API call; a call that lost the cache is marked with a red ▼ above its bar.

Painted by hand (no chart dependency), like the cache log's strip chart. The colours are the verdict
colours of ``theme`` (reused as a hit, new as a miss, written as partial) so the two charts read alike
in light and dark.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QFontMetricsF, QPainter, QPaintEvent, QPolygonF
from PySide6.QtWidgets import QSizePolicy, QWidget

from kvswitch.ui.widgets import theme

#: a bar is never wider than this (a two-call session must not look like a bar chart of two walls)
MAX_BAR_PX = 40.0


class TurnChart(QWidget):
    """``set_turns`` takes ``Turn``s in call order; ``loss_positions`` is what the tests read back."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.turns: Sequence[Any] = []
        self.setMinimumHeight(150)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setAccessibleName(self.tr("Tokens reused, written and new per call"))

    def set_turns(self, turns: Sequence[Any]) -> None:
        self.turns = list(turns)
        self.setToolTip(self._tooltip())
        self.update()

    def sizeHint(self) -> QSize:
        return QSize(480, 170)

    @property
    def loss_positions(self) -> list[int]:
        """The indexes (0-based, call order) of the calls marked as losses."""
        return [n for n, turn in enumerate(self.turns) if turn.loss is not None]

    def _tooltip(self) -> str:
        losses = len(self.loss_positions)
        text = self.tr("%1 calls, %2 lost the cache").replace("%1", str(len(self.turns)))
        return text.replace("%2", str(losses))

    def paintEvent(self, _event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        pal = self.palette()
        metrics = QFontMetricsF(self.font())
        line = metrics.height()
        legend = self.tr("green: reused   amber: written to the cache   red: new   ▼ cache lost")
        painter.setPen(theme.muted_color(pal))
        painter.drawText(QRectF(4, 0, self.width() - 8, line), Qt.AlignmentFlag.AlignLeft,
                         metrics.elidedText(legend, Qt.TextElideMode.ElideRight, self.width() - 8))
        plot = QRectF(4, line + 14, self.width() - 8, self.height() - line * 2 - 18)
        if not self.turns:
            painter.drawText(plot, Qt.AlignmentFlag.AlignCenter, self.tr("No calls in this session."))
            return
        top = max(turn.call.prompt for turn in self.turns) or 1
        slot = plot.width() / len(self.turns)
        width = max(1.0, min(MAX_BAR_PX, slot * 0.8))
        colours = (theme.state_color("hit", pal), theme.state_color("partial", pal),
                   theme.state_color("miss", pal))
        for n, turn in enumerate(self.turns):
            x = plot.left() + n * slot + (slot - width) / 2
            y = plot.bottom()
            call = turn.call
            for value, colour in zip((call.cache_read, call.cache_write, call.fresh), colours, strict=True):
                height = plot.height() * value / top
                if height > 0:
                    painter.fillRect(QRectF(x, y - height, width, height), colour)
                y -= height
            if turn.loss is not None:
                painter.setPen(Qt.PenStyle.NoPen)
                painter.setBrush(colours[2])
                mid, tip = x + width / 2, max(plot.top() - 2, y - 4)
                painter.drawPolygon(QPolygonF([QPointF(mid - 6, tip - 10), QPointF(mid + 6, tip - 10),
                                               QPointF(mid, tip)]))
        painter.setPen(theme.muted_color(pal))
        step = max(1, int(len(self.turns) / max(1.0, plot.width() / 40)))
        for n in range(0, len(self.turns), step):
            mid = plot.left() + (n + 0.5) * slot  # under its bar
            painter.drawText(QRectF(mid - 20, plot.bottom() + 2, 40, line), Qt.AlignmentFlag.AlignHCenter,
                             str(n + 1))
