"""An inline message strip above the tabs: expected failures are shown here, never in a modal."""

from __future__ import annotations

from PySide6.QtCore import Qt, Slot
from PySide6.QtGui import QPainter, QPaintEvent, QPalette
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QWidget

from kvswitch.ui import theme


class MessageBar(QFrame):
    """One message at a time, tinted by severity; the close button hides it."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self._state: theme.CacheState | None = None
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 4, 4)
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.label, 1)
        close = QToolButton()
        close.setText("✕")
        close.setAutoRaise(True)
        close.setToolTip(self.tr("Dismiss"))
        close.clicked.connect(self.hide)
        layout.addWidget(close, 0, Qt.AlignmentFlag.AlignTop)
        self.level = ""
        self.hide()

    @property
    def text(self) -> str:
        return "" if self.isHidden() else self.label.text()

    def _show(self, level: str, text: str, state: theme.CacheState | None) -> None:
        self.level = level
        self._state = state
        self.label.setText(text)
        self.show()
        self.update()

    @Slot(str)
    def show_error(self, text: str) -> None:
        self._show("error", text, theme.CacheState.MISS)

    @Slot(str)
    def show_success(self, text: str) -> None:
        self._show("success", text, theme.CacheState.HIT)

    @Slot(str)
    def show_info(self, text: str) -> None:
        self._show("info", text, None)

    # -- Qt overrides ------------------------------------------------------------------------------

    def paintEvent(self, event: QPaintEvent) -> None:
        """The tint is computed from the palette at paint time, so it follows a dark/light switch."""
        pal = self.palette()
        state = self._state
        color = (
            pal.color(QPalette.ColorRole.AlternateBase) if state is None else theme.tinted_background(state)
        )
        painter = QPainter(self)
        painter.fillRect(self.rect(), color)
        painter.end()
        super().paintEvent(event)
