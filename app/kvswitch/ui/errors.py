"""Unexpected errors: logged, then shown in a dialog with a copyable report that holds no keys.

Expected failures (a bad field, a failed apply) are shown inline by the widgets; this module is the
last line for bugs. ``sys.excepthook`` and ``threading.excepthook`` both end in :func:`report_exception`,
which hops to the GUI thread through a signal because widgets may only be built there. Every dialog
goes through :func:`show_dialog`, which only logs when dialogs are disabled (tests, smoke runs), so a
headless run never blocks on a modal.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import threading
import traceback
from types import TracebackType
from typing import TYPE_CHECKING, Any

from PySide6 import QtCore
from PySide6.QtCore import QCoreApplication, QObject, Signal, Slot

if TYPE_CHECKING:
    from PySide6.QtWidgets import QWidget

from kvswitch import __version__

log = logging.getLogger("kvswitch.ui.errors")

# values never allowed in a report (API keys of the loaded profiles), registered by the window
_SECRETS: set[str] = set()
_KEY_PATTERNS = (
    re.compile(r"\b(sk|pk|rk)-[A-Za-z0-9_\-]{6,}"),
    re.compile(r"(?i)(bearer\s+)[^\s'\"]+"),
    re.compile(r"(?i)((?:api[_-]?key|auth[_-]?token|x-api-key|authorization)['\"]?\s*[:=]\s*['\"]?)[^\s'\",}]+"),
)


def dialogs_enabled() -> bool:
    return not os.environ.get("KVSWITCH_NO_ERROR_DIALOGS")


def register_secrets(values: list[str]) -> None:
    """Remember keys so that no report can ever contain them."""
    _SECRETS.update(v for v in values if v and len(v) >= 4)


def scrub(text: str) -> str:
    """Remove every known key and anything shaped like a credential."""
    for secret in sorted(_SECRETS, key=len, reverse=True):
        text = text.replace(secret, "•••")
    text = _KEY_PATTERNS[0].sub("•••", text)
    for pattern in _KEY_PATTERNS[1:]:
        text = pattern.sub(lambda m: m.group(1) + "•••", text)
    return text


def build_report(exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None,
                 thread_name: str | None = None) -> str:
    import platform  # noqa: PLC0415  (only when there is an error to report; not before the first paint)

    lines = [
        f"KV Switch {__version__}",
        f"Python {platform.python_version()} on {platform.platform()}",
    ]
    try:
        import PySide6  # noqa: PLC0415 - version only

        lines.append(f"PySide6 {PySide6.__version__}")
    except ImportError:
        pass
    if thread_name:
        lines.append(f"Thread: {thread_name}")
    lines.append("")
    lines.extend(traceback.format_exception(exc_type, exc, tb))
    return scrub("\n".join(line.rstrip("\n") for line in lines))


_OPEN_DIALOGS: list[Any] = []


def show_dialog(title: str, summary: str, report: str = "", parent: QWidget | None = None, *,
                modal: bool = False) -> QWidget | None:
    """The one way to pop an error dialog: logs always, shows only when dialogs are enabled.

    ``modal`` blocks until closed (for start-up failures, when there is no window to return to).
    """
    log.error("%s: %s\n%s", title, summary, report)
    if not dialogs_enabled() or QCoreApplication.instance() is None:
        return None
    # Widgets are imported on the first error only: this module is loaded before the window shows.
    from PySide6.QtWidgets import QDialog, QMessageBox  # noqa: PLC0415

    from kvswitch.ui.widgets.error_dialog import ErrorReportDialog  # noqa: PLC0415

    dialog: QWidget
    if report:
        dialog = ErrorReportDialog(title, summary, report, parent)
    else:
        box = QMessageBox(QMessageBox.Icon.Warning, title, summary, QMessageBox.StandardButton.Ok, parent)
        box.setAttribute(QtCore.Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog = box
    _OPEN_DIALOGS.append(dialog)  # keep it alive: a non-modal dialog has no other owner
    dialog.destroyed.connect(lambda *_: _OPEN_DIALOGS.remove(dialog) if dialog in _OPEN_DIALOGS else None)
    if modal and isinstance(dialog, QDialog):
        dialog.exec()
        return None
    dialog.show()
    return dialog


class _Bridge(QObject):
    """Moves reports from any thread to the GUI thread.

    Signals:
        report_arrived(str): a finished, scrubbed report.
    """

    report_arrived = Signal(str)

    @Slot(str)
    def _on_report_arrived(self, report: str) -> None:
        title = QCoreApplication.translate("errors", "KV Switch: unexpected error")
        summary = QCoreApplication.translate(
            "errors", "Something went wrong inside KV Switch. Your files were not changed by this error. "
            "The report below contains no API keys; copy it when you report the problem.")
        show_dialog(title, summary, report)


_BRIDGE: _Bridge | None = None


def report_exception(exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None,
                     thread_name: str | None = None) -> None:
    report = build_report(exc_type, exc, tb, thread_name)
    if _BRIDGE is None:
        log.error("unexpected error\n%s", report)
        return
    _BRIDGE.report_arrived.emit(report)  # queued when emitted off the GUI thread


def _sys_hook(exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
    if issubclass(exc_type, KeyboardInterrupt):
        QCoreApplication.quit()
        return
    report_exception(exc_type, exc, tb)


def _thread_hook(args: threading.ExceptHookArgs) -> None:
    if args.exc_value is None:
        return
    name = args.thread.name if args.thread is not None else None
    report_exception(args.exc_type, args.exc_value, args.exc_traceback, name)


def install_excepthooks() -> None:
    """Route uncaught exceptions (GUI thread and workers) to a dialog instead of a traceback."""
    global _BRIDGE
    if _BRIDGE is None:
        _BRIDGE = _Bridge()
        # Auto connection: queued when a worker thread reports, direct on the GUI thread.
        _BRIDGE.report_arrived.connect(_BRIDGE._on_report_arrived)
    sys.excepthook = _sys_hook
    threading.excepthook = _thread_hook
