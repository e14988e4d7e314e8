"""Verify with Codex and OpenCode, beside "Verify with Claude Code": the buttons in the Verify tab and the
tray's entries (which client and where its binary is: ``kvswitch.ui.control.clients``).

The run itself is the CLI's (``kvswitch verify --client codex|opencode``: ``verify.records.
run_client_check`` with the client's name), started by ``AppController.start_client_verify`` on a worker.
The binary is the one ``KVSWITCH_<CLIENT>_BIN`` names, else the one on PATH (the CLI's ``--codex-bin`` /
``--opencode-bin``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QBoxLayout, QLayout, QMenu, QPushButton, QWidget

from kvswitch.ui.control.clients import MORE_CLIENTS, client_label
from kvswitch.ui.qtcompat import connect_for

if TYPE_CHECKING:
    from kvswitch.ui.control.controller import AppController


def _button_text(client: str) -> str:
    translate = QCoreApplication.translate
    if client == "codex":
        return translate("VerifyClients", "Verify with Codex")
    return translate("VerifyClients", "Verify with OpenCode")


def _layout_holding(layout: QLayout | None, widget: QWidget) -> QBoxLayout | None:
    """The box layout (at any depth) that holds ``widget``."""
    if layout is None:
        return None
    for index in range(layout.count()):
        item = layout.itemAt(index)
        if item is None:
            continue
        if item.widget() is widget and isinstance(layout, QBoxLayout):
            return layout
        found = _layout_holding(item.layout(), widget)
        if found is not None:
            return found
    return None


def add_client_buttons(card: Any, controller: AppController) -> dict[str, QPushButton]:
    """"Verify with Codex" and "Verify with OpenCode" right after the card's Claude Code button; they are
    disabled while any verify runs, as that button is."""
    row = _layout_holding(card.layout(), card.client_button)
    buttons: dict[str, QPushButton] = {}
    at = row.indexOf(card.client_button) + 1 if row is not None else 0
    for offset, client in enumerate(MORE_CLIENTS):
        button = QPushButton(_button_text(client))
        button.setToolTip(QCoreApplication.translate(
            "VerifyClients", "Runs your installed %1 headless through the active profile (two turns of one "
            "conversation, then a new one) and judges every turn by the server's own numbers.")
            .replace("%1", client_label(client)))
        button.clicked.connect(lambda _checked=False, c=client: controller.start_client_verify(client=c))
        if row is not None:
            row.insertWidget(at + offset, button)
        buttons[client] = button

    def enable(on: bool) -> Callable[..., None]:
        def set_enabled(*_args: object) -> None:
            for button in buttons.values():
                button.setEnabled(on)

        return set_enabled

    connect_for(card, controller.verify_started, enable(False))
    for done in (controller.verify_finished, controller.verify_failed, controller.client_verify_finished):
        connect_for(card, done, enable(True))
    card.more_client_buttons = buttons
    return buttons


def add_client_verify_actions(menu: QMenu, controller: AppController, enabled: bool) -> list[Any]:
    """The tray's "Verify with Codex" / "Verify with OpenCode" (after "Verify with Claude Code")."""
    actions = []
    for client in MORE_CLIENTS:
        action = menu.addAction(_button_text(client))
        action.setEnabled(enabled)
        action.triggered.connect(lambda _checked=False, c=client: controller.start_client_verify(client=c))
        actions.append(action)
    return actions

