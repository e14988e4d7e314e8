"""Settings and About: language, autostart, tray, theme, where KV Switch keeps its data, export/import.

Autostart is switched when the dialog is accepted, and a failure keeps the dialog open with the reason
shown inline. Exporting keys needs an explicit tick; such a file is written readable by the user only.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6 import __version__ as pyside_version
from PySide6.QtCore import Qt, QUrl, Signal, Slot
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from kvswitch import __version__
from kvswitch.core.applog import log_file
from kvswitch.core.errors import KvSwitchError
from kvswitch.core.paths import APP_ID, home_dir
from kvswitch.core.settings import AppSettings
from kvswitch.platform import autostart as autostart_mod
from kvswitch.ui.control import engine_text

if TYPE_CHECKING:
    from kvswitch.core.store import ProfileStore
    from kvswitch.ui.control.controller import AppController

log = logging.getLogger("kvswitch.ui.settings")

#: (setting value, label) — labels of languages are written in that language
LANGUAGES: tuple[tuple[str | None, str], ...] = ((None, ""), ("en", "English"), ("zh_CN", "简体中文"))
THEMES = ("system", "light", "dark")


class SettingsDialog(QDialog):
    """Preferences, data locations and profile export/import.

    Args:
        controller: the app's controller, which owns the settings in force, the profile store (for
            export/import) and KV Switch's directories (shown); the dialog saves through it.
        parent: the owning window.
        autostart: the login-item mechanism (default: this platform's).

    Signals:
        settings_saved(object): the saved :class:`AppSettings` after OK.
        profiles_exported(str): the file written.
        profiles_imported(list): names of the profiles added.
    """

    settings_saved = Signal(object)
    profiles_exported = Signal(str)
    profiles_imported = Signal(list)

    def __init__(self, controller: AppController, parent: QWidget | None = None, *, autostart: Any = None):
        super().__init__(parent)
        self.controller = controller
        self.paths = controller.paths
        self.settings = controller.settings.model_copy()
        self.autostart = autostart if autostart is not None else autostart_mod.for_platform()
        self.setWindowTitle(self.tr("KV Switch Settings"))
        self.setMinimumWidth(600)
        layout = QVBoxLayout(self)
        layout.addWidget(self._preferences_box())
        layout.addWidget(self._locations_box())
        layout.addWidget(self._transfer_box())
        layout.addWidget(self._about_label())
        self.status_label = QLabel()
        self.status_label.setWordWrap(True)
        self.status_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.status_label)
        box = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        box.accepted.connect(self.accept)
        box.rejected.connect(self.reject)
        layout.addWidget(box)

    # -- sections ----------------------------------------------------------------------------------

    def _preferences_box(self) -> QGroupBox:
        box = QGroupBox(self.tr("Preferences"))
        form = QFormLayout(box)
        self.language_combo = QComboBox()
        for value, label in LANGUAGES:
            self.language_combo.addItem(label or self.tr("System language"), value)
        index = self.language_combo.findData(self.settings.language)
        self.language_combo.setCurrentIndex(max(index, 0))
        form.addRow(self.tr("Language:"), self.language_combo)
        self.theme_combo = QComboBox()
        for value, label in zip(THEMES, (self.tr("Follow the system"), self.tr("Light"), self.tr("Dark")),
                                strict=True):
            self.theme_combo.addItem(label, value)
        self.theme_combo.setCurrentIndex(max(self.theme_combo.findData(self.settings.theme), 0))
        form.addRow(self.tr("Theme:"), self.theme_combo)
        self.autostart_check = QCheckBox(self.tr("Start KV Switch at login, in the tray"))
        self.autostart_check.setChecked(self._autostart_enabled())
        self.autostart_check.setToolTip(self.autostart.location)
        form.addRow(self.autostart_check)
        self.review_check = QCheckBox(self.tr("Always show the changes before applying a profile"))
        self.review_check.setChecked(self.settings.always_review_changes)
        form.addRow(self.review_check)
        self.tray_check = QCheckBox(self.tr("Keep running in the tray when the window is closed"))
        self.tray_check.setChecked(self.settings.close_to_tray)
        form.addRow(self.tray_check)
        self.alerts_check = QCheckBox(self.tr("Notify when the followed server keeps losing the cache "
                                              "inside a conversation"))
        self.alerts_check.setToolTip(self.tr("A tray notification when %1 requests in a row reuse less "
                                             "than %2 %, at most one a minute")
                                     .replace("%1", str(self.settings.reuse_alert_requests))
                                     .replace("%2", f"{self.settings.reuse_alert_threshold * 100:.0f}"))
        self.alerts_check.setChecked(self.settings.reuse_alerts)
        form.addRow(self.alerts_check)
        from PySide6.QtWidgets import QSpinBox  # noqa: PLC0415

        self.session_threshold_spin = QSpinBox()
        self.session_threshold_spin.setRange(0, 100)
        self.session_threshold_spin.setSuffix(" %")
        self.session_threshold_spin.setValue(round(self.settings.cache_alert_threshold * 100))
        self.session_threshold_spin.setToolTip(self.tr("Through the gateway: the tray names a session whose "
                                                       "last requests reuse less of their prompt than this"))
        form.addRow(self.tr("Alert when a session's hit rate falls below:"), self.session_threshold_spin)
        return box

    def _locations_box(self) -> QGroupBox:
        box = QGroupBox(self.tr("Where KV Switch keeps its data"))
        form = QFormLayout(box)
        self.location_fields: dict[str, QLineEdit] = {}
        rows = (
            ("config", self.tr("Settings and profiles:"), self.paths.config_dir),
            ("backups", self.tr("Backups of changed files:"), self.paths.backups_dir),
            ("log", self.tr("KV Switch's own log:"), log_file(self.paths)),
        )
        for key, label, path in rows:
            field = QLineEdit(str(path))
            field.setReadOnly(True)
            open_button = QPushButton(self.tr("Open"))
            target = path if key != "log" else path.parent
            open_button.clicked.connect(lambda _=False, where=target: self.open_location(where))
            row = QHBoxLayout()
            row.addWidget(field, 1)
            row.addWidget(open_button)
            form.addRow(label, row)
            self.location_fields[key] = field
        return box

    def _transfer_box(self) -> QGroupBox:
        box = QGroupBox(self.tr("Move profiles to another computer"))
        layout = QVBoxLayout(box)
        self.include_keys_check = QCheckBox(self.tr("Include API keys in the exported file "
                                                    "(it will be readable by you only)"))
        layout.addWidget(self.include_keys_check)
        row = QHBoxLayout()
        self.export_button = QPushButton(self.tr("Export profiles…"))
        self.export_button.clicked.connect(self._on_export_button_clicked)
        self.import_button = QPushButton(self.tr("Import profiles…"))
        self.import_button.clicked.connect(self._on_import_button_clicked)
        row.addWidget(self.export_button)
        row.addWidget(self.import_button)
        row.addStretch(1)
        layout.addLayout(row)
        return box

    def _about_label(self) -> QLabel:
        label = QLabel(self.tr("KV Switch %1 (%2) — Qt for Python %3")
                       .replace("%1", __version__).replace("%2", APP_ID).replace("%3", pyside_version))
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        return label

    # -- behaviour ---------------------------------------------------------------------------------

    def _autostart_enabled(self) -> bool:
        try:
            return bool(self.autostart.enabled())
        except KvSwitchError as exc:
            log.warning("cannot read the autostart state: %s", exc)
            return self.settings.autostart

    @property
    def store(self) -> ProfileStore:
        return self.controller.store

    def collected_settings(self) -> AppSettings:
        """The settings as the widgets show them now."""
        return self.settings.model_copy(update={
            "language": self.language_combo.currentData(),
            "theme": self.theme_combo.currentData(),
            "autostart": self.autostart_check.isChecked(),
            "close_to_tray": self.tray_check.isChecked(),
            "always_review_changes": self.review_check.isChecked(),
            "reuse_alerts": self.alerts_check.isChecked(),
            "cache_alert_threshold": self.session_threshold_spin.value() / 100,
        })

    def save(self) -> bool:
        """Switch autostart and write the settings; on failure show why and return False."""
        wanted = self.collected_settings()
        try:
            if wanted.autostart != self._autostart_enabled():
                autostart_mod.set_enabled(self.autostart, wanted.autostart)
            self.controller.save_settings(wanted)
        except KvSwitchError as exc:
            self.status_label.setText(engine_text.error_text(exc))
            return False
        self.settings = wanted
        self.settings_saved.emit(wanted)
        return True

    def export_to(self, path: Path) -> bool:
        from kvswitch.platform.transfer import export_profiles  # noqa: PLC0415

        include_keys = self.include_keys_check.isChecked()
        try:
            written = export_profiles(self.store, path, include_keys=include_keys)
        except KvSwitchError as exc:
            self.status_label.setText(engine_text.error_text(exc))
            return False
        note = self.tr("with API keys") if include_keys else self.tr("without API keys")
        self.status_label.setText(self.tr("Exported %1 profile(s) %2 to %3.")
                                  .replace("%1", str(len(self.store.profiles()))).replace("%2", note)
                                  .replace("%3", str(written)))
        self.profiles_exported.emit(str(written))
        return True

    def import_from(self, path: Path) -> bool:
        from kvswitch.platform.transfer import import_profiles  # noqa: PLC0415

        try:
            report = import_profiles(self.store, path)
        except KvSwitchError as exc:
            self.status_label.setText(engine_text.error_text(exc))
            return False
        self.status_label.setText(engine_text.translate(report.summary()))
        self.profiles_imported.emit(report.added)
        return True

    def open_location(self, path: Path) -> bool:
        """Show a data folder in the file manager (created first, so a fresh install has one to show)."""
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            self.status_label.setText(f"{path}: {exc.strerror or exc}")
            return False
        return QDesktopServices.openUrl(QUrl.fromLocalFile(str(path)))

    @Slot()
    def _on_export_button_clicked(self) -> None:
        name, _ = QFileDialog.getSaveFileName(self, self.tr("Export profiles"),
                                              str(home_dir() / "kvswitch-profiles.json"),
                                              self.tr("JSON files (*.json)"))
        if name:
            self.export_to(Path(name))

    @Slot()
    def _on_import_button_clicked(self) -> None:
        name, _ = QFileDialog.getOpenFileName(self, self.tr("Import profiles"), str(home_dir()),
                                              self.tr("JSON files (*.json);;All files (*)"))
        if name:
            self.import_from(Path(name))

    # -- Qt overrides ------------------------------------------------------------------------------

    def accept(self) -> None:
        if self.save():
            super().accept()
