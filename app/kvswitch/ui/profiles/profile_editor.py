"""The profile form: presets per kind, inline validation by the pydantic model, lint with one-click fixes.

The form holds a draft only while the user types; saving goes through the store, which owns profiles.
Validation messages are the model's own (``Profile.model_validate``), shown next to the field they
belong to, so the window and the CLI reject the same things with the same words — but only for a field
the user has edited (or all of them once Save is tried): a blank new form is not an error.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError
from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from kvswitch.core.errors import KvSwitchError
from kvswitch.core.models import Profile, ProfileKind
from kvswitch.servers import DEFAULT_LOCAL_KIND
from kvswitch.ui.profiles.editor_form import EDITABLE_TARGETS, EditorFormMixin
from kvswitch.ui.profiles.env_block import format_env_block, parse_env_block
from kvswitch.ui.profiles.field_errors import FieldErrors
from kvswitch.ui.profiles.gateway_fields import GatewayFields
from kvswitch.ui.profiles.identity import kind_name
from kvswitch.ui.profiles.lint_panel import LintPanel
from kvswitch.ui.profiles.log_field import LogField
from kvswitch.ui.profiles.profile_models import ModelMapBox, RunTask
from kvswitch.ui.profiles.vendor_hint import VendorKeyHint
from kvswitch.ui.widgets import appearance

log = logging.getLogger("kvswitch.ui.editor")

class ProfileEditor(EditorFormMixin, QWidget):
    """Edits one profile (or a new one) and saves it through the store.

    Signals:
        profile_saved(str): the profile was added or updated in the store (its name).
        save_failed(str): the store refused the profile (its message).
        form_opened(): a new profile's form was asked for (a preset, a kind): the welcome gives way.
        dirty_changed(bool): the form now has (or no longer has) edits that are not saved.
    """

    profile_saved = Signal(str)
    save_failed = Signal(str)
    form_opened = Signal()
    dirty_changed = Signal(bool)

    def __init__(self, store: Any, parent: QWidget | None = None, run_task: RunTask | None = None,
                 save_existing: Callable[[str, Profile], bool] | None = None,
                 add_new: Callable[[Profile], Profile] | None = None):
        """``save_existing(old_name, profile)``: how a stored profile is saved (the window's writes it
        through to the clients that run it); default: ``store.update``. ``add_new(profile)``: how a new
        one is added, returning what was stored (the window's reads the server's context window, as
        ``kvswitch profile add`` does); default: ``store.add``."""
        super().__init__(parent)
        self._store = store
        self._save_existing = save_existing
        self._add_new = add_new
        self._editing: str | None = None  # name in the store, None for a new profile
        self._loading = False
        self._valid: Profile | None = None
        self._field_errors = FieldErrors()  # which messages show: only for edited fields, until Save
        self._extra: dict[str, Any] = {}  # what a preset sets that the form has no field for (notes)
        self._dirty = False

        self.kind_combo = QComboBox()
        for each in ProfileKind:
            self.kind_combo.addItem(kind_name(each.value), each.value)  # as users call them
        self.preset_button = QPushButton(self.tr("Use preset"))
        self.preset_button.setToolTip(self.tr("Fill the base URL, env block and log source for this kind"))
        self.name_edit = QLineEdit()
        self.url_edit = QLineEdit()
        self.url_edit.setPlaceholderText("http://127.0.0.1:8080")
        self.key_edit = QLineEdit()
        self.key_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.key_edit.setPlaceholderText(self.tr("optional"))
        self.reveal_button = QToolButton()
        self.reveal_button.setText(self.tr("Show"))
        self.reveal_button.setCheckable(True)
        self.reveal_button.setToolTip(self.tr("Show or hide the API key"))
        self.model_edit = QLineEdit()
        self.env_edit = QPlainTextEdit()
        self.env_edit.setPlaceholderText("CLAUDE_CODE_ATTRIBUTION_HEADER=0")
        self.env_edit.setFixedHeight(96)
        self.allow_dangerous_box = QCheckBox(self.tr("Allow risky environment variables (PATH, LD_*, "
                                                     "PROMPT_COMMAND, NODE_OPTIONS…)"))
        self.allow_dangerous_box.setToolTip(self.tr("They change how shells, the loader or Claude Code "
                                                    "run programs; tick only if you set them on purpose"))
        self.target_boxes = {spec: QCheckBox(spec) for spec in EDITABLE_TARGETS}
        self.log_field = LogField()
        self.log_kind_combo, self.log_path_edit = self.log_field.kind_combo, self.log_field.path_edit

        self.errors = self._field_errors.labels  # the error label under each field, by field name
        self._form = form = QFormLayout()
        kind_row = QHBoxLayout()
        kind_row.addWidget(self.kind_combo, 1)
        kind_row.addWidget(self.preset_button)
        form.addRow(self.tr("Kind"), kind_row)
        self._field_errors.add_row(form, "name", self.tr("Name"), self.name_edit)
        self._field_errors.add_row(form, "base_url", self.tr("Base URL"), self.url_edit)
        key_row = QHBoxLayout()
        key_row.addWidget(self.key_edit, 1)
        key_row.addWidget(self.reveal_button)
        self.key_env_combo = QComboBox()
        self.key_env_combo.setToolTip(self.tr("The variable the key goes in; the vendor's docs say which"))
        for name in ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_API_KEY"):
            self.key_env_combo.addItem(name, name)
        key_row.addWidget(self.key_env_combo)
        self._field_errors.add_row(form, "api_key", self.tr("API key"), key_row)
        self.key_hint = VendorKeyHint(self.key_edit)  # the catalog vendor, "a key is required — get one"
        form.addRow("", self.key_hint)
        self.url_edit.textChanged.connect(self.key_hint.update_for)
        self._field_errors.add_row(form, "model", self.tr("Model"), self.model_edit)
        self._field_errors.add_row(form, "env", self.tr("Environment"), self.env_edit)
        form.addRow("", self.allow_dangerous_box)
        targets_row = QHBoxLayout()
        for box in self.target_boxes.values():
            targets_row.addWidget(box)
        targets_row.addStretch(1)
        targets_widget = QWidget()
        targets_widget.setLayout(targets_row)
        targets_row.setContentsMargins(0, 0, 0, 0)
        self._field_errors.add_row(form, "targets", self.tr("Write to"), targets_widget)
        self.gateway_fields = GatewayFields(self)  # through the gateway, the stabiliser, bridges
        form.addRow(self.tr("Gateway"), self.gateway_fields)
        self._field_errors.add_row(form, "log", self.tr("Server log"), self.log_field)
        self.models_box = ModelMapBox(lambda: self._valid, run_task, self)

        self.lint_panel = LintPanel(self)
        self.save_button = QPushButton(self.tr("Save"))
        appearance.style_primary(self.save_button)
        self.revert_button = QPushButton(self.tr("Revert"))
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.revert_button)
        buttons.addWidget(self.save_button)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.models_box)
        layout.addWidget(self.lint_panel)
        layout.addStretch(1)
        layout.addLayout(buttons)

        fields = {"name": self.name_edit, "base_url": self.url_edit, "api_key": self.key_edit,
                  "model": self.model_edit, "log": self.log_path_edit}
        for field, edit in fields.items():
            edit.textChanged.connect(lambda _text, f=field: self._on_field_edited(f))
        self.env_edit.textChanged.connect(lambda: self._on_field_edited("env"))
        self.kind_combo.currentIndexChanged.connect(self._on_field_changed)
        self.key_env_combo.currentIndexChanged.connect(self._on_field_changed)
        self.log_kind_combo.currentIndexChanged.connect(lambda _i: self._on_field_edited("log"))
        for box in self.target_boxes.values():
            box.toggled.connect(lambda _on: self._on_field_edited("targets"))
        self.allow_dangerous_box.toggled.connect(lambda _on: self._on_field_edited("env"))
        self.models_box.changed.connect(self._on_field_changed)
        self.gateway_fields.changed.connect(self._on_field_changed)
        self.reveal_button.toggled.connect(self._on_reveal_toggled)
        self.preset_button.clicked.connect(self._on_preset_clicked)
        self.save_button.clicked.connect(self.save)
        self.revert_button.clicked.connect(self._on_revert_clicked)
        self.lint_panel.fix_requested.connect(self._on_lint_fix_requested)
        self.new_profile(DEFAULT_LOCAL_KIND)

    # -- public ------------------------------------------------------------------------------------

    @property
    def editing(self) -> str | None:
        return self._editing

    @property
    def draft(self) -> Profile | None:
        """The form as a valid profile, or None while a field is invalid."""
        return self._valid

    @property
    def dirty(self) -> bool:
        """Whether the form has edits the store does not have yet (the panel says so)."""
        return self._dirty

    def _set_dirty(self, dirty: bool) -> None:
        if dirty != self._dirty:
            self._dirty = dirty
            self.dirty_changed.emit(dirty)

    def load_profile(self, name: str) -> None:
        """Show a stored profile (the store is asked each time; nothing is cached here)."""
        try:
            profile = self._store.get(name)
        except KvSwitchError as exc:
            self.save_failed.emit(str(exc))
            return
        self._editing = profile.name
        self._reset_touched()
        self._fill(profile)
        self._set_dirty(False)

    def fill_from_preset(self, data: dict[str, Any]) -> None:
        """A new profile from a gallery entry's data (``preset_profile_data``); the user adds a key."""
        self._editing = None
        self._reset_touched()
        self._extra = {k: data[k] for k in ("notes",) if data.get(k)}
        draft = {"targets": ["claude"], **data}
        try:
            profile = Profile.model_validate(draft, context={"stored": True})
        except ValidationError as exc:
            self.save_failed.emit(str(exc))
            return
        self._fill(profile)
        self._field_errors.show_all = True  # the user chose this: a clash with an existing name shows now
        self._validate()
        self._set_dirty(True)  # a new profile from the gallery exists only in the form until Save
        self.form_opened.emit()

    def _reset_touched(self) -> None:
        self._field_errors.reset()
        self._extra = {}

    def new_profile(self, kind: ProfileKind | str = DEFAULT_LOCAL_KIND) -> None:
        self._editing = None
        self._reset_touched()
        self._loading = True
        self.kind_combo.setCurrentIndex(self.kind_combo.findData(ProfileKind(kind).value))
        self.name_edit.clear()
        self.key_edit.clear()
        self.key_env_combo.setCurrentIndex(0)
        self.model_edit.clear()
        self.models_box.set_values({})
        self.allow_dangerous_box.setChecked(False)
        self.gateway_fields.set_values(None)
        for spec, box in self.target_boxes.items():
            box.setChecked(spec == "claude")
        self._loading = False
        self.apply_preset(kind)
        self._set_dirty(False)
        self.form_opened.emit()

    def apply_preset(self, kind: ProfileKind | str) -> None:
        """Fill URL, env and log source from the kind's preset; keeps name, key and model."""
        from kvswitch.servers import preset  # noqa: PLC0415

        chosen = preset(kind)
        self._loading = True
        self.kind_combo.setCurrentIndex(self.kind_combo.findData(chosen.kind.value))
        self.url_edit.setText(chosen.base_url)
        env, _ = parse_env_block(self.env_edit.toPlainText())
        env.update(chosen.env)
        self.env_edit.setPlainText(format_env_block(env))
        self.log_field.set_source(chosen.log)
        self._loading = False
        self._validate()

    def save(self) -> bool:
        self._field_errors.show_all = True
        profile = self._validate()
        if profile is None:
            return False
        try:
            if self._editing is None and self._add_new is not None:
                profile = self._add_new(profile)
            elif self._editing is None:
                self._store.add(profile)
            elif self._save_existing is not None:
                if not self._save_existing(self._editing, profile):
                    return False  # it said why
            else:
                self._store.update(self._editing, profile)
        except KvSwitchError as exc:
            self._field_errors.show("name", str(exc))
            self.save_failed.emit(str(exc))
            return False
        self._editing = profile.name
        self._set_dirty(False)
        self.profile_saved.emit(profile.name)
        return True

    # -- form <-> profile ---------------------------------------------------------------------------

    def _fill(self, profile: Profile) -> None:
        self._loading = True
        self.kind_combo.setCurrentIndex(self.kind_combo.findData(profile.kind.value))
        self.name_edit.setText(profile.name)
        self.url_edit.setText(profile.base_url)
        self.key_edit.setText(profile.key)
        self.key_env_combo.setCurrentIndex(max(0, self.key_env_combo.findData(profile.key_env)))
        self.model_edit.setText(profile.model or "")
        self.models_box.set_values(profile.models.model_dump())
        self.env_edit.setPlainText(format_env_block(profile.env))
        self.allow_dangerous_box.setChecked(profile.allow_dangerous_env)
        self.gateway_fields.set_values(profile)
        for spec, box in self.target_boxes.items():
            box.setChecked(spec in profile.targets)
        self.log_field.set_source(profile.log)
        self._loading = False
        self._validate()

    def _validate(self) -> Profile | None:
        self._field_errors.hide_all()
        data, env_errors = self._form_data()
        profile: Profile | None = None
        try:
            profile = Profile.model_validate(data)
        except ValidationError as exc:
            for error in exc.errors():
                message = str(error["msg"]).removeprefix("Value error, ")
                whole = "env" if message.startswith("env ") else "name"  # a check of the whole profile
                field = str(error["loc"][0]) if error["loc"] else whole
                self._field_errors.show(field if field in self.errors else "name", message)
        if env_errors:
            self._field_errors.show("env", "; ".join(env_errors))
            profile = None
        if profile is not None and self._is_duplicate(profile.name):
            self._field_errors.show("name", self.tr("a profile with this name already exists"))
            profile = None
        self._valid = profile
        self.save_button.setEnabled(profile is not None)
        self.models_box.update_buttons()
        self.lint_panel.show_for(profile)
        self.gateway_fields.show_for(profile)
        self._show_fields_for_targets()
        return profile

    def _is_duplicate(self, name: str) -> bool:
        key = name.casefold()
        return any(p.name.casefold() == key and (self._editing is None or key != self._editing.casefold())
                   for p in self._store.profiles())

    # -- slots -------------------------------------------------------------------------------------

    def _on_field_edited(self, field: str) -> None:
        if not self._loading:
            self._field_errors.touch(field)
        self._on_field_changed()

    @Slot()
    def _on_field_changed(self, *_args: object) -> None:
        if not self._loading:
            self._validate()
            self._set_dirty(True)

    @Slot(bool)
    def _on_reveal_toggled(self, shown: bool) -> None:
        self.key_edit.setEchoMode(QLineEdit.EchoMode.Normal if shown else QLineEdit.EchoMode.Password)
        self.reveal_button.setText(self.tr("Hide") if shown else self.tr("Show"))

    @Slot()
    def _on_preset_clicked(self) -> None:
        self.apply_preset(self.kind_combo.currentData())

    @Slot()
    def _on_revert_clicked(self) -> None:
        if self._editing is not None:
            self.load_profile(self._editing)
        else:
            self.new_profile(self.kind_combo.currentData())

    @Slot(dict)
    def _on_lint_fix_requested(self, fix_env: dict[str, str]) -> None:
        """Add the fix to the env block and save at once when the rest of the form is valid."""
        env, _ = parse_env_block(self.env_edit.toPlainText())
        env.update(fix_env)
        self.env_edit.setPlainText(format_env_block(env))
        if self._valid is not None and self._editing is not None:
            self.save()
