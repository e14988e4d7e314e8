"""A capped table of per-request cache events (cutelog's bounded record model, Vorta's COL_* layout)."""

from __future__ import annotations

import time
from collections import deque
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt

from kvswitch.ui import theme

COL_TIME, COL_TOKENS, COL_CACHED, COL_NEW, COL_PROMPT_MS, COL_VERDICT = range(6)
EventRole = Qt.ItemDataRole.UserRole + 1

_Index = QModelIndex | QPersistentModelIndex


class CacheEventsModel(QAbstractTableModel):
    """Rows are requests, oldest first; at ``max_events`` the oldest rows are removed."""

    def __init__(self, max_events: int = 5000, parent: QObject | None = None):
        super().__init__(parent)
        self.max_events = max_events
        self._rows: deque[tuple[Any, str]] = deque()
        self._headers = [self.tr("Time"), self.tr("Tokens"), self.tr("Cached"), self.tr("New"),
                         self.tr("Prompt ms"), self.tr("Verdict")]
        self._verdicts = {"hit": self.tr("hit"), "partial": self.tr("partial"), "miss": self.tr("miss")}

    def events(self, last: int | None = None) -> list[Any]:
        rows = list(self._rows) if last is None else list(self._rows)[-last:]
        return [event for event, _ in rows]

    def add_events(self, events: list[Any]) -> None:
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
        self._rows.extend((event, event.timestamp or arrived) for event in events)
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
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        event, when = self._rows[index.row()]
        column = index.column()
        if role == EventRole:
            return event
        if role == Qt.ItemDataRole.DisplayRole:
            if column == COL_TIME:
                return when[11:19] if len(when) >= 19 and when[10] in "T " else when
            if column == COL_TOKENS:
                return f"{event.prompt_tokens:,}"
            if column == COL_CACHED:
                return f"{event.cached_tokens:,}"
            if column == COL_NEW:
                return f"{event.new_tokens:,}"
            if column == COL_PROMPT_MS:
                return "" if event.prompt_ms is None else f"{event.prompt_ms:,.1f}"
            if column == COL_VERDICT:
                verdict = self._verdicts.get(event.verdict, event.verdict)
                return f"{verdict} {event.reuse_ratio:.0%}"
        numeric = column in (COL_TOKENS, COL_CACHED, COL_NEW, COL_PROMPT_MS)
        if role == Qt.ItemDataRole.TextAlignmentRole and numeric:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.BackgroundRole and column == COL_VERDICT:
            return theme.tinted_background(event.verdict)
        if role == Qt.ItemDataRole.ForegroundRole and column == COL_VERDICT:
            return theme.state_color(event.verdict)
        if role == Qt.ItemDataRole.ToolTipRole:
            return event.reason or None
        return None
