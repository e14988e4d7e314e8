"""A list model over ``ProfileStore``: the store owns the profiles, this only presents them.

The store calls back on every change; the model turns the difference between the names it last showed
and the store's current names into the matching row signals (insert, remove, or a reset when the order
changed), then marks every row changed so the active marker follows ``store.active_name``. The only
thing kept here is the list of names last shown, which row signals need to describe a change.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QObject, QPersistentModelIndex, Qt, Signal, Slot
from PySide6.QtGui import QFont

from kvswitch.ui.widgets import theme

if TYPE_CHECKING:
    from kvswitch.core.store import ProfileStore
    from kvswitch.core.store_rows import ProfileSummary

log = logging.getLogger("kvswitch.ui.profiles")

ProfileRole = Qt.ItemDataRole.UserRole + 1
IsActiveRole = Qt.ItemDataRole.UserRole + 2
NameRole = Qt.ItemDataRole.UserRole + 3
#: the latest recorded verify of the row's profile (a ``HistoryEntry``) or None
VerifyRole = Qt.ItemDataRole.UserRole + 4
#: the clients running the row's profile now (``LiveClient``s, maybe marked ``differs``), [] for none
LiveRole = Qt.ItemDataRole.UserRole + 5
#: the gateway's usage of the row's profile (``requests``, ``hit_rate``...) or None without any
UsageRole = Qt.ItemDataRole.UserRole + 6

_Index = QModelIndex | QPersistentModelIndex


class ProfileListModel(QAbstractListModel):
    """Rows are the store's profiles in store order; a profile live for some client is bold and badged.

    Signals:
        store_changed(): the store reported a change (emitted after the rows were updated).
    """

    store_changed = Signal()
    _store_notified = Signal()

    def __init__(self, store: ProfileStore, parent: QObject | None = None,
                 last_verify: Callable[[str], Any] | None = None,
                 live_for: Callable[[str], list[Any] | None] | None = None,
                 usage_of: Callable[[str], Any] | None = None):
        super().__init__(parent)
        self._store = store
        self._last_verify = last_verify or (lambda _name: None)
        self._live_for = live_for or (lambda _name: None)
        self._usage_of = usage_of or (lambda _name: None)
        self._names: list[str] = store.names()
        # The store may notify from a worker thread (apply in the background); the signal hop makes the
        # row update run on the model's thread.
        self._store_notified.connect(self._on_store_notified)
        unsubscribe = store.subscribe(self._on_store_callback)
        self._unsubscribe = unsubscribe
        # The store outlives a window rebuilt for another language: a deleted model stops listening.
        self.destroyed.connect(lambda *_args: unsubscribe())

    @property
    def store(self) -> ProfileStore:
        return self._store

    def profile_at(self, row: int) -> ProfileSummary | None:
        """What the row's card shows (plain values: painting builds no engine model)."""
        if 0 <= row < len(self._names):
            try:
                return self._store.summary(self._names[row])
            except Exception:  # the store raises its own error for a name that just vanished
                return None
        return None

    def row_of(self, name: str) -> int:
        try:
            return self._names.index(name)
        except ValueError:
            return -1

    def _on_store_callback(self, *_args: object, **_kwargs: object) -> None:
        self._store_notified.emit()

    @Slot()
    def _on_store_notified(self) -> None:
        new = self._store.names()
        old = self._names
        if new != old:
            self._apply_difference(old, new)
        if self._names:
            self.dataChanged.emit(self.index(0), self.index(len(self._names) - 1))
        self.store_changed.emit()

    @Slot()
    def refresh_rows(self) -> None:
        """Repaint every row (what a row shows beside the store changed, e.g. its latest verify)."""
        if self._names:
            self.dataChanged.emit(self.index(0), self.index(len(self._names) - 1))

    @Slot(object)
    def on_live_clients_changed(self, _clients: object) -> None:
        """What the clients run was read again: the badges repaint (a bound slot, so a window rebuilt
        for another language leaves no connection to a deleted model behind)."""
        self.refresh_rows()

    def _apply_difference(self, old: list[str], new: list[str]) -> None:
        if len(new) > len(old) and new[: len(old)] == old:
            self.beginInsertRows(QModelIndex(), len(old), len(new) - 1)
            self._names = new
            self.endInsertRows()
            return
        if len(new) == len(old) - 1:
            removed = next((i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), len(new))
            if old[:removed] + old[removed + 1:] == new:
                self.beginRemoveRows(QModelIndex(), removed, removed)
                self._names = new
                self.endRemoveRows()
                return
        self.beginResetModel()
        self._names = new
        self.endResetModel()

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt's own default
        return 0 if parent.isValid() else len(self._names)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._names):
            return None
        name = self._names[index.row()]
        live = self._live_for(name)
        # live for some client, from the clients' own files; the last apply only until they were read
        active = bool(live) if live is not None else name == self._store.active_name
        if role in (Qt.ItemDataRole.DisplayRole, NameRole):
            return name
        if role == IsActiveRole:
            return active
        if role == LiveRole:
            return list(live or [])
        if role == UsageRole:
            return self._usage_of(name)
        if role == ProfileRole:
            return self.profile_at(index.row())
        if role == VerifyRole:
            return self._last_verify(name)
        if role == Qt.ItemDataRole.FontRole:
            font = QFont()
            font.setBold(active)
            return font
        if role == Qt.ItemDataRole.DecorationRole:
            return theme.marker_icon(active)
        if role == Qt.ItemDataRole.ToolTipRole:
            profile = self.profile_at(index.row())
            if profile is None:
                return None
            marker = self.tr(" (active)") if active else ""
            lines = [f"{name}{marker}", f"{self._identity(profile)} · {profile.base_url}"]
            lines += [f"{client.label}: {client.detail}" for client in live or []]
            lines += [mark.detail for mark in self._marks(profile, live)]
            return "\n".join(lines)
        if role == Qt.ItemDataRole.AccessibleTextRole:
            profile = self.profile_at(index.row())
            kind = f", {self._identity(profile)}" if profile is not None else ""
            said = "".join(f", {mark.detail}" for mark in self._marks(profile, live)) if profile else ""
            return (self.tr("%1, active").replace("%1", name) if active else name) + kind + said
        return None

    @staticmethod
    def _marks(profile: ProfileSummary, live: list[Any] | None) -> list[Any]:
        """What the card's quiet pills say (the clients it is for, the gateway), for tooltip and reader."""
        from kvswitch.ui.profiles.card_badges import marks  # noqa: PLC0415

        return marks(profile.targets, profile.via_gateway, live or [])

    @staticmethod
    def _identity(profile: ProfileSummary) -> str:
        """``<vendor> · <API>`` or the kind's name (loaded on the first tooltip, not at start)."""
        from kvswitch.ui.i18n import current  # noqa: PLC0415
        from kvswitch.ui.profiles.identity import identity  # noqa: PLC0415

        return identity(profile.base_url, profile.kind.value, current()).label

    def flags(self, index: _Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemNeverHasChildren
