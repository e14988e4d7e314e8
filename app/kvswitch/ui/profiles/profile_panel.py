"""Pieces of the window's profile column: the empty state and the duplicate / reorder buttons.

The empty state replaces the list while there is no profile: an empty list tells a new user nothing,
while one button that opens the gallery (servers found here, local presets, cloud vendors) gets them
to a working profile.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QToolButton, QVBoxLayout, QWidget


class EmptyState(QWidget):
    """Shown instead of the profile list when there are no profiles.

    Signals:
        add_requested(): the user wants to add a first profile (the window opens the gallery).
    """

    add_requested = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.title = QLabel(self.tr("No profiles yet"))
        font = QFont(self.title.font())
        font.setPointSizeF(font.pointSizeF() * 1.3)
        font.setBold(True)
        self.title.setFont(font)
        self.text = QLabel(self.tr("A profile says where Claude Code and Codex send requests: a server "
                                   "on this machine or a cloud vendor. Pick one and add your key."))
        self.text.setWordWrap(True)
        self.add_button = QPushButton(self.tr("Add your first profile"))
        self.add_button.setDefault(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 16, 16, 16)
        layout.addStretch(1)
        for label in (self.title, self.text):
            label.setAlignment(Qt.AlignmentFlag.AlignHCenter)
            layout.addWidget(label)  # full width: a wrapped label only gets its height when unconstrained
        layout.addSpacing(8)
        layout.addWidget(self.add_button, 0, Qt.AlignmentFlag.AlignHCenter)
        layout.addStretch(2)
        self.add_button.clicked.connect(self.add_requested)


class ProfileButtons(QWidget):
    """Duplicate, move up, move down for the selected profile.

    Signals:
        duplicate_requested(): copy the selected profile.
        move_requested(int): move the selected profile by this many places (-1 up, +1 down).
    """

    duplicate_requested = Signal()
    move_requested = Signal(int)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.duplicate_button = QPushButton(self.tr("Duplicate"))
        self.up_button = QToolButton()
        self.up_button.setArrowType(Qt.ArrowType.UpArrow)
        self.up_button.setToolTip(self.tr("Move up (Alt+Up)"))
        self.up_button.setShortcut("Alt+Up")
        self.up_button.setAccessibleName(self.tr("Move up"))
        self.down_button = QToolButton()
        self.down_button.setArrowType(Qt.ArrowType.DownArrow)
        self.down_button.setToolTip(self.tr("Move down (Alt+Down)"))
        self.down_button.setShortcut("Alt+Down")
        self.down_button.setAccessibleName(self.tr("Move down"))
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.duplicate_button)
        row.addStretch(1)
        row.addWidget(self.up_button)
        row.addWidget(self.down_button)
        self.duplicate_button.clicked.connect(self.duplicate_requested)
        self.up_button.clicked.connect(lambda: self.move_requested.emit(-1))
        self.down_button.clicked.connect(lambda: self.move_requested.emit(1))

    def update_for(self, row: int, count: int) -> None:
        """Enable what can apply to the selected row (``-1``: none selected)."""
        self.duplicate_button.setEnabled(row >= 0)
        self.up_button.setEnabled(row > 0)
        self.down_button.setEnabled(0 <= row < count - 1)
