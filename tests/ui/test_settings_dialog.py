"""Settings dialog with real files: settings.json, the XDG autostart entry, exported profiles."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QDialogButtonBox, QWidget
from uihelpers import make_profile

from kvswitch.core.applog import log_file
from kvswitch.core.paths import APP_ID
from kvswitch.core.settings import AppSettings, load_settings, save_settings
from kvswitch.platform.autostart import XdgAutostart
from kvswitch.ui.control.controller import AppController
from kvswitch.ui.shell.settings_dialog import SettingsDialog

KEY = "sk-test-0123456789abcdef0123"


@pytest.fixture
def dialog(qtbot: Any, controller: AppController) -> SettingsDialog:
    dlg = SettingsDialog(controller)
    qtbot.addWidget(dlg)
    dlg.show()
    return dlg


def click_ok(qtbot: Any, dlg: SettingsDialog) -> None:
    box = dlg.findChild(QDialogButtonBox)
    qtbot.mouseClick(box.button(QDialogButtonBox.StandardButton.Ok), Qt.MouseButton.LeftButton)


def test_shows_data_locations(dialog: SettingsDialog, paths: Any) -> None:
    fields = {key: field.text() for key, field in dialog.location_fields.items()}
    assert fields == {"config": str(paths.config_dir), "backups": str(paths.backups_dir),
                      "log": str(log_file(paths))}
    assert all(field.isReadOnly() for field in dialog.location_fields.values())


def test_ok_saves_settings_and_enables_autostart(qtbot: Any, dialog: SettingsDialog, paths: Any,
                                                 fake_home: Path) -> None:
    assert not dialog.autostart_check.isChecked()  # off by default
    dialog.autostart_check.setChecked(True)
    dialog.tray_check.setChecked(False)
    dialog.language_combo.setCurrentIndex(dialog.language_combo.findData("zh_CN"))
    dialog.theme_combo.setCurrentIndex(dialog.theme_combo.findData("dark"))

    with qtbot.waitSignal(dialog.settings_saved, timeout=2000) as saved:
        click_ok(qtbot, dialog)

    assert dialog.result() == SettingsDialog.DialogCode.Accepted
    settings = load_settings(paths)
    assert saved.args[0] == settings
    assert (settings.autostart, settings.close_to_tray, settings.language, settings.theme) == (
        True, False, "zh_CN", "dark")
    entry = fake_home / ".config" / "autostart" / f"{APP_ID}.desktop"
    assert "--minimized" in entry.read_text()

    again = SettingsDialog(AppController(paths))  # a fresh start reads what was saved
    qtbot.addWidget(again)
    assert again.autostart_check.isChecked()
    again.autostart_check.setChecked(False)
    assert again.save()
    assert not entry.exists()
    assert load_settings(paths).autostart is False


def test_autostart_failure_keeps_dialog_open(qtbot: Any, paths: Any, controller: AppController,
                                             fake_home: Path) -> None:
    (fake_home / ".config").mkdir(parents=True, exist_ok=True)
    (fake_home / ".config" / "autostart").write_text("a file where the folder belongs")
    dlg = SettingsDialog(controller, autostart=XdgAutostart(["kvswitch", "--minimized"]))
    qtbot.addWidget(dlg)
    dlg.show()
    dlg.autostart_check.setChecked(True)
    click_ok(qtbot, dlg)
    assert dlg.isVisible()
    assert "cannot enable autostart" in dlg.status_label.text()
    assert load_settings(paths).autostart is False


def test_export_needs_consent_for_keys(dialog: SettingsDialog, store: Any, tmp_path: Path) -> None:
    store.add(make_profile("work", kind="anthropic", base_url="https://api.anthropic.com", api_key=KEY))
    plain = tmp_path / "plain.json"
    assert dialog.export_to(plain)
    assert KEY not in plain.read_text()
    assert "without API keys" in dialog.status_label.text()

    dialog.include_keys_check.setChecked(True)
    with_keys = tmp_path / "keys.json"
    assert dialog.export_to(with_keys)
    assert json.loads(with_keys.read_text())["profiles"][0]["api_key"] == KEY
    assert stat.S_IMODE(with_keys.stat().st_mode) == 0o600


def test_import_adds_profiles_and_reports_errors(qtbot: Any, dialog: SettingsDialog, store: Any,
                                                 tmp_path: Path) -> None:
    source = tmp_path / "in.json"
    source.write_text(json.dumps({"format": "kvswitch-profiles", "format_version": 1, "profiles": [
        {"name": "gateway", "kind": "openai-compatible", "base_url": "https://gw.example.com/v1"}]}))
    with qtbot.waitSignal(dialog.profiles_imported, timeout=2000) as imported:
        assert dialog.import_from(source)
    assert imported.args[0] == ["gateway"]
    assert store.names() == ["gateway"]
    assert "no API key in the file for: gateway" in dialog.status_label.text()

    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2")
    assert not dialog.import_from(bad)
    assert "not a KV Switch profiles file" in dialog.status_label.text()


def test_shows_the_settings_in_force_and_takes_a_parent(qtbot: Any, paths: Any) -> None:
    """The dialog shows the controller's settings (read once at start), not a second read of the file."""
    save_settings(paths, AppSettings(theme="light", language="en"))
    controller = AppController(paths)
    parent = QWidget()
    qtbot.addWidget(parent)
    short = SettingsDialog(controller, parent)
    assert short.parent() is parent
    assert (short.theme_combo.currentData(), short.language_combo.currentData()) == ("light", "en")
    controller.save_settings(AppSettings(theme="dark"))
    save_settings(paths, AppSettings(theme="light"))  # another process writes the file meanwhile
    given = SettingsDialog(controller)
    qtbot.addWidget(given)
    assert given.theme_combo.currentData() == "dark"


def test_open_location_creates_the_folder(dialog: SettingsDialog, paths: Any,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh install has no backups folder yet; "Open" creates it (the file manager itself is faked)."""
    opened: list[str] = []
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: opened.append(url.toLocalFile()) or True)
    assert dialog.open_location(paths.backups_dir)
    assert paths.backups_dir.is_dir()
    assert opened == [str(paths.backups_dir)]


def test_reuse_alerts_switch_is_on_by_default_and_saved(qtbot: Any, dialog: SettingsDialog,
                                                        paths: Any) -> None:
    assert dialog.alerts_check.isChecked()
    assert "3 requests in a row reuse less than 50 %" in dialog.alerts_check.toolTip()
    dialog.alerts_check.setChecked(False)
    assert dialog.save()
    assert load_settings(paths).reuse_alerts is False
    again = SettingsDialog(AppController(paths))
    qtbot.addWidget(again)
    assert not again.alerts_check.isChecked()
