"""Save a widget's screenshot and, beside it, where every visible text in it is and what it says.

``save(widget, path)`` writes ``path`` (PNG, most compressed, no alpha) and ``path.json``: the image's
size and device-pixel ratio, and one entry per text-bearing widget that shows on screen (labels,
buttons, line edits, combo boxes, tab bars, group-box titles, menu items, header sections and the
visible cells of item views): its class, object name, text, rectangle in image pixels, and whether it is
disabled or placeholder text (both exempt from WCAG's text contrast), and whether it is partly scrolled
out of view. The contrast test
(``tests/ui/test_screenshot_contrast.py``) reads the two together.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QComboBox,
    QGroupBox,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QMenuBar,
    QTabBar,
    QWidget,
)

#: cells looked at per item view (enough for every screen; bounded for huge models)
MAX_CELLS = 400


def _plain(text: str) -> str:
    text = re.sub(r"<[^>]+>", "", text) if "<" in text and ">" in text else text
    return " ".join(text.replace("&&", "\0").replace("&", "").replace("\0", "&").split())


class _Collector:
    def __init__(self, root: QWidget, ratio: float):
        self.root = root
        self.ratio = ratio
        self.entries: list[dict[str, Any]] = []
        self.bounds = QRect(QPoint(0, 0), root.size())

    def add(self, widget: QWidget, rect: QRect, text: str, *, disabled: bool = False,
            placeholder: bool = False, kind: str | None = None) -> None:
        """``rect`` in ``widget``'s coordinates, clipped to what of ``widget`` shows."""
        text = _plain(text)
        if not text:
            return
        visible = widget.visibleRegion().boundingRect()
        whole = QRect(rect)
        rect = rect.intersected(visible)
        if rect.isEmpty():
            return
        top_left = widget.mapTo(self.root, rect.topLeft()) if widget is not self.root else rect.topLeft()
        mapped = QRect(top_left, rect.size()).intersected(self.bounds)
        if mapped.width() < 3 or mapped.height() < 3:
            return
        r = self.ratio
        self.entries.append({
            "class": kind or type(widget).__name__,
            "name": widget.objectName(),
            "text": text,
            "rect": [round(mapped.x() * r), round(mapped.y() * r), round(mapped.width() * r),
                     round(mapped.height() * r)],
            "disabled": disabled or not widget.isEnabled(),
            "placeholder": placeholder,
            # partly scrolled out, or cut by the window's edge: its text may not show at all
            "clipped": rect != whole or mapped.size() != rect.size(),
        })

    def visit(self, widget: QWidget) -> None:
        if isinstance(widget, QLabel):
            if widget.text() and widget.pixmap().isNull():
                self.add(widget, widget.contentsRect(), widget.text())
        elif isinstance(widget, QAbstractButton):
            self.add(widget, widget.rect(), widget.text())
        elif isinstance(widget, QLineEdit):
            if widget.text():
                shown = widget.text() if widget.echoMode() == QLineEdit.EchoMode.Normal else "•••"
                self.add(widget, widget.rect(), shown)
            else:
                self.add(widget, widget.rect(), widget.placeholderText(), placeholder=True)
        elif isinstance(widget, QComboBox):
            if not widget.isEditable():  # an editable one's text is its QLineEdit child's
                self.add(widget, widget.rect(), widget.currentText())
        elif isinstance(widget, QTabBar):
            for index in range(widget.count()):
                self.add(widget, widget.tabRect(index), widget.tabText(index), kind="QTabBar tab",
                         disabled=not widget.isTabEnabled(index))
        elif isinstance(widget, QGroupBox):
            height = widget.fontMetrics().height() + 4
            self.add(widget, QRect(0, 0, widget.width(), height), widget.title(), kind="QGroupBox title")
        elif isinstance(widget, QMenu | QMenuBar):
            for action in widget.actions():
                if action.isVisible() and not action.isSeparator():
                    self.add(widget, widget.actionGeometry(action), action.text(), kind=type(widget).__name__
                             + " item", disabled=not action.isEnabled())
        elif isinstance(widget, QHeaderView):
            self._header(widget)
        elif isinstance(widget, QAbstractItemView):
            self._cells(widget)

    def _header(self, header: QHeaderView) -> None:
        model = header.model()
        if model is None:
            return
        horizontal = header.orientation() == Qt.Orientation.Horizontal
        for section in range(header.count()):
            if header.isSectionHidden(section):
                continue
            start, size = header.sectionViewportPosition(section), header.sectionSize(section)
            rect = QRect(start, 0, size, header.height()) if horizontal else QRect(0, start, header.width(),
                                                                                   size)
            text = model.headerData(section, header.orientation(), Qt.ItemDataRole.DisplayRole)
            self.add(header.viewport(), rect, str(text or ""), kind="QHeaderView section")

    def _cells(self, view: QAbstractItemView) -> None:
        model = view.model()
        if model is None:
            return
        viewport = view.viewport()
        seen = 0
        root = view.rootIndex()
        for row in range(model.rowCount(root)):
            for column in range(_columns(model, root)):
                index = model.index(row, column, root)
                rect = view.visualRect(index)
                if not rect.intersects(viewport.rect()):
                    continue
                seen += 1
                if seen > MAX_CELLS:
                    return
                text = index.data(Qt.ItemDataRole.DisplayRole)
                enabled = bool(index.flags() & Qt.ItemFlag.ItemIsEnabled)
                self.add(viewport, rect, "" if text is None else str(text),
                         kind=type(view).__name__ + " cell",
                         disabled=not enabled or not view.isEnabled())


def _columns(model: Any, root: Any) -> int:
    """Column count; list models keep ``columnCount`` private in PySide6 (they have one)."""
    try:
        return max(1, int(model.columnCount(root)))
    except TypeError:
        return 1


def texts(root: QWidget, ratio: float) -> list[dict[str, Any]]:
    collector = _Collector(root, ratio)
    for widget in [root, *root.findChildren(QWidget)]:
        if widget.isVisible() and (widget is root or widget.window() is root.window()):
            collector.visit(widget)
    return collector.entries


def save(widget: QWidget, path: Path) -> Path:
    """Grab ``widget``; write the PNG and its ``.json`` sidecar; return the PNG's path."""
    pixmap = widget.grab()
    ratio = pixmap.devicePixelRatio()
    image = pixmap.toImage().convertToFormat(QImage.Format.Format_RGB32)
    found = texts(widget, ratio)  # before writing anything: a PNG never lacks its sidecar
    if not image.save(str(path), "PNG", 0):  # 0: the most compressed
        raise OSError(f"could not write {path}")
    sidecar = {"image": path.name, "size": [image.width(), image.height()], "device_pixel_ratio": ratio,
               "root": type(widget).__name__, "texts": found}
    path.with_suffix(".json").write_text(json.dumps(sidecar, ensure_ascii=False, indent=1) + "\n",
                                         encoding="utf-8")
    return path
