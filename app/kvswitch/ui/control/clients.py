"""Which client a verify runs, what it is called, and where its binary is: shared by the controller,
the Verify tab and the tray (the buttons themselves live in ``kvswitch.ui.verify.verify_clients``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication

from kvswitch.core.errors import KvSwitchError

if TYPE_CHECKING:
    from kvswitch.ui.control.controller import AppController

#: the clients offered next to Claude Code, in the order shown
MORE_CLIENTS = ("codex", "opencode")
_LABELS = {"claude": "Claude Code", "codex": "Codex", "opencode": "OpenCode"}


def client_label(client: str) -> str:
    return _LABELS.get(client, client)

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

def cancelled_text(client: str) -> str:
    translate = QCoreApplication.translate
    if client == "claude":
        return translate("AppController", "Verify cancelled; the running Claude Code was stopped.")
    text = translate("VerifyClients", "Verify cancelled; the running %1 was stopped.")
    return text.replace("%1", client_label(client))

