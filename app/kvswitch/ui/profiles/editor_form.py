"""The profile form's reading side: the form as the model's input (what it does not show kept from the
stored profile), and which fields apply to the profile's clients and kind.

A mixin of ``ProfileEditor`` (which builds the widgets named below), split out so the editor's module
stays under the project's 400-line size. It has no text of its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import QFormLayout, QWidget

from kvswitch.core.errors import KvSwitchError
from kvswitch.core.models import ProfileKind
from kvswitch.ui.profiles.env_block import parse_env_block

if TYPE_CHECKING:
    from PySide6.QtWidgets import QCheckBox, QComboBox, QLineEdit, QPlainTextEdit

    from kvswitch.ui.profiles.gateway_fields import GatewayFields
    from kvswitch.ui.profiles.log_field import LogField
    from kvswitch.ui.profiles.profile_models import ModelMapBox

#: the targets the form has a check box for (project targets are kept as they are)
EDITABLE_TARGETS = ("claude", "codex", "opencode", "bash", "zsh", "fish")


class EditorFormMixin:
    """``ProfileEditor`` supplies the store, the profile being edited and the form's widgets."""

    _store: Any
    _editing: str | None
    _extra: dict[str, Any]
    _form: QFormLayout
    errors: Any
    kind_combo: QComboBox
    name_edit: QLineEdit
    url_edit: QLineEdit
    key_edit: QLineEdit
    key_env_combo: QComboBox
    model_edit: QLineEdit
    env_edit: QPlainTextEdit
    allow_dangerous_box: QCheckBox
    target_boxes: dict[str, QCheckBox]
    log_field: LogField
    gateway_fields: GatewayFields
    models_box: ModelMapBox

    def _form_data(self) -> tuple[dict[str, Any], list[str]]:
        env, env_errors = parse_env_block(self.env_edit.toPlainText())
        data: dict[str, Any] = {
            "name": self.name_edit.text(),
            "kind": self.kind_combo.currentData(),
            "base_url": self.url_edit.text(),
            "api_key": self.key_edit.text() or None,
            "key_env": self.key_env_combo.currentData(),
            "model": self.model_edit.text().strip() or None,
            "env": env,
            "allow_dangerous_env": self.allow_dangerous_box.isChecked(),
            **self.gateway_fields.values(),
            **self._extra,
        }
        kept = []
        if self._editing is not None:
            try:  # keep what the form does not show (project targets, notes, model map)
                stored = self._store.get(self._editing)
                kept = [t for t in stored.targets if t not in EDITABLE_TARGETS]
                data["notes"] = stored.notes
                data["codex_provider_id"] = stored.codex_provider_id
                # what the form has no field for is kept, never reset by a save from the window
                data["fallbacks"] = list(stored.fallbacks)
                data["protocol"] = stored.protocol
                data["context_window"] = stored.context_window
            except KvSwitchError:
                pass
        data["models"] = self.models_box.values()
        data["targets"] = [spec for spec, box in self.target_boxes.items() if box.isChecked()] + kept
        log_source = self.log_field.data()
        if log_source is not None:
            data["log"] = log_source
        return data, env_errors

    def claude_targeted(self) -> bool:
        """Whether the form writes Claude Code (user or a project): its fields show only then."""
        if self.target_boxes["claude"].isChecked():
            return True
        if self._editing is not None:
            try:
                return any(t.startswith("claude") for t in self._store.summary(self._editing).targets)
            except KvSwitchError:
                return False
        return False

    def _show_fields_for_targets(self) -> None:
        """Only the fields that apply: the key variable and models per role are Claude Code's, a server
        log is a local server's (a Codex-only profile shows no Claude-only field)."""
        claude = self.claude_targeted()
        self.key_env_combo.setVisible(claude)
        self.models_box.setVisible(claude)
        kind = self.kind_combo.currentData()
        local = bool(kind) and ProfileKind(kind).is_local
        row = self._form_row_of(self.log_field)
        if row >= 0:  # the field and its label (its error label keeps its own state)
            item = self._form.itemAt(row, QFormLayout.ItemRole.LabelRole)
            label = item.widget() if item is not None else None
            if label is not None:
                label.setVisible(local)
            self.log_field.setVisible(local)
            if not local:
                self.errors["log"].hide()

    def _form_row_of(self, widget: QWidget) -> int:
        """The form row holding ``widget`` (rows are a field with its error label under it)."""
        for row in range(self._form.rowCount()):
            item = self._form.itemAt(row, QFormLayout.ItemRole.FieldRole)
            inner = item.layout() if item is not None else None
            if inner is not None and inner.indexOf(widget) >= 0:
                return row
        return -1
