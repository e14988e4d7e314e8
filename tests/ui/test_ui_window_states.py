"""The window a new user meets: empty state, gallery, cards, quiet validation, enabled-only-when-useful
actions, duplicate / reorder, shortcuts and the tray's text. Real widgets, real files in the temp HOME."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from uihelpers import make_profile

from kvswitch.ui.profiles.diff_dialog import ApplyDialog
from kvswitch.ui.profiles.profile_card import card_lines
from kvswitch.ui.shell.shell import AppShell

SAFE = {"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"}


def no_servers() -> list[Any]:
    return []


@pytest.fixture
def confirm_apply(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ApplyDialog, "ask", staticmethod(lambda *_args: True))


@pytest.fixture
def shell(qtbot: Any, paths: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(QApplication, "quit", staticmethod(lambda: None))
    app_shell = AppShell(paths, None, tray_available=True)
    qtbot.addWidget(app_shell.window)
    app_shell.window.show()
    yield app_shell
    app_shell.shutdown()


def open_gallery(qtbot: Any, window: Any) -> Any:
    gallery = window.open_gallery(detector=no_servers)
    with qtbot.waitSignal(gallery.detection_finished, timeout=5000):
        pass
    return gallery


def test_new_user_adds_deepseek_from_the_gallery_applies_it_and_switches_back_from_the_tray(
        qtbot: Any, shell: Any, fake_home: Path, confirm_apply: None) -> None:
    window, tray = shell.window, shell.tray
    assert window.list_stack.currentWidget() is window.empty_state
    assert window.empty_state.isVisibleTo(window)
    assert not window.apply_action.isEnabled()
    assert not window.undo_action.isEnabled()

    # a local profile first, from the gallery's local presets
    window.empty_state.add_button.click()
    gallery = window.gallery
    with qtbot.waitSignal(gallery.detection_finished, timeout=10000):
        pass
    assert gallery.select_title("llama.cpp (llama-server)")
    gallery.buttons.accepted.emit()
    assert not gallery.isVisible()
    with qtbot.waitSignal(window.model.rowsInserted, timeout=2000):
        window.editor.save_button.click()
    local = window.selected_name()
    assert local == "llama.cpp (llama-server)"
    assert window.list_stack.currentWidget() is window.list_view

    # then DeepSeek: search, pick, add a key, save, apply
    gallery = open_gallery(qtbot, window)
    qtbot.keyClicks(gallery.search_edit, "deepseek")
    assert gallery.entry_titles()[0] == "DeepSeek"  # others serve DeepSeek models too
    assert gallery.list.currentItem().text().startswith("DeepSeek")
    gallery.buttons.accepted.emit()
    editor = window.editor
    assert editor.url_edit.text() == "https://api.deepseek.com/anthropic"
    assert editor.models_box.edits["haiku"].text() == "deepseek-flash"
    qtbot.keyClicks(editor.key_edit, "sk-deepseek-test-123456789")
    with qtbot.waitSignal(window.model.rowsInserted, timeout=2000):
        editor.save_button.click()
    assert window.selected_name() == "DeepSeek"
    with qtbot.waitSignal(window.controller.profile_applied, timeout=5000):
        window.apply_action.trigger()
    env = json.loads((fake_home / ".claude" / "settings.json").read_text())["env"]
    assert env["ANTHROPIC_BASE_URL"] == "https://api.deepseek.com/anthropic"
    assert env["ANTHROPIC_AUTH_TOKEN"] == "sk-deepseek-test-123456789"
    assert env["ANTHROPIC_MODEL"] == "deepseek-v4-pro"
    assert env["ANTHROPIC_DEFAULT_HAIKU_MODEL"] == "deepseek-flash"
    assert env["ANTHROPIC_DEFAULT_OPUS_MODEL"] == "deepseek-v4-pro"
    assert window.undo_action.isEnabled()
    row = window.model.row_of("DeepSeek")
    assert card_lines(window.model.index(row))[1] == "DeepSeek · Anthropic API · deepseek-v4-pro"

    # one click in the tray back to the local server
    tray.menu.aboutToShow.emit()
    assert tray.profile_actions["DeepSeek"].isChecked()
    with qtbot.waitSignal(shell.controller.profile_applied, timeout=5000):
        tray.profile_actions[local].trigger()
    env = json.loads((fake_home / ".claude" / "settings.json").read_text())["env"]
    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:8080"
    assert "ANTHROPIC_DEFAULT_HAIKU_MODEL" not in env


def test_a_blank_form_shows_no_error_until_a_field_is_edited(qtbot: Any, window: Any) -> None:
    window.new_blank_profile()  # the user asks for an empty form (there is none before)
    editor = window.editor
    assert all(label.isHidden() for label in editor.errors.values())
    assert not editor.save_button.isEnabled()  # nothing to save yet, but nothing in red either
    qtbot.keyClicks(editor.url_edit, "x")
    assert editor.errors["base_url"].isVisibleTo(window)
    assert editor.errors["name"].isHidden()  # still untouched
    qtbot.keyClicks(editor.name_edit, "a")
    editor.name_edit.clear()
    assert "1-64 characters" in editor.errors["name"].text()
    assert editor.errors["name"].isVisibleTo(window)


def test_save_attempt_shows_every_error(qtbot: Any, window: Any) -> None:
    window.new_blank_profile()
    editor = window.editor
    editor.url_edit.setText("")
    editor.save()
    assert editor.errors["name"].isVisibleTo(window)


def test_actions_are_disabled_when_they_cannot_apply(qtbot: Any, window: Any, store: Any,
                                                     confirm_apply: None) -> None:
    store.add(make_profile("alpha", env=SAFE))
    assert window.list_stack.currentWidget() is window.list_view
    window.list_view.clearSelection()
    window.list_view.setCurrentIndex(window.model.index(-1))
    window._update_actions()
    assert not window.apply_action.isEnabled()
    assert not window.verify_action.isEnabled()
    assert not window.undo_action.isEnabled()
    assert not window.profile_buttons.duplicate_button.isEnabled()
    window._select("alpha")
    assert window.apply_action.isEnabled()
    assert not window.verify_action.isEnabled()  # nothing applied: nothing to verify
    with qtbot.waitSignal(window.controller.profile_applied, timeout=5000):
        window.apply_action.trigger()
    assert window.verify_action.isEnabled()
    assert window.undo_action.isEnabled()
    with qtbot.waitSignal(window.controller.undo_finished, timeout=5000):
        window.undo_action.trigger()
    assert not window.undo_action.isEnabled()  # the only apply was walked back


def test_duplicate_and_reorder_keep_the_order_in_profiles_json(qtbot: Any, window: Any, store: Any,
                                                               paths: Any) -> None:
    for name in ("alpha", "beta"):
        store.add(make_profile(name, env=SAFE))
    window._select("alpha")
    window.profile_buttons.duplicate_button.click()
    assert window.selected_name() == "alpha copy"
    assert store.get("alpha copy").base_url == store.get("alpha").base_url
    window.profile_buttons.down_button.click()
    order = [p["name"] for p in json.loads(paths.profiles_file.read_text())["profiles"]]
    assert order == ["alpha", "beta", "alpha copy"]
    assert window.selected_name() == "alpha copy"
    assert not window.profile_buttons.down_button.isEnabled()  # already last
    window.profile_buttons.up_button.click()
    window.profile_buttons.up_button.click()
    assert [window.model.index(r).data() for r in range(3)] == ["alpha copy", "alpha", "beta"]
    assert not window.profile_buttons.up_button.isEnabled()


def test_shortcuts_new_apply_verify_find(qtbot: Any, window: Any, store: Any, confirm_apply: None) -> None:
    store.add(make_profile("alpha", env=SAFE))
    store.add(make_profile("beta", base_url="http://127.0.0.1:8082", env=SAFE))
    window.activateWindow()
    window._select("beta")
    assert window.apply_action.shortcut().toString() == "Ctrl+Return"
    assert window.verify_action.shortcut().toString() == "Ctrl+R"
    with qtbot.waitSignal(window.controller.profile_applied, timeout=5000):
        qtbot.keyClick(window.list_view, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert store.active_name == "beta"
    qtbot.keyClick(window.list_view, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert window.filter_edit.hasFocus()
    qtbot.keyClicks(window.filter_edit, "8082")
    assert window.list_view.isRowHidden(window.model.row_of("alpha"))
    assert not window.list_view.isRowHidden(window.model.row_of("beta"))
    window.filter_edit.clear()
    with qtbot.waitSignal(window.controller.verify_started, timeout=5000):
        qtbot.keyClick(window.list_view, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier)
    window.controller.cancel_verify()
    qtbot.keyClick(window.list_view, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: getattr(window, "gallery", None) is not None and window.gallery.isVisible())
    with qtbot.waitSignal(window.gallery.detection_finished, timeout=10000):
        pass
    window.gallery.close()


def test_cards_show_kind_host_model_active_badge_and_last_verdict(qtbot: Any, window: Any, store: Any,
                                                                   paths: Any) -> None:
    from kvswitch.ui.profiles.profile_model import IsActiveRole
    from kvswitch.verify.history import HistoryEntry, VerifyHistory, now

    store.add(make_profile("alpha", model="qwen3-8b", env=SAFE))
    index = window.model.index(0)
    assert card_lines(index) == ("alpha", "127.0.0.1:8080 · qwen3-8b", "not verified yet")
    VerifyHistory(paths.data_dir / "verify-history").append(
        HistoryEntry(time=now(), profile="alpha", check="synthetic", verdict="HIT"))
    # another process wrote the history: the shell's poll notices and the cards' summary is read again
    # off the GUI thread
    with qtbot.waitSignal(window.controller.verify_summary.changed, timeout=5000):
        window.controller.verify_summary.reload_if_changed()
    assert card_lines(index)[2] == "HIT · just now"
    assert index.data(IsActiveRole) is False
    assert window.list_view.visualRect(index).height() >= 3 * window.fontMetrics().height()


def test_tray_shows_the_active_profile_and_its_last_verdict(qtbot: Any, shell: Any, paths: Any,
                                                            confirm_apply: None) -> None:
    from kvswitch.verify.history import HistoryEntry, VerifyHistory, now

    store = shell.controller.store
    store.add(make_profile("alpha", env=SAFE))
    store.add(make_profile("beta", base_url="http://127.0.0.1:8082", env=SAFE))
    VerifyHistory(paths.data_dir / "verify-history").append(
        HistoryEntry(time=now(), profile="beta", check="synthetic", verdict="PARTIAL"))
    with qtbot.waitSignal(shell.controller.verify_summary.changed, timeout=5000):
        shell.controller.verify_summary.reload_if_changed()  # what the shell's poll does
    tray = shell.tray
    tray.menu.aboutToShow.emit()
    with qtbot.waitSignal(shell.controller.profile_applied, timeout=5000):
        tray.profile_actions["beta"].trigger()
    tray.menu.aboutToShow.emit()
    assert tray.profile_actions["beta"].text() == "beta — PARTIAL · just now"
    assert tray.profile_actions["alpha"].text() == "alpha"
    assert "beta" in tray.icon.toolTip()
    assert "Last verify: PARTIAL · just now" in tray.icon.toolTip()


def test_empty_state_and_gallery_speak_chinese_with_vendor_names_in_chinese(qtbot: Any, qapp: Any,
                                                                          controller: Any) -> None:
    from kvswitch.ui import i18n
    from kvswitch.ui.shell.main_window import MainWindow

    assert i18n.install(qapp, "zh_CN") == "zh_CN"
    try:
        window = MainWindow(controller)
        qtbot.addWidget(window)
        assert window.empty_state.add_button.text() == "添加第一个配置"
        assert window.profile_buttons.duplicate_button.text() == "复制"
        assert window.editor.models_box.fetch_button.text() == "获取模型列表"
        gallery = open_gallery(qtbot, window)
        assert "深度求索 DeepSeek" in gallery.entry_titles()
        assert gallery.status.text() == "本机当前没有运行中的服务器。"
        gallery.close()
        window.log_panel.stop()
    finally:
        i18n.install(qapp, "en")


def test_gallery_search_hides_sections_without_a_match(qtbot: Any, window: Any) -> None:
    gallery = open_gallery(qtbot, window)
    headers = {gallery.list.item(i).text(): gallery.list.item(i) for i in range(gallery.list.count())
               if gallery.list.item(i).flags() == Qt.ItemFlag.NoItemFlags}
    assert headers["Running on this machine"].isHidden()  # the detector found nothing
    assert not headers["Local servers (default ports)"].isHidden()
    qtbot.keyClicks(gallery.search_edit, "deepseek")
    assert headers["Local servers (default ports)"].isHidden()
    assert not headers["Cloud vendors"].isHidden()
    gallery.search_edit.setText("no such vendor at all")
    assert gallery.entry_titles() == []
    assert not gallery.buttons.button(gallery.buttons.StandardButton.Ok).isEnabled()
    gallery.close()


def _mean_lightness(widget: Any) -> float:
    image = widget.grab().toImage()
    points = [(x, y) for x in range(0, image.width(), 7) for y in range(0, image.height(), 7)]
    return sum(image.pixelColor(x, y).lightness() for x, y in points) / len(points)


def test_cards_follow_light_and_dark_palettes(qtbot: Any, qapp: Any, window: Any, store: Any) -> None:
    from PySide6.QtGui import QColor, QPalette

    from kvswitch.ui.profiles.profile_card import glyph_color

    store.add(make_profile("alpha", model="qwen3-8b", env=SAFE))
    light_palette = qapp.palette()
    dark = QPalette()
    for role, color in ((QPalette.ColorRole.Window, "#2b2b2b"), (QPalette.ColorRole.WindowText, "#e0e0e0"),
                        (QPalette.ColorRole.Base, "#1e1e1e"), (QPalette.ColorRole.Text, "#e0e0e0"),
                        (QPalette.ColorRole.AlternateBase, "#262626")):
        dark.setColor(role, QColor(color))
    light = _mean_lightness(window.list_view)
    qapp.setPalette(dark)
    try:
        qtbot.wait(50)
        assert _mean_lightness(window.list_view) < 80 < light
        assert glyph_color("vllm", dark).lightness() > glyph_color("vllm", light_palette).lightness()
    finally:
        qapp.setPalette(light_palette)


def test_a_vendor_whose_key_goes_in_anthropic_api_key_writes_it_there(qtbot: Any, window: Any, store: Any,
                                                                      fake_home: Path,
                                                                      confirm_apply: None) -> None:
    gallery = open_gallery(qtbot, window)
    assert gallery.select_title("Alibaba Cloud Bailian")
    gallery.buttons.accepted.emit()
    editor = window.editor
    assert editor.key_env_combo.currentText() == "ANTHROPIC_API_KEY"
    qtbot.keyClicks(editor.key_edit, "sk-bailian-test-123456789")
    with qtbot.waitSignal(window.model.rowsInserted, timeout=2000):
        editor.save_button.click()
    name = window.selected_name()
    assert store.get(name).key_env == "ANTHROPIC_API_KEY"
    window.editor.load_profile(name)  # reloading keeps the variable
    assert editor.key_env_combo.currentText() == "ANTHROPIC_API_KEY"
    with qtbot.waitSignal(window.controller.profile_applied, timeout=5000):
        window.apply_action.trigger()
    env = json.loads((fake_home / ".claude" / "settings.json").read_text())["env"]
    assert env["ANTHROPIC_API_KEY"] == "sk-bailian-test-123456789"
    assert "ANTHROPIC_AUTH_TOKEN" not in env


def test_closing_the_gallery_while_detection_runs_is_harmless(qtbot: Any, window: Any) -> None:
    import time

    def slow_detector() -> list[Any]:
        time.sleep(0.4)
        return []

    gallery = window.open_gallery(detector=slow_detector)
    seen: list[int] = []
    gallery.detection_finished.connect(seen.append)
    gallery.reject()
    qtbot.wait(700)
    assert seen == []  # the late answer went nowhere, and raised nothing


@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_gallery_vendor_rows_show_their_url_and_model_line_in_both_languages(qtbot: Any, qapp: Any,
                                                                            controller: Any,
                                                                            language: str) -> None:
    """The second line (``URL · model``) is drawn, not elided away: a CJK title is laid out in a taller
    fallback font than the UI font Qt's own row estimate uses."""
    from kvswitch.core.catalog import vendor
    from kvswitch.ui import i18n
    from kvswitch.ui.shell.main_window import MainWindow

    assert i18n.install(qapp, language) == language
    try:
        window = MainWindow(controller)
        qtbot.addWidget(window)
        window.show()
        gallery = open_gallery(qtbot, window)
        gallery.show()
        deepseek = vendor("deepseek")
        assert gallery.select_title(deepseek.display_name(language))
        item = gallery.list.currentItem()
        gallery.list.scrollToItem(item)
        qtbot.wait(50)
        rect = gallery.list.visualItemRect(item)
        title_width = gallery.list.fontMetrics().horizontalAdvance(deepseek.display_name(language) + "…")
        image = gallery.list.viewport().grab().toImage()
        ratio = image.devicePixelRatio()
        text = gallery.list.palette().color(gallery.list.palette().ColorRole.HighlightedText)
        # the URL line runs far to the right of the title: pixels of its text exist there
        left = rect.left() + gallery.list.iconSize().width() + 16 + title_width + 20
        inked = [(x, y) for x in range(int(left * ratio), int((rect.left() + 380) * ratio))
                 for y in range(int(rect.top() * ratio), int(rect.bottom() * ratio))
                 if image.pixelColor(x, y) == text]
        assert inked, f"no second line drawn in {language}"
        assert rect.height() >= 2 * gallery.list.fontMetrics().height()
        gallery.close()
        window.log_panel.stop()
    finally:
        i18n.install(qapp, "en")
