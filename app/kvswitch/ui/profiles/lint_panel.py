"""Lint findings shown under the form, each with a one-click fix when the engine offers one."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from kvswitch.ui.widgets import spacing, theme

if TYPE_CHECKING:
    from kvswitch.core.models import Profile
    from kvswitch.targets.lint import LintWarning

log = logging.getLogger("kvswitch.ui.lint")


class LintPanel(QFrame):
    """Lists ``lint_profile`` warnings for the profile being edited.

    Signals:
        fix_requested(dict): the user clicked a warning's fix (its ``fix_env``).
    """

    fix_requested = Signal(dict)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(spacing.UNIT, spacing.HALF, spacing.UNIT, spacing.HALF)
        self.warnings: list[LintWarning] = []
        self.fix_buttons: dict[str, QPushButton] = {}
        self.hide()

    def show_for(self, profile: Profile | None) -> None:
        while self._layout.count():
            item = self._layout.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        self.fix_buttons.clear()
        self.warnings = []
        if profile is not None:
            from kvswitch.targets.lint import lint_profile  # noqa: PLC0415

            self.warnings = list(lint_profile(profile))
        for warning in self.warnings:
            self._layout.addWidget(self._row(warning))
        self.setVisible(bool(self.warnings))

    def changeEvent(self, event: QEvent) -> None:
        """A theme switch: the warnings' colour is derived from the palette, so derive it again."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            for label in self.findChildren(QLabel):
                if label.objectName().startswith("lint_"):
                    self._colour(label)

    def _colour(self, label: QLabel) -> None:
        pal = label.palette()
        pal.setColor(QPalette.ColorRole.WindowText, theme.state_color(theme.CacheState.PARTIAL))
        label.setPalette(pal)

    def _row(self, warning: LintWarning) -> QWidget:
        row = QWidget()
        layout = QHBoxLayout(row)
        layout.setContentsMargins(0, 0, 0, 0)
        label = QLabel(f"⚠ {warning.message}")
        label.setWordWrap(True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        label.setObjectName(f"lint_{warning.code}")
        self._colour(label)
        layout.addWidget(label, 1)
        if warning.fix_env:
            summary = ", ".join(f"{k}={v}" for k, v in warning.fix_env.items())
            button = QPushButton(self.tr("Fix"))
            button.setToolTip(self.tr("Add %1 to the profile").replace("%1", summary))
            fix = dict(warning.fix_env)
            button.clicked.connect(lambda _checked=False, env=fix: self.fix_requested.emit(env))
            layout.addWidget(button, 0, Qt.AlignmentFlag.AlignTop)
            self.fix_buttons[warning.code] = button
        return row
