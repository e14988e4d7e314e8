"""A capped table of per-request cache events (cutelog's bounded record model, Vorta's COL_* layout)."""

from __future__ import annotations

import time
from collections import deque
from itertools import islice
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt

from kvswitch.ui import theme

if TYPE_CHECKING:
    from kvswitch.logs.model import CacheEvent

COL_TIME, COL_TOKENS, COL_CACHED, COL_NEW, COL_PROMPT_MS, COL_VERDICT = range(6)
EventRole = Qt.ItemDataRole.UserRole + 1

_Index = QModelIndex | QPersistentModelIndex


class CacheEventsModel(QAbstractTableModel):
    """Rows are requests, oldest first; at ``max_events`` the oldest rows are removed."""

    def __init__(self, max_events: int = 5000, parent: QObject | None = None):
        super().__init__(parent)
        self.max_events = max_events
        # [event, arrival time, display texts formatted on first use]
        self._rows: deque[list[Any]] = deque()
        self._headers = [self.tr("Time"), self.tr("Tokens"), self.tr("Cached"), self.tr("New"),
                         self.tr("Prompt ms"), self.tr("Verdict")]
        self._verdicts = {"hit": self.tr("hit"), "partial": self.tr("partial"), "miss": self.tr("miss")}

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
        self._rows.extend([event, event.timestamp or arrived, None] for event in events)
        self.endInsertRows()

    def clear(self) -> None:
        self.beginResetModel()
        self._rows.clear()
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
                record[2] = self._format(event, record[1])
            texts = record[2]
            return texts[column] if 0 <= column < len(texts) else None
        if role == EventRole:
            return event
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return _RIGHT if column in _NUMERIC else None
        if column == COL_VERDICT:
            if role == Qt.ItemDataRole.BackgroundRole:
                return theme.tinted_background(event.verdict)
            if role == Qt.ItemDataRole.ForegroundRole:
                return theme.state_color(event.verdict)
        if role == Qt.ItemDataRole.ToolTipRole:
            return event.reason or None
        return None

    def _format(self, event: CacheEvent, when: str) -> tuple[str, ...]:
        verdict = self._verdicts.get(event.verdict, event.verdict)
        return (when[11:19] if len(when) >= 19 and when[10] in "T " else when,
                f"{event.prompt_tokens:,}", f"{event.cached_tokens:,}", f"{event.new_tokens:,}",
                "" if event.prompt_ms is None else f"{event.prompt_ms:,.1f}",
                f"{verdict} {event.reuse_ratio:.0%}")


_NUMERIC = frozenset({COL_TOKENS, COL_CACHED, COL_NEW, COL_PROMPT_MS})
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
