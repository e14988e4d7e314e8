"""The client switcher above the list: All / Claude Code / Codex / OpenCode, like CC Switch's app switcher.

Choosing a client shows only the profiles written to it (their targets), so a user who switches Codex
sees Codex's providers; All shows every profile.
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QEvent, Signal, Slot
from PySide6.QtWidgets import QButtonGroup, QHBoxLayout, QToolButton, QWidget

from kvswitch.ui.control.clients import client_label, client_of_target

FILTER_CLIENTS = ("claude", "codex", "opencode")


class ClientFilter(QWidget):
    """Checkable buttons, one checked; ``client`` is None for All.

    Signals:
        client_changed(): another client (or All) was chosen.
    """

    client_changed = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._restyling = False
        self.group = QButtonGroup(self)
        self.group.setExclusive(True)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        self.buttons: dict[str | None, QToolButton] = {}
        for client in (None, *FILTER_CLIENTS):
            button = QToolButton()
            button.setCheckable(True)
            button.setAutoRaise(False)
            button.setText(self.tr("All") if client is None else client_label(client))
            button.setToolTip(self.tr("Every profile") if client is None else
                              self.tr("Only the profiles written to %1").replace("%1", client_label(client)))
            self.group.addButton(button)
            layout.addWidget(button)
            self.buttons[client] = button
        self.buttons[None].setChecked(True)
        self._apply_style()
        self.group.buttonToggled.connect(self._on_group_button_toggled)

    def _apply_style(self) -> None:
        """The chosen client reads at a glance, as a segmented switch does. A style sheet takes the
        palette's colours when it is set, so it is set again after a theme change (else the buttons
        stay in the old theme's colours: light on a dark window)."""
        self.setStyleSheet("")
        self.setStyleSheet("QToolButton { padding: 4px 8px; }"
                           " QToolButton:checked { background: palette(highlight);"
                           " color: palette(highlighted-text); border: 1px solid palette(highlight); }")

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        changes = (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange)
        if event.type() in changes and not self._restyling:
            self._restyling = True
            try:
                self._apply_style()
            finally:
                self._restyling = False

    @property
    def client(self) -> str | None:
        return next((client for client, button in self.buttons.items() if button.isChecked()), None)

    def choose(self, client: str | None) -> None:
        self.buttons[client].setChecked(True)

    def label(self) -> str:
        client = self.client
        return self.tr("All") if client is None else client_label(client)

    def accepts(self, targets: Iterable[str]) -> bool:
        """Whether a profile with these targets is written to the chosen client."""
        client = self.client
        return client is None or any(client_of_target(t) == client for t in targets)

    @Slot(QToolButton, bool)
    def _on_group_button_toggled(self, _button: QToolButton, checked: bool) -> None:
        if checked:
            self.client_changed.emit()
