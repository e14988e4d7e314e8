"""The strip on top of the log panel: hit rate, prompt share from cache, tokens re-processed, time lost.

A person watching a session wants one answer before any row: is the cache working, and what does it
cost when it is not. The numbers are the server's own (cached and evaluated prompt tokens, prompt eval
time) summed by ``events_model.ReuseTotals`` since following started; each tile's tooltip says how.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from kvswitch.core.verdicts import HIT_RATIO, MISS_RATIO
from kvswitch.ui.widgets import spacing, theme
from kvswitch.ui.widgets.reuse_chart import format_ms

if TYPE_CHECKING:
    from kvswitch.ui.logs.events_model import ReuseTotals


class _Tile(QWidget):
    """A large value over a small caption; the tooltip (on both) explains the value."""

    def __init__(self, tooltip: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.value = QLabel("–")
        font = self.value.font()
        font.setPointSizeF(font.pointSizeF() * 1.35)
        font.setBold(True)
        self.value.setFont(font)
        self.caption = QLabel()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.value)
        layout.addWidget(self.caption)
        self.setToolTip(tooltip)

    def show_value(self, value: str, caption: str) -> None:
        self.value.setText(value)
        self.caption.setText(caption)


class ReuseSummary(QFrame):
    """Four tiles in a row; ``show_totals`` refreshes them (the panel calls it whenever rows arrive)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.hit_rate = _Tile(self.tr(
            "Requests shown as a hit, out of those that could reuse the cache: cold starts (the first "
            "request seen on a slot) and new conversations that share only a prefix are left out."))
        self.reused = _Tile(self.tr(
            "Prompt tokens the server took from its cache, out of all prompt tokens, summed over every "
            "request since following started (the server's own numbers)."))
        self.reprocessed = _Tile(self.tr(
            "For each request shown as a miss or partial: the tokens of the slot's previous prompt that "
            "the server evaluated again (of the shorter of the two prompts, the part it did not reuse)."))
        self.time_lost = _Tile(self.tr(
            "The share of those requests' prompt time (the server's “prompt eval time”) spent on the "
            "re-processed tokens."))
        layout = QHBoxLayout(self)
        layout.setContentsMargins(spacing.EDGE, spacing.UNIT, spacing.EDGE, spacing.UNIT)
        layout.setSpacing(16)
        for tile in (self.hit_rate, self.reused, self.reprocessed, self.time_lost):
            layout.addWidget(tile, 1)
        self.setAccessibleName(self.tr("Prompt cache summary since following started"))
        self.show_totals(None)

    def show_totals(self, totals: ReuseTotals | None) -> None:
        requests = totals.requests if totals else 0
        if totals is None or requests == 0:
            self.hit_rate.show_value("–", self.tr("hit rate: no requests yet"))
            self.reused.show_value("–", self.tr("of prompt tokens from cache"))
            self.reprocessed.show_value("0", self.tr("tokens re-processed"))
            self.time_lost.show_value("0 ms", self.tr("time lost to misses"))
            self._color(self.hit_rate, None)
            return
        if totals.chances:
            rate = totals.hits / totals.chances
            self.hit_rate.show_value(f"{rate:.0%}", self.tr("hit rate: %1 of %2 requests")
                                     .replace("%1", f"{totals.hits:,}").replace("%2", f"{totals.chances:,}"))
            self._color(self.hit_rate, rate)
        else:
            self.hit_rate.show_value("–", self.tr("hit rate: only cold starts so far (%1)")
                                     .replace("%1", f"{requests:,}"))
            self._color(self.hit_rate, None)
        share = totals.cached_tokens / totals.prompt_tokens if totals.prompt_tokens else 0.0
        self.reused.show_value(f"{share:.0%}", self.tr("of %1 prompt tokens from cache")
                               .replace("%1", f"{totals.prompt_tokens:,}"))
        self.reprocessed.show_value(f"{totals.reprocessed:,}", self.tr("tokens re-processed"))
        self.time_lost.show_value(format_ms(totals.lost_ms), self.tr("time lost to misses"))

    def _color(self, tile: _Tile, rate: float | None) -> None:
        """The hit rate takes its verdict's colour, so a broken cache is red before it is read."""
        if rate is None:
            tile.value.setStyleSheet("")
            return
        state = "hit" if rate >= HIT_RATIO else "miss" if rate < MISS_RATIO else "partial"
        tile.value.setStyleSheet(f"color: {theme.state_color(state).name()}")
