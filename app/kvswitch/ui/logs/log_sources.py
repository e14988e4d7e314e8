"""What the live panel says about the sources it follows: kept out of ``log_panel``
so that module stays a size one can read. Texts keep the ``LogPanel`` translation context."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication

#: the name lupdate looks for: each text below is in the ``LogPanel`` context of the translations
translate = QCoreApplication.translate

if TYPE_CHECKING:

    from kvswitch.core.models import LogSource


def bind_status(source: LogSource | None, kind_hint: str | None, metrics_url: str | None) -> str:
    """The status line when the panel starts following: the log, the server's counters, or why nothing."""
    if source is not None:
        return translate("LogPanel", "Opening %1…").replace("%1", describe(source))
    if kind_hint is not None and not is_local_kind(kind_hint):
        return translate("LogPanel", "A cloud API has no server log by nature: the vendor runs the "
                                     "server. Its requests through the gateway, with their cache "
                                     "verdicts, are in the Usage tab.")
    if metrics_url is not None:
        return translate("LogPanel", "Reading the server's counters at %1 (its log has no per-request "
                                     "cache line)").replace("%1", metrics_url)
    return translate("LogPanel", "No log source: set one in the active profile's “Server log” "
                                 "field.")


def describe(source: LogSource) -> str:
    kind = getattr(source, "kind", "")
    if kind == "journald":
        return translate("LogPanel", "journald unit %1").replace("%1", str(source.unit))
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
