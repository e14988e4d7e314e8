"""The words the Sessions view and the tray use for a session's cache losses, in the UI language.

``kvswitch.sessions`` names each loss's causes by key (``Loss.causes``) and explains it in English with
the specifics the files give (``Loss.detail``: which tools, which message, how long idle). The keys get a
translated label here, shared by the view, the Markdown export and the tray alert so they never differ.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication


def cause_label(cause: str) -> str:
    """The translated label of a loss cause key (``Loss.causes``); an unknown key is shown as it is."""
    translate = QCoreApplication.translate
    labels = {
        "idle": translate("SessionWords", "idle past the cache's lifetime"),
        "model_switched": translate("SessionWords", "model switched"),
        "compacted": translate("SessionWords", "conversation compacted"),
        "new_process": translate("SessionWords", "resumed in a new process"),
        "version_changed": translate("SessionWords", "client version changed"),
        "subagent": translate("SessionWords", "subagent"),
        "system_changed": translate("SessionWords", "system prompt or tools changed"),
        "messages_changed": translate("SessionWords", "earlier messages changed"),
        "unknown": translate("SessionWords", "cause unknown"),
    }
    return labels.get(cause, cause)


def causes_text(causes: tuple[str, ...]) -> str:
    """All causes of a loss, the main one first, joined for a table cell or a sentence."""
    return ", ".join(cause_label(cause) for cause in causes)


