"""Verify with Codex and OpenCode, beside "Verify with Claude Code": the buttons in the Verify tab, the
tray's entries, and finding the client binary to run.

The run itself is the CLI's (``kvswitch verify --client codex|opencode``: ``verify.records.
run_client_check`` with the client's name), started by ``AppController.start_client_verify`` on a worker.
The binary is the one ``KVSWITCH_<CLIENT>_BIN`` names, else the one on PATH (the CLI's ``--codex-bin`` /
``--opencode-bin``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QBoxLayout, QLayout, QMenu, QPushButton, QWidget

from kvswitch.core.errors import KvSwitchError

if TYPE_CHECKING:
    from kvswitch.ui.controller import AppController

#: the clients offered next to Claude Code, in the order shown
MORE_CLIENTS = ("codex", "opencode")
_LABELS = {"claude": "Claude Code", "codex": "Codex", "opencode": "OpenCode"}


def client_label(client: str) -> str:
    return _LABELS.get(client, client)


def _button_text(client: str) -> str:
    translate = QCoreApplication.translate
    if client == "codex":
        return translate("VerifyClients", "Verify with Codex")
    return translate("VerifyClients", "Verify with OpenCode")


def client_binary_option(controller: AppController, client: str) -> str | None:
    """The binary the user chose for a client (``claude_bin`` or ``KVSWITCH_<CLIENT>_BIN``); None: PATH."""
    if client == "claude":
        return controller.claude_bin
    return os.environ.get(f"KVSWITCH_{client.upper()}_BIN") or None


def find_client_binary(controller: AppController, name: str, client: str) -> Path | None:
    """The client to run, or None after ``verify_failed`` said why there is none."""
    from kvswitch.verify.client_run import ClientMissing, find_client  # noqa: PLC0415

    try:
        return find_client(client, client_binary_option(controller, client))
    except ClientMissing as exc:
        controller.verifying = name
        controller.verify_kind = "client"
        if client == "claude":
            text = QCoreApplication.translate(
                "AppController", "Claude Code is not installed here (no “claude” on PATH), so nothing was "
                "verified. Install Claude Code, or use “Verify cache” for the synthetic check.")
        else:
            text = QCoreApplication.translate("VerifyClients", "Nothing was verified: %1")
            text = text.replace("%1", str(exc))
        controller.verify_failed.emit(text)
    except KvSwitchError as exc:
        controller.verify_failed.emit(str(exc))
    return None


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

    controller.verify_started.connect(enable(False))
    for done in (controller.verify_finished, controller.verify_failed, controller.client_verify_finished):
        done.connect(enable(True))
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


def cancelled_text(client: str) -> str:
    translate = QCoreApplication.translate
    if client == "claude":
        return translate("AppController", "Verify cancelled; the running Claude Code was stopped.")
    text = translate("VerifyClients", "Verify cancelled; the running %1 was stopped.")
    return text.replace("%1", client_label(client))
