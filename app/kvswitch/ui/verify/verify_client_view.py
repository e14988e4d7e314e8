"""The per-turn verdicts of a "Verify with Claude Code" run: what each turn reused, cost, and why.

Cold (the session's first request) and shared prefix (a new conversation reusing the system prompt and
tools it shares with the last one) are expected, so they are drawn neutral, never red.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from kvswitch.ui.control import engine_text
from kvswitch.ui.widgets import theme

if TYPE_CHECKING:
    from kvswitch.verify.client_report import ClientReport, TurnVerdict

#: a turn's verdict → the cache state whose colour it wears (the neutral ones are expected)
TURN_STATES = {"hit": "hit", "partial": "partial", "miss": "miss", "cold": "unknown",
               "shared_prefix": "unknown", "unknown": "unknown"}


def _count(value: int | None) -> str:
    return "–" if value is None else f"{value:,}"


class ClientReportView(QWidget):
    """A table of turns plus the summary lines; filled by ``show_report``."""

    COLUMNS = ("conversation", "turn", "verdict", "reused", "re-processed", "cost", "TTFB", "why")

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.report: ClientReport | None = None
        self.summary_label = QLabel()
        self.summary_label.setWordWrap(True)
        self.summary_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.table = QTableWidget(0, len(self.COLUMNS))
        self.table.setHorizontalHeaderLabels([
            self.tr("Conversation"), self.tr("Turn"), self.tr("Verdict"), self.tr("Reused"),
            self.tr("Re-processed"), self.tr("Cost"), self.tr("First byte"), self.tr("Why")])
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.summary_label)
        layout.addWidget(self.table)

    def verdict_text(self, verdict: str) -> str:
        names = {"hit": self.tr("hit"), "partial": self.tr("partial"), "miss": self.tr("miss"),
                 "cold": self.tr("cold"), "shared_prefix": self.tr("shared prefix"),
                 "unknown": self.tr("unknown")}
        return names.get(verdict, verdict)

    def show_report(self, report: ClientReport) -> None:
        self.report = report
        self.table.setRowCount(len(report.turns))
        for row, turn in enumerate(report.turns):
            for column, text in enumerate(self._cells(turn)):
                item = QTableWidgetItem(text)
                if column == 2:
                    item.setForeground(QBrush(theme.state_color(TURN_STATES.get(turn.verdict, "unknown"))))
                    item.setData(Qt.ItemDataRole.UserRole, turn.verdict)
                self.table.setItem(row, column, item)
        self.summary_label.setText(self._summary(report))

    def _cells(self, turn: TurnVerdict) -> list[str]:
        reused = _count(turn.cached_tokens) + " / " + _count(turn.prompt_tokens)
        cost = "–" if turn.cost_ms is None else f"~{turn.cost_ms / 1000:.1f} s"
        ttfb = "–" if turn.prompt_ms is None else f"{turn.prompt_ms:,.0f} ms"
        why = ""
        diagnosis: dict[str, Any] | None = turn.diagnosis
        if diagnosis and (turn.lost or turn.verdict == "shared_prefix"):
            why = engine_text.translate(str(diagnosis.get("cause_text") or ""))
        return [str(turn.conversation), str(turn.turn), self.verdict_text(turn.verdict), reused,
                _count(turn.reprocessed_tokens), cost, ttfb, why]

    def _summary(self, report: ClientReport) -> str:
        lines = [self.tr("Claude Code %1 through “%2”: %3").replace("%1", report.session.version)
                 .replace("%2", report.profile).replace("%3", self.verdict_text(report.verdict).upper())]
        inside = [t for t in report.turns if t.conversation == 1 and t.turn > 1
                  and t.reprocessed_tokens is not None]
        if inside:
            worst = max(inside, key=lambda t: t.reprocessed_tokens or 0)
            line = self.tr("Per turn inside a conversation: up to %1 tokens re-processed") \
                .replace("%1", f"{worst.reprocessed_tokens:,}")
            if worst.cost_ms:
                line += self.tr(", about %1 s").replace("%1", f"{worst.cost_ms / 1000:.1f}")
            lines.append(line + ".")
        new = next((t for t in report.turns if t.conversation == 2), None)
        if new is not None and new.prompt_tokens:
            lines.append(self.tr("Per new conversation: %1 of %2 tokens reused.")
                         .replace("%1", _count(new.cached_tokens)).replace("%2", _count(new.prompt_tokens)))
        return "\n".join(lines)
