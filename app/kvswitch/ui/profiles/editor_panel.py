"""The editor as a panel beside the list: a header naming what is edited (and whether edits are unsaved),
the form in a scroll area, and Save / Revert pinned below it so Save is never below the fold.

The provider list is the main view; the form opens beside it when asked for (Edit, New, a gallery pick,
the Verify card's "Edit profile") and closes again, so a 20-field form never takes three quarters of
the window. While there is no profile it shows the welcome instead.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QFont, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from kvswitch.ui.widgets import theme


class EditorPanel(QFrame):
    """Header, the scrolled form and the pinned buttons; ``attach`` moves the editor's Save and Revert here.

    Signals:
        close_requested(): the × was clicked (the window hides the panel).
    """

    close_requested = Signal()

    def __init__(self, page: QScrollArea, parent: QWidget | None = None):
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.page = page
        self.title = QLabel()
        font = QFont(self.title.font())
        font.setBold(True)
        self.title.setFont(font)
        self.unsaved_label = QLabel(self.tr("● unsaved changes"))
        self.unsaved_label.setToolTip(self.tr("Save with Ctrl+S, or Revert"))
        self.unsaved_label.hide()
        self.close_button = QToolButton()
        self.close_button.setText("×")
        self.close_button.setToolTip(self.tr("Close the editor (Esc)"))
        self.close_button.setAccessibleName(self.tr("Close the editor"))
        header = QHBoxLayout()
        header.setContentsMargins(8, 4, 4, 0)
        header.addWidget(self.title, 1)
        header.addWidget(self.unsaved_label)
        header.addWidget(self.close_button)
        self.footer = QHBoxLayout()
        self.footer.setContentsMargins(8, 4, 8, 8)
        self.footer.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addLayout(header)
        layout.addWidget(page, 1)
        layout.addLayout(self.footer)
        self.close_button.clicked.connect(self.close_requested)
        escape = QShortcut(QKeySequence(Qt.Key.Key_Escape), self,
                           context=Qt.ShortcutContext.WidgetWithChildrenShortcut)
        escape.activated.connect(self.close_requested)
        self.setMinimumWidth(360)

    def attach(self, editor: QWidget) -> None:
        """Take the editor's Save and Revert into the pinned footer and follow its unsaved state."""
        for name in ("revert_button", "save_button"):
            button = getattr(editor, name, None)
            if isinstance(button, QPushButton):
                self.footer.addWidget(button)
        dirty = getattr(editor, "dirty_changed", None)
        if dirty is not None:
            dirty.connect(self._on_editor_dirty_changed)
        self.footer_buttons_visible(False)

    def footer_buttons_visible(self, shown: bool) -> None:
        """Save and Revert belong to the form: hidden while the welcome shows."""
        for index in range(self.footer.count()):
            item = self.footer.itemAt(index)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.setVisible(shown)

    def set_title(self, text: str) -> None:
        self.title.setText(text)

    @Slot(bool)
    def _on_editor_dirty_changed(self, dirty: bool) -> None:
        self.unsaved_label.setVisible(dirty)
        color = theme.state_color(theme.CacheState.PARTIAL, self.palette())
        from kvswitch.ui.widgets.appearance import readable  # noqa: PLC0415

        shown = readable(color, self.palette().color(self.backgroundRole()))
        self.unsaved_label.setStyleSheet(f"color: {shown.name()};")
