"""The preset gallery: servers running on this machine first, then local presets, then cloud vendors.

A new user does not know a vendor's endpoint path or which variable its key goes in; picking an entry
here hands the editor the same starting data ``kvswitch profile add --preset ID`` builds (one function,
``servers.preset_data.preset_profile_data``), so the user only adds a key and saves. Detection probes
ports and reads the process list, so it runs off the GUI thread through the controller's task runner.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QRect, QSize, Qt, Signal, Slot
from PySide6.QtGui import QBrush, QFontMetrics, QIcon, QKeySequence, QPixmap, QShortcut
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
    QWidget,
)

from kvswitch.core.catalog import vendors
from kvswitch.core.errors import KvSwitchError
from kvswitch.servers import PRESETS
from kvswitch.servers.preset_data import preset_profile_data
from kvswitch.ui import i18n
from kvswitch.ui.profiles.identity import kind_description
from kvswitch.ui.widgets import icons, theme

if TYPE_CHECKING:
    from kvswitch.platform.detect import DetectedServer
    from kvswitch.ui.control.controller import AppController

log = logging.getLogger("kvswitch.ui.profiles.gallery")

#: each entry's starting profile data (a dict for ``Profile.model_validate`` without a name)
DATA_ROLE = Qt.ItemDataRole.UserRole + 1
SEARCH_ROLE = Qt.ItemDataRole.UserRole + 2


def detect_local() -> list[DetectedServer]:
    from kvswitch.platform.detect import detect_servers  # noqa: PLC0415 - probes ports: loaded on use

    return detect_servers()


class PresetGallery(QDialog):
    """Searchable list of starting points; ``picked`` carries the chosen entry's profile data.

    Args:
        controller: runs detection in the background.
        detector: returns the servers running here; tests pass one limited to their own servers.

    Signals:
        picked(dict): profile data for the editor (``name`` included, the user may change it).
        detection_finished(int): detection ended with this many servers (on the GUI thread).
    """

    picked = Signal(dict)
    detection_finished = Signal(int)

    def __init__(self, controller: AppController, parent: QWidget | None = None, *,
                 detector: Callable[[], list[DetectedServer]] | None = None):
        super().__init__(parent)
        self.setWindowTitle(self.tr("Add a profile"))
        self.resize(520, 560)
        self.controller = controller
        self.language = i18n.current()
        self.search_edit = QLineEdit()
        self.search_edit.setPlaceholderText(self.tr("Search servers and vendors (name, URL, model)"))
        self.search_edit.setClearButtonEnabled(True)
        self.list = QListWidget()
        self.list.setIconSize(QSize(28, 28))
        self.list.setAlternatingRowColors(True)
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.status = QLabel(self.tr("Looking for servers running on this machine…"))
        ok, cancel = QDialogButtonBox.StandardButton.Ok, QDialogButtonBox.StandardButton.Cancel
        self.buttons = QDialogButtonBox(ok | cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText(self.tr("Use this"))
        layout = QVBoxLayout(self)
        layout.addWidget(self.search_edit)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.status)
        layout.addWidget(self.buttons)
        self._detected_header = self._header(self.tr("Running on this machine"))
        self._fill_static()
        self._hide_empty_headers()
        self.search_edit.textChanged.connect(self._on_search_text_changed)
        self.list.itemDoubleClicked.connect(self._on_list_item_activated)
        self.list.currentItemChanged.connect(self._on_list_current_changed)
        self.buttons.accepted.connect(self._on_buttons_accepted)
        self.buttons.rejected.connect(self.reject)
        QShortcut(QKeySequence.StandardKey.Find, self, self.search_edit.setFocus)
        self._on_list_current_changed()
        self._task = controller.run_task(detector or detect_local, self._on_detection_succeeded,
                                         self._on_detection_failed)
        self.search_edit.setFocus()

    def done(self, result: int) -> None:
        """Closing while detection runs: its answer must not reach a dialog that is being deleted."""
        for signal, slot in ((self._task.finished, self._on_detection_succeeded),
                             (self._task.failed, self._on_detection_failed)):
            with contextlib.suppress(RuntimeError, TypeError):  # already disconnected
                signal.disconnect(slot)
        super().done(result)

    # -- entries -----------------------------------------------------------------------------------

    def _header(self, text: str) -> QListWidgetItem:
        item = QListWidgetItem(text)
        item.setFlags(Qt.ItemFlag.NoItemFlags)
        # not the disabled colour a flagless item gets (#bebebe on white, 1.9:1): the readable muted one
        item.setForeground(QBrush(theme.muted_color(self.list.palette())))
        font = item.font()
        font.setBold(True)
        item.setFont(font)
        self.list.addItem(item)
        return item

    def _entry(self, title: str, detail: str, data: dict[str, Any], row: int | None = None,
               logo: str | None = None) -> None:
        item = QListWidgetItem(f"{title}\n    {detail}")
        item.setSizeHint(self._row_size(item.text()))
        icon = icons.logo_icon(logo or icons.logo_name(str(data.get("base_url") or ""),
                                                       str(data.get("kind") or "")), 28)
        if icon is None:  # an empty square keeps every title at the same indent
            blank = QPixmap(self.list.iconSize())
            blank.fill(Qt.GlobalColor.transparent)
            icon = QIcon(blank)
        item.setIcon(icon)
        item.setData(DATA_ROLE, data)
        item.setData(SEARCH_ROLE, f"{title} {detail} {data.get('model') or ''}".casefold())
        item.setToolTip(detail)
        if row is None:
            self.list.addItem(item)
        else:
            self.list.insertItem(row, item)

    def _row_size(self, text: str) -> QSize:
        """Room for both lines as they are drawn: a Chinese title is laid out in a CJK fallback font
        taller than the UI font, and Qt's own estimate (the UI font's) made it elide the URL · model
        line to "…" in zh_CN."""
        drawn = QFontMetrics(self.list.font()).boundingRect(QRect(0, 0, 10_000, 10_000),
                                                            Qt.TextFlag.TextExpandTabs, text)
        icon = self.list.iconSize()
        return QSize(drawn.width() + icon.width() + 16, max(drawn.height(), icon.height()) + 8)

    def _fill_static(self) -> None:
        self._header(self.tr("Local servers (default ports)"))
        for kind, local in PRESETS.items():
            if kind.is_local:
                data = preset_profile_data(local.label, kind.value, None, False, False)
                description = kind_description(kind.value, local.description)
                self._entry(local.label, f"{local.base_url} — {description}", data)
        self._header(self.tr("Cloud vendors"))
        for entry in vendors():
            name = entry.display_name(self.language)
            data = preset_profile_data(name, entry.id, None, False, False)
            self._entry(name, f"{entry.base_url} · {entry.models.get('main', '')}".rstrip(" ·"), data,
                        logo=icons.VENDOR_LOGOS.get(entry.id))

    def entry_titles(self) -> list[str]:
        """Titles of the visible, pickable entries in order (what the user can choose)."""
        return [self.list.item(i).text().split("\n", 1)[0] for i in range(self.list.count())
                if self.list.item(i).data(DATA_ROLE) is not None and not self.list.item(i).isHidden()]

    def select_title(self, title: str) -> bool:
        for i in range(self.list.count()):
            item = self.list.item(i)
            if item.data(DATA_ROLE) is not None and item.text().split("\n", 1)[0] == title:
                self.list.setCurrentItem(item)
                return True
        return False

    # -- slots -------------------------------------------------------------------------------------

    def _on_detection_succeeded(self, found: object) -> None:
        servers = list(found) if isinstance(found, list) else []
        row = 1
        for server in servers:
            try:
                data = server.to_profile().model_dump(context={"secrets": True})
            except KvSwitchError as exc:  # a name or URL the model refuses: say so, offer the rest
                log.info("detected server not offered: %s", exc)
                continue
            model = server.model or self.tr("model not reported")
            detail = f"{server.base_url} · {model}"
            self._entry(server.profile_name(), detail, data, row)
            row += 1
        self.status.setText(self.tr("%1 server(s) running on this machine.").replace("%1", str(row - 1))
                            if row > 1 else self.tr("No server is running on this machine right now."))
        self._on_search_text_changed(self.search_edit.text())
        self.detection_finished.emit(row - 1)

    def _on_detection_failed(self, exc: BaseException) -> None:
        self.status.setText(self.tr("Detection failed: %1").replace("%1", str(exc)))
        self.detection_finished.emit(0)

    @Slot(str)
    def _on_search_text_changed(self, text: str) -> None:
        words = text.casefold().split()
        for i in range(self.list.count()):
            item = self.list.item(i)
            haystack = item.data(SEARCH_ROLE)
            if haystack is not None:
                item.setHidden(not all(word in haystack for word in words))
        self._hide_empty_headers()
        if self.list.currentItem() is None or self.list.currentItem().isHidden():
            visible = [self.list.item(i) for i in range(self.list.count())
                       if self.list.item(i).data(DATA_ROLE) is not None and not self.list.item(i).isHidden()]
            self.list.setCurrentItem(visible[0] if visible else None)  # type: ignore[arg-type]
        self._on_list_current_changed()

    def _hide_empty_headers(self) -> None:
        """A section header shows only while one of its entries does."""
        header: QListWidgetItem | None = None
        shown = False
        for i in range(self.list.count() + 1):
            item = self.list.item(i) if i < self.list.count() else None
            if item is None or item.data(DATA_ROLE) is None:
                if header is not None:
                    header.setHidden(not shown)
                header, shown = item, False
            elif not item.isHidden():
                shown = True

    @Slot()
    def _on_list_current_changed(self, *_args: object) -> None:
        item = self.list.currentItem()
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(
            item is not None and item.data(DATA_ROLE) is not None and not item.isHidden())

    @Slot(QListWidgetItem)
    def _on_list_item_activated(self, item: QListWidgetItem) -> None:
        if item.data(DATA_ROLE) is not None:
            self.list.setCurrentItem(item)
            self._on_buttons_accepted()

    @Slot()
    def _on_buttons_accepted(self) -> None:
        item = self.list.currentItem()
        if item is None or item.data(DATA_ROLE) is None:
            return
        self.picked.emit(dict(item.data(DATA_ROLE)))
        self.accept()
