"""The sessions list as a table model: one row per ``SessionSummary``, newest first.

A model rather than a table widget: a list re-read every half second while 5,000 files are indexed is
one ``beginResetModel``/``endResetModel`` and the view asks only for the rows it shows, so filling it
never stalls the GUI thread.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

from kvswitch.ui.control.clients import client_label

_Index = QModelIndex | QPersistentModelIndex
#: the columns whose text is a number (right-aligned)
_NUMERIC = frozenset({4, 5, 6, 7})


class SessionsModel(QAbstractTableModel):
    """``set_sessions`` replaces the rows; ``session(row)`` gives a row's ``SessionSummary``."""

    def __init__(self, parent: Any = None):
        super().__init__(parent)
        self.sessions: list[Any] = []
        self.headers = [self.tr("Client"), self.tr("Project"), self.tr("Title"), self.tr("Last call"),
                        self.tr("Calls"), self.tr("Tokens"), self.tr("Hit %"), self.tr("Cost")]

    def set_sessions(self, sessions: list[Any]) -> None:
        self.beginResetModel()
        self.sessions = list(sessions)
        self.endResetModel()

    def session(self, row: int) -> Any | None:
        return self.sessions[row] if 0 <= row < len(self.sessions) else None

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt's own signature
        return 0 if parent.isValid() else len(self.sessions)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.headers)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return self.headers[section]
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        s = self.session(index.row())
        if s is None:
            return None
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self.text(s, column)
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{s.project}\n{s.session_id}\n{', '.join(s.models)}"
        if role == Qt.ItemDataRole.TextAlignmentRole and column in _NUMERIC:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    @staticmethod
    def text(s: Any, column: int) -> str:
        """A cell's text (also what the tests read)."""
        values = (
            client_label(s.client),
            Path(s.project).name or s.project,
            s.title or s.session_id,
            time.strftime("%Y-%m-%d %H:%M", time.localtime(s.last_time)) if s.last_time else "—",
            f"{s.calls:,}",
            f"{s.prompt + s.output:,}",
            f"{s.hit_rate:.0%}" if s.prompt else "—",
            f"${s.cost:.4f}",
        )
        return values[column]
