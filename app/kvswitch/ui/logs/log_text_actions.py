"""The log panel's text actions: copy the shown lines (or the selection), find in them with wrap-around,
and the search field's Return (Shift+Return searches backwards).

A mixin of ``LogPanel`` (which owns ``view``, ``search_edit`` and ``_set_status``), split out so the
panel's module stays under the project's 400-line size; the message keeps the ``LogPanel`` translation
context.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtGui import QGuiApplication, QTextCursor, QTextDocument

if TYPE_CHECKING:
    from PySide6.QtWidgets import QLineEdit, QPlainTextEdit


class LogTextActionsMixin:
    """``LogPanel`` supplies the text view, the search field and the status line."""

    view: QPlainTextEdit
    search_edit: QLineEdit
    if TYPE_CHECKING:
        def _set_status(self, text: str) -> None: ...

    def shown_text(self) -> str:
        return self.view.toPlainText()

    def copy_lines(self) -> None:
        cursor = self.view.textCursor()
        text = cursor.selectedText().replace("\u2029", "\n") if cursor.hasSelection() else self.shown_text()
        QGuiApplication.clipboard().setText(text)

    def find_text(self, text: str, backward: bool = False) -> bool:
        if not text:
            return False
        flags = QTextDocument.FindFlag.FindBackward if backward else QTextDocument.FindFlag(0)
        if self.view.find(text, flags):
            return True
        cursor = self.view.textCursor()  # wrap around once
        cursor.movePosition(QTextCursor.MoveOperation.End if backward else QTextCursor.MoveOperation.Start)
        self.view.setTextCursor(cursor)
        return self.view.find(text, flags)

    def _on_search_return_pressed(self) -> None:
        backward = bool(QGuiApplication.keyboardModifiers() & Qt.KeyboardModifier.ShiftModifier)
        if not self.find_text(self.search_edit.text(), backward):
            missing = QCoreApplication.translate("LogPanel", "“%1” is not in the shown lines.")
            self._set_status(missing.replace("%1", self.search_edit.text()))
