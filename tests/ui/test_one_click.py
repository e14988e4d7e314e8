"""One-click switching in a real window: "Use" on a card writes the files in the temporary HOME at once,
the message bar offers the diff ("Review changes") and "Undo", and the setting that asks first does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QPlainTextEdit
from tests.ui.uihelpers import make_profile

from kvswitch.ui.profiles.diff_dialog import ApplyDialog
from kvswitch.ui.profiles.profile_card import use_button_rect

SAFE = {"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"}


@pytest.fixture
def two_profiles(store: Any) -> None:
    store.add(make_profile("alpha", model="qwen3-8b", env=SAFE))
    store.add(make_profile("beta", base_url="http://127.0.0.1:8082", model="gemma-3", env=SAFE))


@pytest.fixture
def no_dialog(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ApplyDialog, "ask", staticmethod(lambda *_a: pytest.fail("one click asks nothing")))


def _use_point(window: Any, name: str) -> QPoint:
    index = window.model.index(window.model.row_of(name))
    return use_button_rect(window.list_view.visualRect(index), window.list_view.font()).center()


def _click_use(qtbot: Any, window: Any, name: str) -> None:
    qtbot.mouseClick(window.list_view.viewport(), Qt.MouseButton.LeftButton, pos=_use_point(window, name))


def _claude_env(home: Path) -> dict[str, str]:
    return dict(json.loads((home / ".claude" / "settings.json").read_text())["env"])


def test_one_click_on_use_applies_and_writes_the_files(qtbot: Any, window: Any, store: Any, fake_home: Path,
                                                       two_profiles: None, no_dialog: None) -> None:
    qtbot.waitExposed(window)
    assert not (fake_home / ".claude" / "settings.json").exists()
    with qtbot.waitSignal(window.controller.profile_applied, timeout=5000) as applied:
        _click_use(qtbot, window, "beta")
    assert applied.args == ["beta"]
    assert store.active_name == "beta"
    assert _claude_env(fake_home)["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:8082"
    assert window.selected_name() == "beta"
    assert window.message_bar.level == "success"
    assert set(window.message_bar.action_buttons) == {"review", "undo"}

    # "Review changes" shows exactly what was written, without an Apply button
    window.message_bar.action_buttons["review"].click()
    dialog = window.review_dialog
    assert dialog.isVisible()
    assert dialog.apply_button is None
    diffs = "\n".join(view.toPlainText() for view in dialog.findChildren(QPlainTextEdit))
    assert "http://127.0.0.1:8082" in diffs
    dialog.close()

    # the active card has no "Use": a click there applies nothing again
    with qtbot.assertNotEmitted(window.controller.profile_applied, wait=100):
        _click_use(qtbot, window, "beta")

    # Undo, one click from the message bar, puts the file back (it did not exist before)
    with qtbot.waitSignal(window.controller.undo_finished, timeout=5000):
        window.message_bar.action_buttons["undo"].click()
    assert not (fake_home / ".claude" / "settings.json").exists() or \
        "ANTHROPIC_BASE_URL" not in _claude_env(fake_home)


def test_double_click_applies_too(qtbot: Any, window: Any, store: Any, fake_home: Path, two_profiles: None,
                                  no_dialog: None) -> None:
    qtbot.waitExposed(window)
    index = window.model.index(window.model.row_of("alpha"))
    middle = window.list_view.visualRect(index).center()
    with qtbot.waitSignal(window.controller.profile_applied, timeout=5000):
        qtbot.mouseClick(window.list_view.viewport(), Qt.MouseButton.LeftButton, pos=middle)  # selects
        qtbot.mouseDClick(window.list_view.viewport(), Qt.MouseButton.LeftButton, pos=middle)
    assert store.active_name == "alpha"
    assert _claude_env(fake_home)["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:8080"


def test_the_setting_shows_the_changes_first(qtbot: Any, window: Any, store: Any, fake_home: Path,
                                             two_profiles: None, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = window.controller.settings
    window.controller.save_settings(settings.model_copy(update={"always_review_changes": True}))
    asked: list[str] = []

    def ask(_parent: Any, name: str, *_args: Any) -> bool:
        asked.append(name)
        return False  # the user cancels

    monkeypatch.setattr(ApplyDialog, "ask", staticmethod(ask))
    qtbot.waitExposed(window)
    _click_use(qtbot, window, "beta")
    assert asked == ["beta"]
    assert store.active_name is None  # cancelled: nothing written
    assert not (fake_home / ".claude" / "settings.json").exists()


def test_the_editor_save_button_is_the_primary_action(window: Any) -> None:
    assert window.editor.save_button.property("primary") is True
    assert window.editor.save_button.isDefault() or window.editor.save_button.font().bold()


def test_a_filter_that_matches_nothing_says_so(window: Any, two_profiles: None) -> None:
    window.filter_edit.setText("zzz")
    assert window.list_stack.currentWidget() is window.no_match_label
    assert "zzz" in window.no_match_label.text()
    window.filter_edit.setText("beta")
    assert window.list_stack.currentWidget() is window.list_view


def test_the_editor_names_the_vendor_and_links_its_key_page(qtbot: Any, window: Any) -> None:
    from kvswitch.core.catalog import vendors

    deepseek = next(v for v in vendors() if v.id == "deepseek")
    window.new_blank_profile()
    window.editor.url_edit.setText(deepseek.base_url)
    hint = window.editor.key_hint
    assert hint.isVisibleTo(window.editor)
    assert hint.vendor_id == "deepseek"
    assert "DeepSeek" in hint.text.text()
    assert f'href="{deepseek.keys_url}"' in hint.text.text()
    assert window.editor.key_edit.placeholderText() == "required"
    window.editor.url_edit.setText("http://127.0.0.1:8080")
    assert not hint.isVisibleTo(window.editor)
    assert window.editor.key_edit.placeholderText() == "optional"
