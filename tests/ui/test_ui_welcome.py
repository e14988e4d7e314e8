"""No editor before the first profile: the Profile tab welcomes a new user with the ways in, the form
comes when there is a profile or the user asks for one, and goes again with the last profile."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from uihelpers import make_profile

from kvswitch.ui.shell.shell import AppShell


@pytest.fixture
def shell(qtbot: Any, paths: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(QApplication, "quit", staticmethod(lambda: None))
    app_shell = AppShell(paths, None, tray_available=True)
    qtbot.addWidget(app_shell.window)
    app_shell.window.show()
    yield app_shell
    app_shell.shutdown()


def test_first_window_welcomes_instead_of_showing_a_blank_form(qtbot: Any, shell: Any) -> None:
    window = shell.window
    qtbot.waitUntil(lambda: window.profile_page is not None, timeout=5000)  # built after first paint
    page = window.profile_page
    assert page.showing_welcome
    assert page.welcome.isVisibleTo(window)
    assert not window.editor.isVisibleTo(window)  # no llama.cpp form beside "No profiles yet"
    assert not window.editor.url_edit.isVisibleTo(window)
    texts = [page.welcome.add_button.text(), page.welcome.setup_button.text(),
             page.welcome.import_claude_button.text(), page.welcome.import_cc_switch_button.text()]
    assert texts == ["Add a profile…", "Run the setup assistant…", "Import from Claude Code",
                     "Import from CC Switch"]
    assert "prompt cache" in page.welcome.text.text()


def test_add_a_profile_opens_the_gallery_and_the_form_stays_until_the_last_profile_goes(
        qtbot: Any, window: Any, store: Any) -> None:
    page = window.profile_page
    assert page.showing_welcome
    page.welcome.add_button.click()
    gallery = window.gallery
    with qtbot.waitSignal(gallery.detection_finished, timeout=10000):
        pass
    assert gallery.isVisible()
    assert gallery.select_title("Ollama")
    gallery.buttons.accepted.emit()
    assert not page.showing_welcome  # the user asked for a profile: the form, filled from the preset
    assert window.editor.url_edit.isVisibleTo(window)
    with qtbot.waitSignal(window.model.rowsInserted, timeout=3000):
        window.editor.save_button.click()
    store.add(make_profile("second", base_url="http://127.0.0.1:8081"))
    store.remove("second")
    assert not page.showing_welcome  # one profile is left: its form
    store.remove(window.editor.editing)
    assert page.showing_welcome  # the last one went, nobody asked for a new one


def test_new_profile_of_a_kind_shows_the_form(qtbot: Any, window: Any) -> None:
    assert window.profile_page.showing_welcome
    window.new_blank_profile()
    assert not window.profile_page.showing_welcome
    assert window.editor.name_edit.isVisibleTo(window)


def test_a_stored_profile_opens_on_its_form(qtbot: Any, controller: Any, store: Any) -> None:
    from kvswitch.ui.shell.main_window import MainWindow

    store.add(make_profile("alpha"))
    window = MainWindow(controller)
    qtbot.addWidget(window)
    window.show()
    assert not window.profile_page.showing_welcome
    assert window.editor.name_edit.text() == "alpha"
    window.log_panel.stop()


def test_the_setup_assistant_opens_from_the_welcome(qtbot: Any, window: Any, fake_home: Path) -> None:
    seen: list[str] = []

    def close_the_dialog() -> None:
        dialog = QApplication.activeModalWidget()
        seen.append(dialog.windowTitle() if dialog is not None else "")
        if dialog is not None:
            dialog.reject()

    QTimer.singleShot(300, close_the_dialog)
    window.profile_page.welcome.setup_button.click()  # modal: returns once the timer closed it
    assert seen == ["Set up KV Switch"]
