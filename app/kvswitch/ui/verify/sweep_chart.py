"""The settings table as a chart in the Verify tab: the profile's newest ``kvswitch sweep``, one bar per
server setting (hit rate, coloured by verdict) and warm TTFT as the line.

People run a sweep to pick a setting; reading its table row by row hides the one that stands out. The
chart reads the sweep back from the verify history through the controller (``load_latest_sweep``, on
the task pool) whenever the history changes or another profile becomes active; it keeps only the run it
draws. A setting whose server failed to start, crashed or errored is drawn as a small ×, not a miss.
A sweep that also started a cache tier (``--tier-cmd``) lists under the chart, per setting, where the warm
request's prompt came from: L1 hit, L2 hit and computed tokens, as the sweep stored them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QSize, Slot
from PySide6.QtGui import QPaintEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QSizePolicy, QVBoxLayout, QWidget

from kvswitch.ui.control import engine_text
from kvswitch.ui.qtcompat import connect_for
from kvswitch.ui.verify.verify_compare import local_time_text
from kvswitch.ui.widgets.reuse_chart import StripLayout, paint_strip

if TYPE_CHECKING:
    from kvswitch.ui.control.controller import AppController
    from kvswitch.ui.control.tasks import BackgroundTask
    from kvswitch.verify.history import HistoryEntry
    from kvswitch.verify.sweep_history import SweepRun

_MEASURED = frozenset({"hit", "partial", "miss"})


@dataclass(frozen=True)
class SettingPoint:
    """One setting as the strip draws it: its hit rate, verdict colour and warm TTFT."""

    reuse_ratio: float
    verdict: str
    prompt_ms: float | None


def tier_numbers(entry: HistoryEntry) -> tuple[int | None, int | None, int | None] | None:
    """The warm request's L1 hit, L2 hit and computed tokens a tier sweep stored; ``None`` for any other
    row (no tier, or a setting that was not measured)."""
    columns = entry.server.get("tier_columns") if isinstance(entry.server, dict) else None
    if not isinstance(columns, dict) or entry.verdict.lower() not in _MEASURED:
        return None

    def count(name: str) -> int | None:
        value = columns.get(name)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    return count("l1_hit_tokens"), count("l2_hit_tokens"), count("computed_tokens")


def setting_point(entry: HistoryEntry) -> SettingPoint:
    verdict = entry.verdict.lower()
    if verdict not in _MEASURED:
        return SettingPoint(0.0, "failed", None)  # no numbers: the server never answered the probe
    return SettingPoint(entry.reuse_ratio or 0.0, verdict, entry.ttft_warm_ms)


class SweepChart(QWidget):
    """Hit rate per setting as bars, warm TTFT as the line, the settings under the bars."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.run: SweepRun | None = None
        self.layout_drawn: StripLayout | None = None
        self.setMinimumHeight(120)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setAccessibleName(self.tr("Hit rate and time to first token per sweep setting"))

    def sizeHint(self) -> QSize:
        return QSize(400, 140)

    def points(self) -> list[SettingPoint]:
        return [setting_point(entry) for entry in self.run.entries] if self.run else []

    def setting_labels(self) -> list[str]:
        return [entry.setting or "?" for entry in self.run.entries] if self.run else []

    def paintEvent(self, _event: QPaintEvent) -> None:
        legend = self.tr("bars: hit rate   line: warm TTFT   (%1 settings)")
        legend = legend.replace("%1", str(len(self.points())))
        empty = self.tr("No sweep recorded yet: “Run a sweep…” restarts the profile's server once per "
                        "setting.")
        self.layout_drawn = paint_strip(self, self.points(), empty, legend, min_slots=1,
                                        x_labels=self.setting_labels())


class SweepView(QWidget):
    """The title (which sweep, when) and the chart; reloaded by the controller's history signals."""

    def __init__(self, controller: AppController, parent: QWidget | None = None):
        super().__init__(parent)
        self.controller = controller
        self.profile: str | None = None
        self._task: BackgroundTask | None = None
        self.title = QLabel(self.tr("Settings sweep"))
        self.title.setWordWrap(True)
        self.run_button = QPushButton(self.tr("Run a sweep…"))
        self.run_button.setToolTip(self.tr("Restart this profile's local server once per setting and measure "
                                           "each (kvswitch sweep)"))
        self.run_button.clicked.connect(self._on_run_button_clicked)
        self.dialog: Any = None
        self.chart = SweepChart()
        self.tiers = QLabel()
        self.tiers.setWordWrap(True)
        self.tiers.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        head = QHBoxLayout()
        head.addWidget(self.title, 1)
        head.addWidget(self.run_button)
        layout.addLayout(head)
        layout.addWidget(self.chart)
        layout.addWidget(self.tiers)
        connect_for(self, controller.history_changed, self._on_controller_history_changed)
        connect_for(self, controller.profile_applied, self._on_controller_history_changed)

    @property
    def loading(self) -> bool:
        return self._task is not None and self._task.running

    def reload(self, name: str | None = None) -> None:
        """Read ``name``'s (default: the active profile's) newest sweep in the background."""
        name = name or self.controller.store.active_name
        self.profile = name
        if not name:
            self._show(None)
            return
        self._task = self.controller.load_latest_sweep(name, self._on_sweep_loaded, self._on_sweep_failed)

    def _show(self, run: SweepRun | None) -> None:
        self.chart.run = run
        self.chart.update()
        self._show_tiers(run)
        if run is None:
            self.title.setText(self.tr("Settings sweep"))
            return
        text = self.tr("Settings sweep of “%1”, %2: %3").replace("%1", run.profile)
        text = text.replace("%2", local_time_text(run.started))
        self.title.setText(text.replace("%3", ", ".join(run.flags)))

    def _show_tiers(self, run: SweepRun | None) -> None:
        lines = []
        for entry in run.entries if run else ():
            numbers = tier_numbers(entry)
            if numbers is None:
                continue
            line = self.tr("%1: L1 hit %2, L2 hit %3, computed %4 tokens").replace("%1", entry.setting or "?")
            for mark, value in zip(("%2", "%3", "%4"), numbers, strict=True):
                line = line.replace(mark, f"{value:,}" if value is not None else "-")
            lines.append(line)
        self.tiers.setText("\n".join(lines))
        self.tiers.setVisible(bool(lines))

    def _on_sweep_loaded(self, run: Any) -> None:
        if run is None or run.profile == self.profile:
            self._show(run)

    def _on_sweep_failed(self, exc: BaseException) -> None:
        self._show(None)
        self.title.setText(self.tr("Could not read the sweep history: %1").replace(
            "%1", engine_text.error_text(exc)))

    @Slot(str)
    def _on_controller_history_changed(self, name: str) -> None:
        self.reload(name)

    @Slot()
    def _on_run_button_clicked(self) -> None:
        """The sweep dialog for the profile shown (the active one when none was chosen)."""
        name = self.profile or self.controller.store.active_name
        if not name:
            self.title.setText(self.tr("Choose a profile first: a sweep restarts its local server."))
            return
        from kvswitch.ui.verify.sweep_dialog import SweepDialog  # noqa: PLC0415 - opened on demand

        self.dialog = SweepDialog(self.controller, name, self.window())
        self.dialog.show()


def add_sweep_view(card: Any, controller: AppController) -> SweepView:
    """The Verify tab's hook: the sweep chart above the verify history, loaded once at once."""
    view = SweepView(controller, card)
    layout = card.layout()
    layout.insertWidget(max(0, layout.indexOf(card.history)), view)
    card.sweep_view = view
    view.reload()
    return view
