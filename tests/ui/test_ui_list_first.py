"""The provider list is the main view: wide cards, a client filter like CC Switch's app switcher, and an
editor that opens beside the list with only the fields that apply, Save pinned in view, Ctrl+S and
visible unsaved edits. Real widgets over a store in a temporary HOME."""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import Qt
from tests.ui.uihelpers import make_profile

SAFE = {"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"}


def _shown(window: Any) -> list[str]:
    return [window.model.index(r).data() for r in range(window.model.rowCount())
            if not window.list_view.isRowHidden(r)]


def _profiles(store: Any) -> None:
    store.add(make_profile("claude-a", base_url="http://127.0.0.1:8081", env=SAFE))
    store.add(make_profile("codex-b", base_url="http://127.0.0.1:8082", model="gemma-3", targets=["codex"]))
    store.add(make_profile("both-c", base_url="http://127.0.0.1:8083", env=SAFE, targets=["claude", "codex"]))
    store.add(make_profile("open-d", base_url="http://127.0.0.1:8084", targets=["opencode"]))


def test_the_list_fills_the_window_and_the_editor_opens_beside_it(qtbot: Any, store: Any,
                                                                  window: Any) -> None:
    _profiles(store)
    qtbot.waitExposed(window)
    assert not window.editor_panel.isVisible()  # the list first: no form until one is asked for
    qtbot.waitUntil(lambda: window.list_view.width() > window.width() * 0.8, timeout=3000)
    window.edit_action.trigger()
    assert window.editor_panel.isVisible()
    qtbot.waitUntil(lambda: window.list_view.width() > window.editor_panel.width(), timeout=3000)
    # Save sits below the scrolled form, never below the fold
    save = window.editor.save_button
    assert save.isVisible()
    assert not window.editor_page.isAncestorOf(save)
    assert save.mapTo(window, save.rect().bottomLeft()).y() <= window.height()
    window.editor_panel.close_button.click()
    assert not window.editor_panel.isVisible()


def test_the_client_filter_shows_only_that_clients_profiles(qtbot: Any, store: Any, window: Any) -> None:
    _profiles(store)
    qtbot.waitExposed(window)
    switch = window.client_filter
    assert _shown(window) == ["claude-a", "codex-b", "both-c", "open-d"]
    qtbot.mouseClick(switch.buttons["codex"], Qt.MouseButton.LeftButton)
    assert _shown(window) == ["codex-b", "both-c"]
    qtbot.mouseClick(switch.buttons["claude"], Qt.MouseButton.LeftButton)
    assert _shown(window) == ["claude-a", "both-c"]
    qtbot.mouseClick(switch.buttons["opencode"], Qt.MouseButton.LeftButton)
    assert _shown(window) == ["open-d"]
    window.filter_edit.setText("nothing-like-this")
    assert window.list_stack.currentWidget() is window.no_match_label
    window.filter_edit.clear()
    qtbot.mouseClick(switch.buttons[None], Qt.MouseButton.LeftButton)
    assert len(_shown(window)) == 4


def test_a_codex_only_profile_shows_no_claude_only_field(qtbot: Any, store: Any, window: Any) -> None:
    _profiles(store)
    qtbot.waitExposed(window)
    window._select("codex-b")
    window.show_editor()
    editor = window.editor
    assert not editor.models_box.isVisible()  # Opus / Sonnet / Haiku roles are Claude Code's
    assert not editor.key_env_combo.isVisible()  # ANTHROPIC_AUTH_TOKEN or _API_KEY
    window._select("claude-a")
    assert editor.models_box.isVisible()
    assert editor.key_env_combo.isVisible()


def test_ctrl_s_saves_and_unsaved_edits_show(qtbot: Any, store: Any, window: Any, paths: Any) -> None:
    _profiles(store)
    qtbot.waitExposed(window)
    window._select("claude-a")
    window.show_editor()
    panel = window.editor_panel
    assert not panel.unsaved_label.isVisible()
    window.editor.model_edit.setText("qwen3-coder")
    assert panel.unsaved_label.isVisible()
    assert window.editor.dirty
    window.activateWindow()
    window.editor.model_edit.setFocus()
    qtbot.keyClick(window.editor.model_edit, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: not panel.unsaved_label.isVisible(), timeout=3000)
    saved = json.loads(paths.profiles_file.read_text())
    rows = saved["profiles"] if isinstance(saved, dict) else saved
    assert next(p for p in rows if p["name"] == "claude-a")["model"] == "qwen3-coder"
    assert "“claude-a”" in panel.title.text()
