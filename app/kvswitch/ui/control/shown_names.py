"""Names the window shows for values the engines record in English: cache verdicts (``HIT`` → 命中 in
zh_CN) and the client a request came from (the gateway records ``claude-code``, ``codex``, ``opencode``
from the User-Agent; the window says the product's name, as the cards and the tray do).

Shared by the cards, the tray, the Usage tab and Verify, so one word is used for one thing everywhere.
"""

from __future__ import annotations

from PySide6.QtWidgets import QApplication

from kvswitch.ui.control.clients import client_name

_VERDICTS = ("HIT", "PARTIAL", "MISS", "COLD", "ERROR", "UNKNOWN")
#: what the gateway records as a request's client (its ``client`` and ``client_name`` columns)
_RECORDED_CLIENTS = {"claude": "claude", "claude-code": "claude", "claude-cli": "claude", "codex": "codex",
                     "opencode": "opencode"}


def verdict_word(verdict: object) -> str:
    """A verdict as the window says it, in the UI language (``HIT`` → ``命中``)."""
    text = str(getattr(verdict, "value", verdict) or "").upper()
    if "." in text:
        text = text.rsplit(".", 1)[1]
    translate = QApplication.translate
    words = {"HIT": translate("Verdicts", "HIT"), "PARTIAL": translate("Verdicts", "PARTIAL"),
             "MISS": translate("Verdicts", "MISS"), "COLD": translate("Verdicts", "COLD"),
             "ERROR": translate("Verdicts", "ERROR"), "UNKNOWN": translate("Verdicts", "UNKNOWN")}
    return words.get(text, str(verdict)) if text in _VERDICTS else str(verdict)


def recorded_client_name(recorded: str) -> str:
    """``claude-code`` → ``Claude Code``; a client the window does not know is shown as recorded."""
    client = _RECORDED_CLIENTS.get(recorded.strip().lower())
    return client_name(client) if client else recorded
