"""What the live panel says about the sources it follows, and its search: kept out of ``log_panel``
so that module stays a size one can read. Texts keep the ``LogPanel`` translation context."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QTextCursor, QTextDocument

if TYPE_CHECKING:
    from PySide6.QtWidgets import QPlainTextEdit

    from kvswitch.core.models import LogSource


def _tr(text: str) -> str:
    return QCoreApplication.translate("LogPanel", text)


def bind_status(source: LogSource | None, kind_hint: str | None, metrics_url: str | None) -> str:
    """The status line when the panel starts following: the log, vLLM's counters, or why nothing."""
    if source is not None:
        return _tr("Opening %1…").replace("%1", describe(source))
    if kind_hint is not None and not is_local_kind(kind_hint):
        return _tr("A cloud API has no server log by nature: the vendor runs the server. Its requests "
                   "through the gateway, with their cache verdicts, are in the Usage tab.")
    if metrics_url is not None:
        return _tr("Reading vLLM's counters at %1 (its log has no per-request cache line)").replace(
            "%1", metrics_url)
    return _tr("No log source: set one in the active profile's “Server log” field.")


def find_in_view(view: QPlainTextEdit, text: str, backward: bool = False) -> bool:
    """Select the next (or previous) ``text`` in the view, wrapping around once."""
    if not text:
        return False
    flags = QTextDocument.FindFlag.FindBackward if backward else QTextDocument.FindFlag(0)
    if view.find(text, flags):
        return True
    cursor = view.textCursor()
    cursor.movePosition(QTextCursor.MoveOperation.End if backward else QTextCursor.MoveOperation.Start)
    view.setTextCursor(cursor)
    return view.find(text, flags)


def describe(source: LogSource) -> str:
    kind = getattr(source, "kind", "")
    if kind == "journald":
        return _tr("journald unit %1").replace("%1", str(source.unit))
    if kind == "command":
        return " ".join(source.command or [])
    return str(getattr(source, "path", "") or kind)


def is_local_kind(kind: str) -> bool:
    """Whether a profile of this kind talks to a server on this machine (one with a log to follow)."""
    from kvswitch.core.models import ProfileKind  # noqa: PLC0415

    try:
        return ProfileKind(kind).is_local
    except ValueError:
        return True
