"""The Profile tab before there is a profile: a welcome that says what KV Switch does and the ways in.

A blank local-server form beside "No profiles yet" asks a new user to fill in fields they cannot know yet.
Until there is a profile to edit, or the user asks for a new one (the gallery, "New profile" of a kind),
the tab shows what KV Switch does and four ways to a first profile: the gallery, the setup assistant,
and importing Claude Code's or CC Switch's current setup. The form returns when the last profile is
removed and nobody asked for a new one.
"""

from __future__ import annotations

from PySide6.QtCore import Signal, Slot
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from kvswitch.ui.widgets import appearance, spacing


class Welcome(QWidget):
    """What KV Switch does, and the ways to a first profile.

    Signals:
        add_requested(): "Add a profile" (the window opens the gallery).
        setup_requested(): "Run the setup assistant".
        import_requested(str): import ``"claude"`` (Claude Code's settings) or ``"cc-switch"``.
    """

    add_requested = Signal()
    setup_requested = Signal()
    import_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.title = QLabel(self.tr("Welcome to KV Switch"))
        font = QFont(self.title.font())
        font.setPointSizeF(font.pointSizeF() * 1.5)
        font.setBold(True)
        self.title.setFont(font)
        self.text = QLabel(self.tr(
            "KV Switch points Claude Code, Codex and OpenCode at the backend you pick — a cloud vendor "
            "or a model server on this computer — in one click, and shows from the server's own numbers "
            "whether the prompt cache is reused, so a local model answers fast instead of reading the "
            "whole conversation again."))
        self.text.setWordWrap(True)
        self.add_button = QPushButton(self.tr("Add a profile…"))
        self.add_button.setToolTip(self.tr("Servers running here, local presets and cloud vendors"))
        appearance.style_primary(self.add_button)
        self.setup_button = QPushButton(self.tr("Run the setup assistant…"))
        self.setup_button.setToolTip(self.tr("Find the coding tools and model servers on this computer"))
        self.import_claude_button = QPushButton(self.tr("Import from Claude Code"))
        self.import_claude_button.setToolTip(self.tr("The backend ~/.claude/settings.json points at now"))
        self.import_cc_switch_button = QPushButton(self.tr("Import from CC Switch"))
        self.import_cc_switch_button.setToolTip(self.tr("Every Claude Code and Codex provider of CC Switch"))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(24, 24, 24, 24)
        layout.setSpacing(spacing.EDGE)
        layout.addStretch(1)
        layout.addWidget(self.title)
        layout.addWidget(self.text)
        layout.addSpacing(8)
        first = QHBoxLayout()
        first.setSpacing(8)
        first.addWidget(self.add_button)
        first.addWidget(self.setup_button)
        first.addStretch(1)
        layout.addLayout(first)
        imports = QHBoxLayout()
        imports.setSpacing(8)
        imports.addWidget(self.import_claude_button)
        imports.addWidget(self.import_cc_switch_button)
        imports.addStretch(1)
        layout.addLayout(imports)
        layout.addStretch(2)
        self.add_button.clicked.connect(self.add_requested)
        self.setup_button.clicked.connect(self.setup_requested)
        self.import_claude_button.clicked.connect(lambda: self.import_requested.emit("claude"))
        self.import_cc_switch_button.clicked.connect(lambda: self.import_requested.emit("cc-switch"))


class ProfilePage(QStackedWidget):
    """The welcome or the editor: the editor once there is a profile, or once the user asked for one."""

    def __init__(self, editor: QWidget, parent: QWidget | None = None):
        super().__init__(parent)
        self.welcome = Welcome()
        self.editor = editor
        self.addWidget(self.welcome)
        self.addWidget(editor)
        self.form_requested = False
        self._rows = 0
        form_opened = getattr(editor, "form_opened", None)
        if form_opened is not None:
            form_opened.connect(self._on_editor_form_opened)

    @property
    def showing_welcome(self) -> bool:
        return self.currentWidget() is self.welcome

    def show_for(self, rows: int) -> None:
        """Follow the profile count: removing the last profile brings the welcome back."""
        if rows == 0 and self._rows > 0:
            self.form_requested = False
        self._rows = rows
        self._show(self.editor if rows or self.form_requested else self.welcome)

    def _show(self, page: QWidget) -> None:
        """Only the page shown counts for the size, so the short welcome gets no scroll bar sized for
        the long form."""
        for each in (self.welcome, self.editor):
            policy = QSizePolicy.Policy.Preferred if each is page else QSizePolicy.Policy.Ignored
            each.setSizePolicy(policy, policy)
        self.setCurrentWidget(page)
        self.updateGeometry()

    @Slot()
    def _on_editor_form_opened(self) -> None:
        self.form_requested = True
        self._show(self.editor)
