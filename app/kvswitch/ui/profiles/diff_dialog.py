"""Confirm an apply: one tab per file with the engine's diff (keys masked), then Apply or Cancel."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtGui import QFont, QFontDatabase, QSyntaxHighlighter, QTextCharFormat, QTextDocument
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from kvswitch.core.errors import KvSwitchError
from kvswitch.ui.widgets import appearance, theme


class _DiffHighlighter(QSyntaxHighlighter):
    """Unified-diff colours from the palette: additions green, removals red, headers muted."""

    def __init__(self, document: QTextDocument):
        super().__init__(document)
        self._added = QTextCharFormat()
        self._added.setForeground(theme.state_color(theme.CacheState.HIT))
        self._removed = QTextCharFormat()
        self._removed.setForeground(theme.state_color(theme.CacheState.MISS))
        self._header = QTextCharFormat()
        self._header.setForeground(theme.muted_color())
        self._header.setFontWeight(QFont.Weight.Bold)

    def highlightBlock(self, text: str) -> None:
        if text.startswith(("+++", "---", "@@")):
            self.setFormat(0, len(text), self._header)
        elif text.startswith("+"):
            self.setFormat(0, len(text), self._added)
        elif text.startswith("-"):
            self.setFormat(0, len(text), self._removed)


class ApplyDialog(QDialog):
    """Shows what applying ``profile_name`` would change, file by file."""

    def __init__(self, profile_name: str, plans: list[Any], render: Callable[[list[Any]], str],
                 parent: QWidget | None = None, *, applied: bool = False):
        """``applied``: the plans were written already; the dialog only shows them (Close)."""
        super().__init__(parent)
        title = self.tr("Changes made by “%1”") if applied else self.tr("Apply “%1”")
        self.setWindowTitle(title.replace("%1", profile_name))
        self.resize(760, 520)
        layout = QVBoxLayout(self)
        changed = [plan for plan in plans if getattr(plan, "changed", True)]
        summary = QLabel()
        summary.setWordWrap(True)
        if changed and applied:
            text = self.tr("%1 file(s) changed. Each was backed up first; Undo puts them back.")
            summary.setText(text.replace("%1", str(len(changed))))
        elif changed:
            text = self.tr("%1 file(s) will change. Every file is backed up first; Undo puts them back.")
            summary.setText(text.replace("%1", str(len(changed))))
        else:
            summary.setText(self.tr("Nothing to change: every file already matches this profile."))
        layout.addWidget(summary)
        self.tabs = QTabWidget()
        fixed = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self._highlighters = []
        for plan in plans:
            page = QWidget()
            page_layout = QVBoxLayout(page)
            page_layout.setContentsMargins(4, 4, 4, 4)
            location = QLabel(f"<b>{_escape(str(plan.location))}</b>")
            page_layout.addWidget(location)
            for warning in getattr(plan, "warnings", []) or []:
                label = QLabel(f"⚠ {warning}")
                label.setWordWrap(True)
                page_layout.addWidget(label)
            view = QPlainTextEdit()
            view.setReadOnly(True)
            view.setFont(fixed)
            view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
            text = render([plan]).strip() if plan.changed else ""
            if not text:
                text = "\n".join(getattr(plan, "changes", []) or []) or self.tr("(no change)")
            view.setPlainText(text)
            self._highlighters.append(_DiffHighlighter(view.document()))
            page_layout.addWidget(view, 1)
            title = str(plan.target_id) + ("" if plan.changed else " ✓")
            self.tabs.addTab(page, title)
        layout.addWidget(self.tabs, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close if applied
                                   else QDialogButtonBox.StandardButton.Cancel)
        self.apply_button = None if applied else buttons.addButton(self.tr("Apply"),
                                                                   QDialogButtonBox.ButtonRole.AcceptRole)
        if self.apply_button is not None:
            self.apply_button.setDefault(True)
            appearance.style_primary(self.apply_button)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    @classmethod
    def ask(cls, parent: QWidget | None, profile_name: str, plans: list[Any],
            render: Callable[[list[Any]], str]) -> bool:
        """Modal confirmation; tests patch this one function."""
        dialog = cls(profile_name, plans, render, parent)
        try:
            return dialog.exec() == QDialog.DialogCode.Accepted
        finally:
            dialog.deleteLater()


def confirm_and_apply(parent: QWidget | None, controller: Any, name: str, plans: list[Any]) -> bool:
    """Show ``plans``, apply exactly them when confirmed; when a file changed in between, nothing is
    written and the fresh preview is shown instead (the changed files point it out), until the user
    applies or cancels. Other failures reach the window through ``controller.apply_failed``."""
    render = lambda ps: controller.engine.render_diff(ps, show_secrets=False)  # noqa: E731
    while ApplyDialog.ask(parent, name, plans, render):
        if controller.apply(name, plans, rewrite_files=True):  # the files shown are what is written
            return True
        outdated = controller.preview_outdated
        if outdated is None:
            return False
        try:
            plans = controller.plan(name)
        except KvSwitchError as exc:
            controller.apply_failed.emit(name, str(exc))
            return False
        note = QCoreApplication.translate(
            "ApplyDialog",
            "This file changed after the preview you confirmed; this is what applying does now.",
        )
        flagged = [p for p in plans if p.location in outdated.locations] or plans[:1]
        for plan in flagged:
            plan.warnings.insert(0, note)
    return False


def show_applied(parent: QWidget | None, controller: Any, name: str, plans: list[Any]) -> ApplyDialog:
    """The plans a one-click apply wrote, read-only (modeless: the window stays usable)."""
    render = lambda ps: controller.engine.render_diff(ps, show_secrets=False)  # noqa: E731
    dialog = ApplyDialog(name, plans, render, parent, applied=True)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.show()
    return dialog


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
