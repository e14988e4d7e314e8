"""Inline validation messages of a form: a label under each field, shown only once it concerns the user.

Kept apart from the profile editor because it is the form's error policy, not the profile: the editor
decides what is wrong (with the model's own words), this decides where and whether it shows. A message
shows for a field the user has edited (``touch``), or for every field once ``show_all`` is set (Save was
tried, or a preset filled the form), so a blank new form is not an error.
"""

from __future__ import annotations

from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QFormLayout, QLabel, QLayout, QVBoxLayout, QWidget

from kvswitch.ui.widgets import spacing, theme


class FieldErrors:
    """The error label of each form row (by field name) and which of them may show."""

    def __init__(self) -> None:
        self.labels: dict[str, QLabel] = {}
        self.touched: set[str] = set()  # fields the user edited: only their errors are shown
        self.show_all = False  # Save was tried (or a preset filled the form): every error shows

    def add_row(self, form: QFormLayout, field: str, label: str, widget: QWidget | QLayout) -> None:
        """A form row of ``widget`` with a (hidden) error label under it."""
        box = QVBoxLayout()
        box.setSpacing(spacing.HALF)
        if isinstance(widget, QWidget):
            box.addWidget(widget)
        else:
            box.addLayout(widget)
        error = QLabel()
        error.setWordWrap(True)
        error.setObjectName(f"error_{field}")
        pal = error.palette()
        pal.setColor(QPalette.ColorRole.WindowText, theme.state_color(theme.CacheState.MISS))
        error.setPalette(pal)
        error.hide()
        box.addWidget(error)
        self.labels[field] = error
        form.addRow(label, box)

    def reset(self) -> None:
        """A new form (or another profile): nothing is the user's concern yet."""
        self.touched = set()
        self.show_all = False

    def touch(self, field: str) -> None:
        self.touched.add(field)

    def hide_all(self) -> None:
        for label in self.labels.values():
            label.hide()

    def show(self, field: str, message: str) -> None:
        """Add ``message`` under ``field`` (below any shown already), if that field's errors may show."""
        if not self.show_all and field not in self.touched:
            return
        label = self.labels[field]
        label.setText(message if label.isHidden() else f"{label.text()}\n{message}")
        label.show()
