"""The editor's confirmation box and the window's import review for dangerous env names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kvswitch.ui.profiles.importing import import_profiles


def test_editor_refuses_dangerous_env_until_the_box_is_ticked(qtbot: Any, window: Any, store: Any) -> None:
    editor = window.editor
    window.new_blank_profile()
    editor.name_edit.setText("local")
    editor.url_edit.setText("http://127.0.0.1:8080")
    editor.env_edit.setPlainText("PROMPT_COMMAND=touch /tmp/x")
    assert not editor.save_button.isEnabled()
    assert "PROMPT_COMMAND" in editor.errors["env"].text()
    assert editor.errors["env"].isVisibleTo(window)

    editor.allow_dangerous_box.setChecked(True)
    assert editor.save_button.isEnabled()
    with qtbot.waitSignal(window.model.rowsInserted, timeout=2000):
        editor.save_button.click()
    saved = store.get("local")
    assert saved.allow_dangerous_env
    assert saved.env["PROMPT_COMMAND"] == "touch /tmp/x"
    editor.load_profile("local")
    assert editor.allow_dangerous_box.isChecked()


def test_window_import_shows_dangerous_names_and_needs_a_yes(qtbot: Any, store: Any, fake_home: Path) -> None:
    settings = fake_home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    env = {"ANTHROPIC_BASE_URL": "https://gw.example", "NODE_OPTIONS": "-r x"}
    settings.write_text(json.dumps({"env": env}))
    shown: list[str] = []

    def refuse(review: str) -> bool:
        shown.append(review)
        return False

    message, ok = import_profiles(store, "claude", confirm=refuse)
    assert not ok
    assert "Nothing was imported" in message
    assert "'imported': targets claude" in shown[0]
    assert "NODE_OPTIONS" in shown[0]
    assert store.names() == []

    message, ok = import_profiles(store, "claude", confirm=lambda review: True)
    assert ok, message
    assert store.get("imported").allow_dangerous_env
