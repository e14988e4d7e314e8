"""A capped table of per-request cache events (cutelog's bounded record model, Vorta's COL_* layout).

The table and the chart show a *display* verdict, so the expected losses are not red: the engine's
verdict (``log scan --jsonl``) is kept unchanged in each event, the rule below only re-labels what a
person sees. Per slot (server + slot id) since following started:

- **cold**: the first request seen on a slot that did not hit. Nothing could be reused yet (first
  sight of a prompt, a fresh slot, the first request after the server or the panel started).
- **shared prefix**: a request that did not hit, whose prompt is *shorter* than the slot's previous
  one (a new conversation or a compaction, not the next turn of the same one, which only grows) and
  that still reused more than a chat template's header (``SHARED_MIN_TOKENS``): the system prompt and
  tools two conversations share. A turn that grew its prompt and still lost the cache stays red.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt

from kvswitch.ui.control import engine_text
from kvswitch.ui.widgets import theme

if TYPE_CHECKING:
    from kvswitch.logs.model import CacheEvent

#: more cached tokens than a chat template's header and a few words (``logs.diagnose.SMALL_PREFIX``)
SHARED_MIN_TOKENS = 256

COL_TIME, COL_TOKENS, COL_CACHED, COL_NEW, COL_PROMPT_MS, COL_VERDICT = range(6)
EventRole = Qt.ItemDataRole.UserRole + 1

_Index = QModelIndex | QPersistentModelIndex


@dataclass(frozen=True, slots=True)
class ShownPoint:
    reuse_ratio: float
    verdict: str
    prompt_ms: float | None


class CacheEventsModel(QAbstractTableModel):
    """Rows are requests, oldest first; at ``max_events`` the oldest rows are removed."""

    def __init__(self, max_events: int = 5000, parent: QObject | None = None):
        super().__init__(parent)
        self.max_events = max_events
        # [event, arrival time, display texts formatted on first use, display verdict]
        self._rows: deque[list[Any]] = deque()
        self._headers = [self.tr("Time"), self.tr("Tokens"), self.tr("Cached"), self.tr("New"),
                         self.tr("Prompt ms"), self.tr("Verdict")]
        self._verdicts = {"hit": self.tr("hit"), "partial": self.tr("partial"), "miss": self.tr("miss"),
                          "cold": self.tr("cold"), "shared_prefix": self.tr("shared prefix")}
        self._last_prompt: dict[tuple[str, int | None], int] = {}  # per slot: the previous prompt's size

    def shown_verdict(self, event: CacheEvent) -> str:
        """The display verdict of the next request (and remember it for the slot); see the module doc."""
        verdict = event.verdict
        key = (event.server, event.slot)
        previous = self._last_prompt.get(key)
        self._last_prompt[key] = event.prompt_tokens
        if verdict == "hit":
            return verdict
        if previous is None:
            return "cold"
        if event.prompt_tokens < previous and event.cached_tokens > SHARED_MIN_TOKENS:
            return "shared_prefix"
        return verdict

    def points(self, last: int | None = None) -> list[ShownPoint]:
        """The last requests as the chart draws them: reuse, display verdict, prompt time."""
        rows = list(self._rows) if last is None else list(islice(reversed(self._rows), max(0, last)))[::-1]
        return [ShownPoint(row[0].reuse_ratio, row[3], row[0].prompt_ms) for row in rows]

    def verdict_at(self, row: int) -> str:
        return str(self._rows[row][3])

    def events(self, last: int | None = None) -> list[CacheEvent]:
        if last is None:
            return [row[0] for row in self._rows]
        newest = [row[0] for row in islice(reversed(self._rows), max(0, last))]
        newest.reverse()
        return newest

    def add_events(self, events: list[CacheEvent]) -> None:
        if not events:
            return
        events = events[-self.max_events:]
        overflow = len(self._rows) + len(events) - self.max_events
        if overflow > 0:
            self.beginRemoveRows(QModelIndex(), 0, overflow - 1)
            for _ in range(overflow):
                self._rows.popleft()
            self.endRemoveRows()
        arrived = time.strftime("%H:%M:%S")
        first = len(self._rows)
        self.beginInsertRows(QModelIndex(), first, first + len(events) - 1)
        self._rows.extend([event, event.timestamp or arrived, None, self.shown_verdict(event)]
                          for event in events)
        self.endInsertRows()

    def clear(self) -> None:
        self.beginResetModel()
        self._rows.clear()
        self._last_prompt.clear()
        self.endResetModel()

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt's own default
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt's own default
        return 0 if parent.isValid() else len(self._headers)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole \
                and 0 <= section < len(self._headers):
            return self._headers[section]
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """Display text is formatted once per row: a view asks for every visible cell on every repaint,
        and during a flood that is every tick."""
        row = index.row()
        if not 0 <= row < len(self._rows) or not index.isValid():
            return None
        record = self._rows[row]
        event = record[0]
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if record[2] is None:
                record[2] = self._format(event, record[1], record[3])
            texts = record[2]
            return texts[column] if 0 <= column < len(texts) else None
        if role == EventRole:
            return event
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return _RIGHT if column in _NUMERIC else None
        if column == COL_VERDICT:
            if role == Qt.ItemDataRole.BackgroundRole:
                return theme.tinted_background(record[3])  # cold and shared prefix: neutral
            if role == Qt.ItemDataRole.ForegroundRole:
                return theme.state_color(record[3])
        if role == Qt.ItemDataRole.ToolTipRole:
            return engine_text.translate(event.reason) or None
        return None

    def _format(self, event: CacheEvent, when: str, shown: str) -> tuple[str, ...]:
        verdict = self._verdicts.get(shown, shown)
        return (when[11:19] if len(when) >= 19 and when[10] in "T " else when,
                f"{event.prompt_tokens:,}", f"{event.cached_tokens:,}", f"{event.new_tokens:,}",
                "" if event.prompt_ms is None else f"{event.prompt_ms:,.1f}",
                f"{verdict} {event.reuse_ratio:.0%}")


_NUMERIC = frozenset({COL_TOKENS, COL_CACHED, COL_NEW, COL_PROMPT_MS})
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
