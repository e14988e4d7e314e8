"""The log panel's lines waiting to be drawn, and the pacing that draws them in time-bounded slices.

Kept apart from the panel because this is the part with numbers to reason about: how many lines fit in a
tick's drawing budget, measured from what drawing actually cost so far, and how many fall out when more
wait than the view would keep. It draws through a function it is given and knows nothing of the view,
the filter or the signals.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QElapsedTimer

if TYPE_CHECKING:
    from kvswitch.logs.model import ClassifiedLine


class DrawQueue:
    """Shown lines not drawn yet, oldest first, at most ``maxlen`` of them."""

    def __init__(self, maxlen: int):
        self.maxlen = maxlen
        self._lines: deque[ClassifiedLine] = deque(maxlen=maxlen)
        self.ms_per_line = 0.05  # measured drawing cost, sizes the slices

    def __len__(self) -> int:
        return len(self._lines)

    def add(self, lines: list[ClassifiedLine]) -> int:
        """Queue ``lines`` after the waiting ones; returns how many of the oldest fell out to make room."""
        overflow = len(self._lines) + len(lines) - self.maxlen
        self._lines.extend(lines)
        return max(0, overflow)

    def clear(self) -> None:
        self._lines.clear()

    def draw(self, draw_chunk: Callable[[list[ClassifiedLine]], None], budget_ms: float | None) -> int:
        """Hand waiting lines to ``draw_chunk``, oldest first, until ``budget_ms`` is spent (None: all of
        them); returns how many were drawn."""
        if not self._lines:
            return 0
        clock = QElapsedTimer()
        clock.start()
        drawn = 0
        while self._lines:
            if budget_ms is None:
                count = len(self._lines)
            else:
                left = budget_ms - clock.nsecsElapsed() / 1e6
                if left <= 0:
                    break
                count = max(16, int(left / self.ms_per_line))
            chunk = [self._lines.popleft() for _ in range(min(count, len(self._lines)))]
            started = clock.nsecsElapsed()
            draw_chunk(chunk)
            per_line = (clock.nsecsElapsed() - started) / 1e6 / len(chunk)
            self.ms_per_line = max(0.005, 0.7 * self.ms_per_line + 0.3 * per_line)
            drawn += len(chunk)
        return drawn
