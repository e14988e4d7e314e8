"""The verify result card: verdict, numbers, the evidence used, and the diagnosis with its fix.

While a verify runs it shows progress and a Cancel button; the work itself runs in the controller's
background task, so this widget only displays what it is given.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, Qt, Signal, Slot
from PySide6.QtGui import QFont, QPalette
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from kvswitch.ui.cache_state import verify_state
from kvswitch.ui.control import engine_text
from kvswitch.ui.qtcompat import connect_for
from kvswitch.ui.verify.verify_client_view import ClientReportView
from kvswitch.ui.verify.verify_history import VerifyHistoryPanel
from kvswitch.ui.widgets import theme

if TYPE_CHECKING:
    from kvswitch.ui.control.controller import AppController
    from kvswitch.verify.client_report import ClientReport
    from kvswitch.verify.result import VerifyResult


def _fmt_ms(value: float | None) -> str:
    return "–" if value is None else f"{value:,.0f} ms"


class VerifyCard(QWidget):
    """Shows one verify at a time.

    Signals:
        verify_requested(): the user asked for a (new) verify.
        client_verify_requested(): the user asked to verify with their own Claude Code.
        cancel_requested(): the user cancelled the running verify.
        fix_requested(str, dict): add the diagnosis' fix env to a profile (name, env).
        edit_requested(): after a failure, the user wants to correct the profile.
    """

    verify_requested = Signal()
    client_verify_requested = Signal()
    cancel_requested = Signal()
    fix_requested = Signal(str, dict)
    edit_requested = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._fix_env: dict[str, str] | None = None
        self._state: theme.CacheState | None = None
        self._profile_name: str | None = None
        self.result: VerifyResult | None = None

        self.verify_button = QPushButton(self.tr("Verify cache"))
        self.client_button = QPushButton(self.tr("Verify with Claude Code"))
        self.client_button.setToolTip(self.tr("Runs your installed Claude Code headless through the "
                                              "profile (two conversations, four turns) and judges every "
                                              "turn with the server's own numbers."))
        self.cancel_button = QPushButton(self.tr("Cancel"))
        self.cancel_button.hide()
        self.progress = QProgressBar()
        self.progress.setRange(0, 100)
        self.progress.hide()
        self.progress_label = QLabel()
        intro = QLabel(self.tr("Sends the same long prompt twice to the active profile's server and reads "
                               "the server's own numbers: does the second request reuse the first one's "
                               "KV cache?"))
        intro.setWordWrap(True)

        self.card = QFrame()
        self.card.setFrameShape(QFrame.Shape.StyledPanel)
        self.card.setAutoFillBackground(True)
        self.verdict_label = QLabel()
        font = QFont(self.verdict_label.font())
        font.setPointSizeF(font.pointSizeF() * 1.6)
        font.setBold(True)
        self.verdict_label.setFont(font)
        self.message_label = QLabel()
        self.message_label.setWordWrap(True)
        self.cached_value = QLabel()
        self.reuse_value = QLabel()
        self.ttft_value = QLabel()
        self.evidence_value = QLabel()
        self.evidence_value.setWordWrap(True)
        # its wrapped lines decide its height: the history below gives way first, never the evidence
        self.evidence_value.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.MinimumExpanding)
        self.evidence_value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.diagnosis_label = QLabel()
        self.diagnosis_label.setWordWrap(True)
        self.diagnosis_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.fix_button = QPushButton()
        self.fix_button.hide()
        # a failed verify offers the two ways on: try again, or correct the profile
        self.retry_button = QPushButton(self.tr("Retry"))
        self.edit_button = QPushButton(self.tr("Edit profile"))
        self.retry_button.hide()
        self.edit_button.hide()
        self.client_view = ClientReportView()
        self.client_view.hide()
        self.history = VerifyHistoryPanel()
        grid = QGridLayout()
        self.grid_box = QWidget()
        self.grid_box.setLayout(grid)
        grid.setContentsMargins(0, 0, 0, 0)
        self.replay_value = QLabel()
        self.replay_value.setWordWrap(True)
        rows = ((self.tr("Cached tokens"), self.cached_value), (self.tr("Reuse"), self.reuse_value),
                (self.tr("Time to first token"), self.ttft_value), (self.tr("Evidence"), self.evidence_value),
                (self.tr("Claude Code requests"), self.replay_value))
        for row, (label, value) in enumerate(rows):
            name = QLabel(label)
            name.setAlignment(Qt.AlignmentFlag.AlignTop)
            grid.addWidget(name, row, 0)
            grid.addWidget(value, row, 1)
        grid.setColumnStretch(1, 1)
        card_layout = QVBoxLayout(self.card)
        card_layout.addWidget(self.verdict_label)
        card_layout.addWidget(self.message_label)
        card_layout.addWidget(self.grid_box)
        card_layout.addWidget(self.client_view)
        card_layout.addWidget(self.diagnosis_label)
        fix_row = QHBoxLayout()
        fix_row.addWidget(self.fix_button)
        fix_row.addWidget(self.retry_button)
        fix_row.addWidget(self.edit_button)
        fix_row.addStretch(1)
        card_layout.addLayout(fix_row)
        self.card.hide()

        buttons = QHBoxLayout()
        buttons.addWidget(self.verify_button)
        buttons.addWidget(self.client_button)
        buttons.addWidget(self.cancel_button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(buttons)
        layout.addWidget(self.progress)
        layout.addWidget(self.progress_label)
        layout.addWidget(self.card)
        layout.addWidget(self.history, 1)

        self.verify_button.clicked.connect(self.verify_requested)
        self.client_button.clicked.connect(self.client_verify_requested)
        self.cancel_button.clicked.connect(self.cancel_requested)
        self.fix_button.clicked.connect(self._on_fix_clicked)
        self.retry_button.clicked.connect(self.verify_requested)
        self.edit_button.clicked.connect(self.edit_requested)

    # -- states ------------------------------------------------------------------------------------

    @Slot(str)
    def show_started(self, name: str) -> None:
        self._profile_name = name
        self.result = None
        self.card.hide()
        self.verify_button.setEnabled(False)
        self.client_button.setEnabled(False)
        self.cancel_button.show()
        self.progress.setValue(0)
        self.progress.show()
        self.progress_label.setText(self.tr("Verifying “%1”…").replace("%1", name))
        self.progress_label.show()

    @Slot(str, float)
    def show_progress(self, text: str, fraction: float) -> None:
        self.progress.setValue(round(max(0.0, min(1.0, fraction)) * 100))
        self.progress_label.setText(engine_text.translate(text))

    def _finish(self) -> None:
        self.verify_button.setEnabled(True)
        self.client_button.setEnabled(True)
        self.cancel_button.hide()
        self.progress.hide()
        self.progress_label.hide()

    @Slot(str)
    def show_failure(self, message: str) -> None:
        self._finish()
        self._fix_env = None
        self._paint(theme.CacheState.MISS)
        self.verdict_label.setText("⚠ " + self.tr("Verify failed"))
        self.message_label.setText(engine_text.translate(message))  # the server's (or the engine's) words
        self._show_failure_actions(True)
        for value in (self.cached_value, self.reuse_value, self.ttft_value, self.evidence_value,
                      self.replay_value):
            value.setText("–")
        self.diagnosis_label.hide()
        self.fix_button.hide()
        self.client_view.hide()
        self.grid_box.hide()
        self.card.show()

    def show_result(self, result: VerifyResult, profile_name: str | None = None) -> None:
        self._finish()
        self.result = result
        if profile_name:
            self._profile_name = profile_name
        self.client_view.hide()
        verdict = str(getattr(result.verdict, "value", result.verdict)).upper()
        self.grid_box.setVisible(verdict != "ERROR")  # a failed run measured nothing: no grid of "–"
        self._show_failure_actions(verdict == "ERROR")
        titles = {"HIT": self.tr("Cache hit"), "PARTIAL": self.tr("Partial reuse"),
                  "MISS": self.tr("Cache miss"), "UNKNOWN": self.tr("Unknown"),
                  "ERROR": self.tr("Verify failed")}
        replay = getattr(result, "claude_replay", None)
        replay_error = getattr(replay, "error", None)
        self.verdict_label.setText(("⚠ " if verdict == "ERROR" else "") + titles.get(verdict, verdict))
        # the tray's judgement too: a hit beside a Claude Code check that did not finish is not green
        self._paint(verify_state(verdict, replay_error) if verdict != "ERROR" else theme.CacheState.MISS)
        message = engine_text.translate(str(getattr(result, "message", "") or ""))
        if replay_error:
            unfinished = self.tr("But the check with Claude Code-shaped requests did not finish, so this "
                                 "is not yet a verdict for Claude Code: %1").replace(
                                     "%1", engine_text.translate(str(replay_error)))
            message = f"{message}\n{unfinished}" if message else unfinished
        self.message_label.setText(message)
        cached, prompt = getattr(result, "cached_tokens", None), getattr(result, "prompt_tokens", None)
        self.cached_value.setText("–" if cached is None else
                                  f"{cached:,}" + ("" if prompt is None else f" / {prompt:,}"))
        ratio = getattr(result, "reuse_ratio", None)
        self.reuse_value.setText("–" if ratio is None else f"{ratio:.1%}")
        cold, warm = getattr(result, "ttft_cold_ms", None), getattr(result, "ttft_warm_ms", None)
        speedup = getattr(result, "speedup", None)
        ttft = f"{_fmt_ms(cold)} → {_fmt_ms(warm)}"
        if speedup and speedup >= 1.05:  # "× faster" only when it was: 0.8× is slower, 1.0× the same
            ttft += self.tr(" (%1× faster)").replace("%1", f"{speedup:.1f}")
        elif speedup and speedup < 0.95:
            ttft += self.tr(" (slower)")
        self.ttft_value.setText(ttft)
        evidence = getattr(result, "evidence", None)
        if isinstance(evidence, list | tuple):
            evidence = "\n".join(engine_text.translate(str(item)) for item in evidence)
        self.evidence_value.setText(str(evidence or "–"))
        replay_text = str(getattr(replay, "message", "") or "") if replay is not None else ""
        replay_shown = engine_text.translate(replay_text) or "–"
        self.replay_value.setText(f"⚠ {replay_shown}" if replay_error else replay_shown)
        diagnosis = getattr(result, "diagnosis", None) or getattr(replay, "diagnosis", None)
        text = getattr(diagnosis, "message", diagnosis) if diagnosis is not None else None
        self.diagnosis_label.setText(self.tr("Why: %1").replace("%1", engine_text.translate(str(text)))
                                     if text else "")
        self.diagnosis_label.setVisible(bool(text))
        fix_env = getattr(result, "fix_env", None) or getattr(diagnosis, "fix_env", None)
        self._offer_fix(dict(fix_env) if fix_env else None)
        self.card.show()

    def show_client_report(self, report: ClientReport, profile_name: str | None = None) -> None:
        """The per-turn verdicts of a real-client run, with the fix its diagnosis found."""
        self._finish()
        self.result = None
        self._profile_name = profile_name or report.profile
        titles = {"hit": self.tr("Claude Code keeps the cache"),
                  "partial": self.tr("Claude Code: partial reuse"),
                  "miss": self.tr("Claude Code loses the cache"), "unknown": self.tr("Unknown")}
        self.verdict_label.setText(titles.get(report.verdict, report.verdict))
        self._paint(theme.as_state(report.verdict))
        lost = next((t for t in report.turns if t.lost and t.diagnosis), None)
        cause = str((lost.diagnosis or {}).get("cause_text") or "") if lost is not None else ""
        why = self.tr("Why: %1").replace("%1", engine_text.translate(cause))
        self.message_label.setText(why if cause else "")
        self.grid_box.hide()
        self.diagnosis_label.hide()
        self.client_view.show_report(report)
        self.client_view.show()
        self._offer_fix(dict(report.fixes) or None)
        self.card.show()

    def _show_failure_actions(self, failed: bool) -> None:
        self.retry_button.setVisible(failed)
        self.edit_button.setVisible(failed)

    def _offer_fix(self, fix_env: dict[str, str] | None) -> None:
        self._fix_env = fix_env
        if self._fix_env and self._profile_name:
            summary = ", ".join(f"{k}={v}" for k, v in self._fix_env.items())
            self.fix_button.setText(self.tr("Fix: add %1 to “%2”").replace("%1", summary)
                                    .replace("%2", self._profile_name))
            self.fix_button.show()
        else:
            self.fix_button.hide()

    def attach(self, controller: AppController) -> None:
        """Follow the controller's real-client verify and history; the window wires the rest."""
        self.client_verify_requested.connect(lambda: controller.start_client_verify())
        connect_for(self, controller.client_verify_finished,
                    lambda report: self.show_client_report(report, controller.verifying))
        connect_for(self, controller.history_changed, self._on_controller_history_changed)
        # the new active one
        connect_for(self, controller.profile_applied, self._on_controller_history_changed)
        self._history_dir = controller.paths.data_dir / "verify-history"
        self._active_name = lambda: controller.store.active_name
        # The history files are read with the verify engine (it loads httpx): the first read waits
        # until the background summary has loaded it, so the window's start never does.
        summary = controller.verify_summary
        if summary.loaded:
            self.history.bind(self._history_dir, controller.store.active_name)
        connect_for(self, summary.changed, self._on_summary_changed)

    @Slot()
    def _on_summary_changed(self) -> None:
        if self.history.profile is None:  # not bound yet (or no profile was active)
            self.history.bind(self._history_dir, self._active_name())

    @Slot(str)
    def _on_controller_history_changed(self, name: str) -> None:
        self.history.bind(self._history_dir, name)

    def _paint(self, state: theme.CacheState) -> None:
        self._state = state
        pal = self.card.palette()
        pal.setColor(QPalette.ColorRole.Window, theme.tinted_background(state))
        self.card.setPalette(pal)
        label_pal = self.verdict_label.palette()
        label_pal.setColor(QPalette.ColorRole.WindowText, theme.state_color(state))
        self.verdict_label.setPalette(label_pal)

    @Slot()
    def _on_fix_clicked(self) -> None:
        if self._fix_env and self._profile_name:
            self.fix_requested.emit(self._profile_name, dict(self._fix_env))

    # -- Qt overrides ------------------------------------------------------------------------------

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange and self._state is not None:
            self._paint(self._state)  # re-derive the tint for the new (dark or light) palette
        super().changeEvent(event)
