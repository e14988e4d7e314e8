"""A window rebuilt for another language leaves nothing of the old one listening (issue 38, item 1).

The shell builds a new ``MainWindow`` and deletes the old one; anything the old window had hooked into
what outlives it (the profile store's subscribers, the controller's signals) must go with it, or the
next change reaches a deleted object: a save after Settings → Language failed with "Signal source has
been deleted" and the new profile never reached the list.
"""

from __future__ import annotations

from typing import Any

import pytest
import shiboken6
from PySide6.QtCore import QCoreApplication, QEvent, QMetaMethod, QObject
from PySide6.QtWidgets import QApplication

from kvswitch.core.models import ProfileKind
from kvswitch.ui import i18n


@pytest.fixture
def shell(qtbot: Any, qapp: Any, paths: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    from kvswitch.ui.shell.shell import AppShell

    monkeypatch.setattr(QApplication, "quit", staticmethod(lambda: None))
    i18n.install(qapp, "zh_CN")
    app_shell = AppShell(paths, None, tray_available=True)
    app_shell.start()
    yield app_shell
    app_shell.shutdown()
    i18n.install(qapp, "en")


def _switch_to_english(qtbot: Any, shell: Any) -> Any:
    """Settings → Language → English → OK, as the dialog reports it; the old window is really deleted."""
    from kvswitch.core.settings import AppSettings

    first = shell.window
    first._on_settings_saved(AppSettings(language="zh_CN"), AppSettings(language="en"))
    assert shell.window is not first
    qtbot.addWidget(shell.window)
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    assert not shiboken6.isValid(first)
    assert i18n.current() == "en"
    return shell.window


def test_a_gateway_profile_saved_after_a_language_switch_reaches_the_list(qtbot: Any, shell: Any) -> None:
    window = _switch_to_english(qtbot, shell)
    window._on_new_kind_chosen(ProfileKind.LLAMA_CPP)
    editor = window.editor
    editor.name_edit.setText("local-gw")
    editor.url_edit.setText("http://127.0.0.1:8080")
    editor.gateway_fields.via_gateway_box.setChecked(True)
    assert editor.save_button.isEnabled()
    with qtbot.waitSignal(window.model.rowsInserted, timeout=3000):
        editor.save_button.click()
    assert shell.controller.store.get("local-gw").via_gateway
    assert window.model.row_of("local-gw") == 0
    assert window.selected_name() == "local-gw"
    assert not editor.dirty


def test_the_verify_views_of_a_rebuilt_window_follow_the_controller(qtbot: Any, shell: Any) -> None:
    """The Verify tab's buttons are switched by the controller's verify signals: only the new window's."""
    window = _switch_to_english(qtbot, shell)
    window.build_tabs()
    controller = shell.controller
    controller.verify_started.emit("x")
    assert not window.verify_card.ablate_view.run_button.isEnabled()
    controller.verify_failed.emit("stopped")
    assert window.verify_card.ablate_view.run_button.isEnabled()


def _listeners(obj: QObject) -> dict[str, int]:
    """How many connections each of ``obj``'s signals has."""
    meta = obj.metaObject()
    methods = (meta.method(i) for i in range(meta.methodCount()))
    names = (bytes(m.methodSignature().data()).decode() for m in methods
             if m.methodType() == QMetaMethod.MethodType.Signal)
    return {name: obj.receivers("2" + name) for name in names}


def test_a_rebuilt_window_leaves_no_listener_behind(qtbot: Any, shell: Any) -> None:
    """Whatever outlives the window (controller, verify summary, usage digest, store) has as many
    listeners after the rebuild as before it: the old window's went with it."""
    controller = shell.controller
    lasting = (controller, controller.verify_summary, controller.usage_digest)
    before = [_listeners(obj) for obj in lasting]
    subscribers = len(controller.store._subscribers)
    _switch_to_english(qtbot, shell)
    assert [_listeners(obj) for obj in lasting] == before
    assert len(controller.store._subscribers) == subscribers
