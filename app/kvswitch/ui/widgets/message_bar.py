"""An inline message strip above the tabs: expected failures are shown here, never in a modal."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import Qt, Slot
from PySide6.QtGui import QPainter, QPaintEvent, QPalette
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QToolButton, QWidget

from kvswitch.ui.widgets import appearance, theme

#: a button the message offers: (key, text, what it does)
Action = tuple[str, str, Callable[[], object]]


class MessageBar(QFrame):
    """One message at a time, tinted by severity, with up to a few one-click actions ("Undo").

    The close button hides it; ``action_buttons`` holds the buttons of the message shown now, by key.
    """

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
        self._actions_row = QHBoxLayout()
        self._actions_row.setSpacing(8)
        layout.addLayout(self._actions_row)
        self.action_buttons: dict[str, QPushButton] = {}
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

    def _show(self, level: str, text: str, state: theme.CacheState | None,
              actions: Sequence[Action] = ()) -> None:
        self.level = level
        self._state = state
        self.label.setText(text)
        self._set_actions(actions)
        self.show()
        self.update()

    def _set_actions(self, actions: Sequence[Action]) -> None:
        for button in self.action_buttons.values():
            self._actions_row.removeWidget(button)
            button.deleteLater()
        self.action_buttons = {}
        for key, label, run in actions:
            button = QPushButton(label)
            button.setObjectName(f"message_action_{key}")
            button.setFlat(True)
            button.setCursor(Qt.CursorShape.PointingHandCursor)
            appearance.style_link_button(button)
            button.clicked.connect(lambda _checked=False, fn=run: self._on_action_clicked(fn))
            self._actions_row.addWidget(button, 0, Qt.AlignmentFlag.AlignTop)
            self.action_buttons[key] = button

    def _on_action_clicked(self, run: Callable[[], object]) -> None:
        self.hide()  # the action's own outcome (a new message) replaces this one
        run()

    @Slot(str)
    def show_error(self, text: str, actions: Sequence[Action] = ()) -> None:
        self._show("error", text, theme.CacheState.MISS, actions)

    @Slot(str)
    def show_success(self, text: str, actions: Sequence[Action] = ()) -> None:
        self._show("success", text, theme.CacheState.HIT, actions)

    @Slot(str)
    def show_warning(self, text: str, actions: Sequence[Action] = ()) -> None:
        self._show("warning", text, theme.CacheState.PARTIAL, actions)

    @Slot(str)
    def show_info(self, text: str, actions: Sequence[Action] = ()) -> None:
        self._show("info", text, None, actions)

    # -- Qt overrides ------------------------------------------------------------------------------

    def paintEvent(self, event: QPaintEvent) -> None:
        """The tint is computed from the palette at paint time, so it follows a dark/light switch."""
        pal = self.palette()
        state = self._state
        color = (pal.color(QPalette.ColorRole.AlternateBase) if state is None
                 else theme.tinted_background(state))
        painter = QPainter(self)
        painter.fillRect(self.rect(), color)
        painter.end()
        super().paintEvent(event)
