"""One session in the Sessions tab: its totals and cost, the per-turn chart, the losses in words, and
the actions (Resume in a terminal, Copy command, Export to Markdown).

The losses are listed with the translated labels of their causes and the engine's own words
(``Loss.detail``: which model, which message, how long idle), the tokens processed again and what that
cost. The clients' files give no transcript in ``kvswitch.sessions``' API, so none is shown here.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from kvswitch.ui.control.clients import client_label
from kvswitch.ui.control.reason_words import looks_like_text, reason_text
from kvswitch.ui.control.session_words import causes_text
from kvswitch.ui.control.shown_names import verdict_word
from kvswitch.ui.i18n import fill
from kvswitch.ui.sessions.turn_chart import TurnChart


def _when(epoch: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(epoch)) if epoch else "—"


class SessionDetail(QWidget):
    """``show_session(summary, turns)`` fills it; the buttons ask the tab by signal.

    Signals:
        resume_requested(object): the shown ``SessionSummary`` (Resume).
        copy_requested(object): the same (Copy command).
        export_requested(object, object): the summary and its turns (Export to Markdown).
    """

    resume_requested = Signal(object)
    copy_requested = Signal(object)
    export_requested = Signal(object, object)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.summary: Any = None
        self.turns: list[Any] = []
        self.title = QLabel()
        self.title.setWordWrap(True)
        font = self.title.font()
        font.setBold(True)
        self.title.setFont(font)
        self.facts = QLabel()
        self.facts.setWordWrap(True)
        self.facts.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.chart = TurnChart()
        self.losses_label = QLabel(self.tr("Where the cache was lost"))
        self.losses = QListWidget()
        self.losses.setWordWrap(True)
        self.resume_button = QPushButton(self.tr("Resume in a terminal"))
        self.copy_button = QPushButton(self.tr("Copy command"))
        self.export_button = QPushButton(self.tr("Export to Markdown…"))
        self.resume_button.setToolTip(self.tr("Opens your terminal in the project directory and resumes "
                                              "the session there"))
        buttons = QHBoxLayout()
        for button in (self.resume_button, self.copy_button, self.export_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addWidget(self.facts)
        layout.addLayout(buttons)
        layout.addWidget(self.chart)
        layout.addWidget(self.losses_label)
        layout.addWidget(self.losses, 1)
        self.resume_button.clicked.connect(self._on_resume_button_clicked)
        self.copy_button.clicked.connect(self._on_copy_button_clicked)
        self.export_button.clicked.connect(self._on_export_button_clicked)
        self.show_empty()

    def show_empty(self, text: str | None = None) -> None:
        self.summary, self.turns = None, []
        self.title.setText(text or self.tr("Pick a session to see its calls and where the cache was lost."))
        self.facts.clear()
        self.chart.set_turns([])
        self.losses.clear()
        for button in (self.resume_button, self.copy_button, self.export_button):
            button.setEnabled(False)

    def show_session(self, summary: Any, turns: list[Any]) -> None:
        self.summary, self.turns = summary, list(turns)
        self.title.setText(summary.title or summary.session_id)
        first = self.tr("%1 · %2 · %3 to %4 · %5 calls (%6 by subagents) · models %7")
        second = self.tr("%1 prompt tokens: %2 read from the cache (%3), %4 written, %5 new · "
                         "%6 output tokens · cost at list prices %7")
        facts = fill(first, client_label(summary.client), summary.project or "—", _when(summary.first_time),
                     _when(summary.last_time), f"{summary.calls:,}", f"{summary.subagent_calls:,}",
                     ", ".join(summary.models) or "—")
        written = summary.cache_write_5m + summary.cache_write_1h
        facts += "\n" + fill(second, f"{summary.prompt:,}", f"{summary.cache_read:,}",
                             f"{summary.hit_rate:.0%}", f"{written:,}", f"{summary.fresh:,}",
                             f"{summary.output:,}", f"${summary.cost:.4f}")
        if summary.unpriced:
            facts += "\n" + self.tr("No list price for %1: counted as free (a local server).").replace(
                "%1", ", ".join(summary.unpriced))
        for note in summary.notes:
            facts += "\n" + note
        self.facts.setText(facts)
        self.chart.set_turns(self.turns)
        self.losses.clear()
        for turn in self.turns:
            if turn.loss is not None:
                self.losses.addItem(self.loss_text(turn))
            if getattr(turn, "gateway", None) is not None and turn.gateway.reason:
                self.losses.addItem(self.gateway_text(turn))
        if not self.losses.count():
            self.losses.addItem(self.tr("No call lost the cache."))
        for button in (self.resume_button, self.copy_button, self.export_button):
            button.setEnabled(True)
        self.resume_button.setEnabled(bool(summary.resume_command))
        self.copy_button.setEnabled(bool(summary.resume_command))

    def loss_text(self, turn: Any) -> str:
        """One loss in words: the call, its causes (translated), the tokens and money, the engine's detail."""
        loss = turn.loss
        text = self.tr("Call %1 at %2 — %3: %4 tokens processed again (%5). %6")
        values = (str(turn.index + 1), time.strftime("%H:%M:%S", time.localtime(turn.call.time)),
                  causes_text(loss.causes), f"{loss.lost_tokens:,}", f"${loss.lost_cost:.4f}", loss.detail)
        return fill(text, *values)

    def gateway_text(self, turn: Any) -> str:
        """What the gateway recorded for the same request, byte-level, in words: the verdict, the reason,
        where the prompt first differed, what the change looks like and the setting that avoids it."""
        seen = turn.gateway
        where = ", ".join(filter(None, [seen.part, looks_like_text(seen.looks_like) or seen.looks_like]))
        text = fill(self.tr("Call %1 at %2 — the gateway recorded %3: %4"), str(turn.index + 1),
                    time.strftime("%H:%M:%S", time.localtime(seen.time)), verdict_word(seen.verdict),
                    reason_text(seen.reason))
        if where:
            text += " (" + where + ")"
        if seen.fix:
            settings = ", ".join(f"{key}={value}" for key, value in seen.fix.items())
            text += ". " + fill(self.tr("Fix: set %1 in the profile's environment"), settings)
        return text

    def suggested_name(self) -> str:
        """The export's default file name: the client and the session id's start."""
        s = self.summary
        return f"session-{s.client}-{s.session_id[:12]}.md" if s is not None else "session.md"

    @Slot()
    def _on_resume_button_clicked(self) -> None:
        if self.summary is not None:
            self.resume_requested.emit(self.summary)

    @Slot()
    def _on_copy_button_clicked(self) -> None:
        if self.summary is not None:
            self.copy_requested.emit(self.summary)

    @Slot()
    def _on_export_button_clicked(self) -> None:
        if self.summary is not None:
            self.export_requested.emit(self.summary, self.turns)


def default_export_dir() -> Path:
    """Where the export dialog opens: the Documents folder when there is one, else home."""
    documents = Path.home() / "Documents"
    return documents if documents.is_dir() else Path.home()
