"""Tray menu switching, close-to-tray vs no tray, single instance, error reports, smoke test."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication
from uihelpers import (
    make_profile,
    shell_fixture,  # noqa: F401 - the shell fixture
)

from kvswitch.ui import errors
from kvswitch.ui.profiles.profile_model import IsActiveRole
from kvswitch.ui.shell.shell import AppShell
from kvswitch.ui.shell.single_instance import SingleInstance, send_to_running, server_name
from kvswitch.ui.shell.tray import TrayIcon
from kvswitch.ui.widgets.error_dialog import ErrorReportDialog

REPO = Path(__file__).resolve().parents[2]


def test_tray_menu_switches_profile(qtbot: Any, shell: Any, fake_home: Path) -> None:
    store = shell.controller.store
    safe = {"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"}
    store.add(make_profile("alpha", base_url="http://127.0.0.1:8081", env=safe))
    store.add(make_profile("beta", base_url="http://127.0.0.1:8082", env=safe))
    tray = shell.tray
    tray.menu.aboutToShow.emit()
    assert set(tray.profile_actions) == {"alpha", "beta"}
    assert not any(action.isChecked() for action in tray.profile_actions.values())
    texts = [a.text() for a in tray.menu.actions()]
    assert {"Verify cache", "Show window", "Quit"} <= set(texts)

    with qtbot.waitSignal(shell.controller.profile_applied, timeout=5000):
        tray.profile_actions["beta"].trigger()
    settings = json.loads((fake_home / ".claude" / "settings.json").read_text())
    assert settings["env"]["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:8082"
    tray.menu.aboutToShow.emit()
    assert tray.profile_actions["beta"].isChecked()
    assert not tray.profile_actions["alpha"].isChecked()
    assert "beta" in tray.icon.toolTip()
    model = shell.window.model
    assert model.index(model.row_of("beta")).data(IsActiveRole) is True

    with qtbot.waitSignal(shell.controller.profile_applied, timeout=5000):
        tray.profile_actions["alpha"].trigger()
    settings = json.loads((fake_home / ".claude" / "settings.json").read_text())
    assert settings["env"]["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:8081"


def test_tray_icon_follows_cache_state(qtbot: Any, shell: Any) -> None:
    before = shell.tray.icon.icon().cacheKey()
    shell.controller.note_verdict("miss")
    assert shell.tray.icon.icon().cacheKey() != before
    assert "cache miss" in shell.tray.icon.toolTip() or "no profile" in shell.tray.icon.toolTip()


def test_close_hides_to_tray_and_quit_action_quits(qtbot: Any, shell: Any) -> None:
    shell.start()
    assert shell.window.isVisible()
    assert shell.window.close_to_tray
    assert not QApplication.quitOnLastWindowClosed()
    with qtbot.assertNotEmitted(shell.window.quit_requested):
        shell.window.close()
    assert not shell.window.isVisible()
    assert shell.tray is not None
    with qtbot.waitSignal(shell.tray.show_window_requested, timeout=1000):
        shell.tray.show_action.trigger()
    assert shell.window.isVisible()
    with qtbot.waitSignal(shell.tray.quit_requested, timeout=1000):
        shell.tray.quit_action.trigger()


def test_without_tray_window_is_the_way_in(qtbot: Any, paths: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    quits: list[bool] = []
    monkeypatch.setattr(QApplication, "quit", staticmethod(lambda: quits.append(True)))
    app_shell = AppShell(paths, None, minimized=True, tray_available=False)
    qtbot.addWidget(app_shell.window)
    try:
        app_shell.start()
        assert app_shell.tray is None
        assert app_shell.window.isVisible()  # --minimized cannot hide the only way in
        assert not app_shell.window.close_to_tray
        app_shell.window.close()
        assert quits == [True]
    finally:
        app_shell.shutdown()
        QApplication.setQuitOnLastWindowClosed(False)


def test_minimized_with_tray_starts_hidden(qtbot: Any, paths: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    app_shell = AppShell(paths, None, minimized=True, tray_available=True)
    qtbot.addWidget(app_shell.window)
    try:
        app_shell.start()
        assert not app_shell.window.isVisible()
        app_shell.on_instance_message("show")
        assert app_shell.window.isVisible()
    finally:
        app_shell.shutdown()


def test_single_instance_second_launch_sends_show(qtbot: Any, paths: Any, tmp_path: Path) -> None:
    name = server_name(paths.config_dir)
    assert name != server_name(tmp_path)
    first = SingleInstance(name)
    assert first.listen()
    try:
        with qtbot.waitSignal(first.message_received, timeout=3000) as blocker:
            sender = threading.Thread(target=lambda: send_to_running(name, "show"))
            sender.start()
            qtbot.waitUntil(lambda: not sender.is_alive(), timeout=3000)
        assert blocker.args == ["show"]
    finally:
        first.close()
    assert not send_to_running(name)  # nobody listens any more


@pytest.mark.skipif(sys.platform == "win32", reason="stale socket files exist on Unix only")
def test_stale_socket_is_removed(qtbot: Any, paths: Any, tmp_path: Path) -> None:
    import socket

    from PySide6.QtNetwork import QLocalServer

    probe = QLocalServer()
    name = server_name(paths.config_dir)
    assert probe.listen(name)
    socket_path = probe.fullServerName()
    probe.close()
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(socket_path)  # a crashed instance's leftover: a socket file nobody accepts on
    stale.close()
    assert os.path.exists(socket_path)
    instance = SingleInstance(name)
    try:
        assert instance.listen()
    finally:
        instance.close()


def test_unexpected_error_report_has_no_keys(qtbot: Any, caplog: pytest.LogCaptureFixture) -> None:
    key = "sk-live-0123456789abcdefXYZ"
    errors.register_secrets([key])
    try:
        raise RuntimeError(f"request failed with Authorization: Bearer {key} and api_key={key}")
    except RuntimeError as exc:
        report = errors.build_report(type(exc), exc, exc.__traceback__)
    assert "RuntimeError" in report
    assert key not in report
    assert "Traceback" in report
    errors.install_excepthooks()
    try:
        with caplog.at_level("ERROR", logger="kvswitch.ui.errors"):
            def boom() -> None:
                raise ValueError(f"worker broke with {key}")

            thread = threading.Thread(target=boom, name="worker")
            thread.start()
            thread.join()
            qtbot.waitUntil(lambda: any("worker broke" in r.getMessage() for r in caplog.records),
                            timeout=3000)
        assert all(key not in r.getMessage() for r in caplog.records)
    finally:
        sys.excepthook = sys.__excepthook__
        threading.excepthook = threading.__excepthook__


def test_report_dialog_is_copyable(qtbot: Any) -> None:
    dialog = ErrorReportDialog("title", "summary", "report text")
    qtbot.addWidget(dialog)
    dialog._on_copy_clicked()
    assert QApplication.clipboard().text() == "report text"


def test_smoke_test_command(tmp_path: Path) -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(REPO / "app"),
           "KVSWITCH_CONFIG_DIR": str(tmp_path / "cfg")}
    out = subprocess.run([sys.executable, "-m", "kvswitch", "--smoke-test"], env=env, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("kvswitch smoke-test OK")
    assert len(out.stdout.strip().splitlines()) == 1


def test_tray_available_reports_platform(qtbot: Any) -> None:
    assert TrayIcon.available() in (True, False)


def test_deferred_start_shows_frame_then_loads(qtbot: Any, paths: Any, store: Any) -> None:
    """The app's own start: a frame first, then profiles, settings and tray on the next turns."""
    store.add(make_profile("local", env={"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"}))
    app_shell = AppShell(paths, deferred=True, tray_available=True)
    qtbot.addWidget(app_shell.window)
    try:
        assert not app_shell.window.content_built
        with qtbot.waitSignal(app_shell.ready, timeout=5000):
            app_shell.start()
            assert app_shell.window.isVisible()
        assert app_shell.window.content_built
        assert app_shell.window.model.rowCount() == 1
        assert app_shell.tray is not None
        assert app_shell.window.close_to_tray
    finally:
        app_shell.shutdown()


def test_deferred_start_offers_setup_assistant_without_profiles(qtbot: Any, paths: Any,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from kvswitch.ui.shell.main_window import MainWindow

    opened: list[bool] = []
    monkeypatch.setattr(MainWindow, "open_first_run", lambda self: opened.append(True))
    app_shell = AppShell(paths, deferred=True, tray_available=False)
    qtbot.addWidget(app_shell.window)
    try:
        with qtbot.waitSignal(app_shell.ready, timeout=5000):
            app_shell.start()
        qtbot.waitUntil(lambda: opened == [True], timeout=3000)
        assert app_shell.window.first_run_action is not None
        assert app_shell.window.settings_action is not None
    finally:
        app_shell.shutdown()
        QApplication.setQuitOnLastWindowClosed(False)


def test_second_launch_asks_the_first_to_show_and_exits(qtbot: Any, tmp_path: Path) -> None:
    """Two real ``kvswitch`` processes on one config dir: the second hands over and exits at once."""
    config = tmp_path / "cfg"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(REPO / "app"),
           "KVSWITCH_CONFIG_DIR": str(config), "KVSWITCH_NO_ERROR_DIALOGS": "1"}
    first = subprocess.Popen([sys.executable, "-m", "kvswitch"], env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    try:
        name = server_name(config)
        qtbot.waitUntil(lambda: send_to_running(name, "ping"), timeout=30000)
        second = subprocess.run([sys.executable, "-m", "kvswitch"], env=env, capture_output=True, text=True,
                                timeout=30)
        assert second.returncode == 0
        assert "another KV Switch is running" in (config / "logs" / "kvswitch.log").read_text()
        assert first.poll() is None  # the first one keeps running
    finally:
        first.terminate()
        first.wait(10)


def test_unreadable_profiles_stop_the_start_with_the_store_message(tmp_path: Path) -> None:
    config = tmp_path / "cfg"
    config.mkdir()
    (config / "profiles.json").write_text('{"schema_version": 2, "profiles": [ {,] }')
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(REPO / "app"),
           "KVSWITCH_CONFIG_DIR": str(config), "KVSWITCH_NO_ERROR_DIALOGS": "1"}
    out = subprocess.run([sys.executable, "-m", "kvswitch"], env=env, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode != 0
    assert "Traceback" not in out.stderr
    log = (config / "logs" / "kvswitch.log").read_text()
    assert "KV Switch cannot start" in log
    assert "profiles.json:1:" in log
