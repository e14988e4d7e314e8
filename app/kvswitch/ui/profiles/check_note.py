"""The result of the editor's backend checks ("Test connection", "Fetch models") as a small card.

A failure in plain black text under the buttons reads like any other label; the verify card and the
message bar show failures tinted red with an icon, the server's own words and a way to try again. This
card does the same for a connection test: tint and icon by outcome, the summary in bold, the server's
message made safe to show (``core.text.printable``, credentials masked by ``core.redact.mask_text``),
the fix, and "Retry".
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QPainter, QPaintEvent, QPalette
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from kvswitch.core.redact import mask_text
from kvswitch.core.text import printable
from kvswitch.ui.cache_state import CacheState
from kvswitch.ui.widgets import icons, theme

#: how much of a server's message is shown (an HTML error page can be long)
SERVER_TEXT_MAX = 400


def safe(text: str, limit: int = SERVER_TEXT_MAX) -> str:
    """A peer's text as the card shows it: no control or bidi characters, no credentials, bounded."""
    shown = mask_text(printable(text, multiline=False)).strip()
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


class CheckNote(QFrame):
    """One check's outcome: ``busy`` / ``info`` plain, ``ok`` green, ``failed`` red with Retry.

    Signals:
        retry_requested(): "Retry" on a failed connection test.
    """

    retry_requested = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("check_note")
        self.state = ""
        self._tint: CacheState | None = None
        self.icon = QLabel()
        self.icon.setFixedSize(20, 20)
        self.title = QLabel()
        self.title.setObjectName("check_title")
        self.title.setWordWrap(True)
        font = self.title.font()
        font.setBold(True)
        self.title.setFont(font)
        self.text = QLabel()
        self.text.setObjectName("backend_result")
        self.text.setWordWrap(True)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.retry_button = QPushButton(self.tr("Retry"))
        self.retry_button.hide()
        self.retry_button.clicked.connect(self.retry_requested)
        words = QVBoxLayout()
        words.setSpacing(4)
        words.addWidget(self.title)
        words.addWidget(self.text)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.setSpacing(8)
        layout.addWidget(self.icon, 0, Qt.AlignmentFlag.AlignTop)
        layout.addLayout(words, 1)
        layout.addWidget(self.retry_button, 0, Qt.AlignmentFlag.AlignTop)
        self.hide()

    def clear(self) -> None:
        self._set("", None, "", "")

    def show_text(self, text: str, busy: bool = False) -> None:
        """A neutral line (``Testing …``, a model count)."""
        self._set("busy" if busy else "info", None, "", text)

    def show_error(self, message: str) -> None:
        """A check that could not run (the engine's message), with Retry."""
        self._set("failed", CacheState.MISS, self.tr("The check failed"), safe(message, 2 * SERVER_TEXT_MAX))

    def show_report(self, report: Any) -> None:
        """A ``ConnectionReport``: its summary, where and how long, the server's words, the fix."""
        from kvswitch.ui.control import engine_text  # noqa: PLC0415 - the engine's words, in the UI language

        words = engine_text.translate
        details = [f"{report.url} · {words(str(report.outcome))} · {report.elapsed_ms} ms"]
        if report.status is not None:
            details[0] += f" · HTTP {report.status}"
        if report.server_message:
            details.append(self.tr("The server said: %1").replace("%1", safe(report.server_message)))
        if report.fix:
            details.append(self.tr("Fix: %1").replace("%1", words(report.fix)))
        if report.ok:
            title = self.tr("Connected: %1").replace("%1", words(report.summary))
            self._set("ok", CacheState.HIT, title, "\n".join(details))
        else:
            title = self.tr("Connection failed: %1").replace("%1", words(report.summary))
            self._set("failed", CacheState.MISS, title, "\n".join(details))

    def _set(self, state: str, tint: CacheState | None, title: str, text: str) -> None:
        self.state = state
        self._tint = tint
        self.title.setText(title)
        self.title.setVisible(bool(title))
        self.text.setText(text)
        self.retry_button.setVisible(state == "failed")
        name = {"ok": "circle-check", "failed": "circle-alert"}.get(state)
        pixmap = None
        if name is not None and tint is not None:
            color = theme.state_color(tint, self.palette()).name()
            pixmap = icons.tool_icon(name, 20, color=color).pixmap(20, 20)
        self.icon.setVisible(pixmap is not None)
        if pixmap is not None:
            self.icon.setPixmap(pixmap)
        if tint is not None:  # the title in the state's colour, readable on the tint (theme.state_color)
            pal = self.title.palette()
            pal.setColor(QPalette.ColorRole.WindowText, theme.state_color(tint, self.palette()))
            self.title.setPalette(pal)
        self.setVisible(bool(state))
        self.update()

    # -- Qt overrides ------------------------------------------------------------------------------

    def paintEvent(self, event: QPaintEvent) -> None:
        """The tint is computed from the palette at paint time, so it follows a dark/light switch."""
        if self._tint is not None:
            painter = QPainter(self)
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            painter.setPen(theme.state_color(self._tint, self.palette()))
            painter.setBrush(theme.tinted_background(self._tint, self.palette()))
            painter.drawRoundedRect(self.rect().adjusted(0, 0, -1, -1), 6, 6)
            painter.end()
        super().paintEvent(event)
