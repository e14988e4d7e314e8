"""The profile list, the editor and apply, driven through the real widgets on a temporary HOME."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from uihelpers import make_profile

from kvswitch.ui.profiles.diff_dialog import ApplyDialog
from kvswitch.ui.profiles.profile_model import IsActiveRole, ProfileListModel


def test_list_model_passes_modeltester_and_follows_store(qtbot: Any, qtmodeltester: Any, store: Any) -> None:
    store.add(make_profile("local"))
    store.add(make_profile("gateway", kind="openai-compatible", base_url="https://gw.example.com/v1"))
    model = ProfileListModel(store)
    qtmodeltester.check(model)
    assert [model.index(r).data() for r in range(model.rowCount())] == ["local", "gateway"]

    with qtbot.waitSignal(model.rowsInserted, timeout=2000):
        store.add(make_profile("third"))
    assert model.rowCount() == 3
    with qtbot.waitSignal(model.rowsRemoved, timeout=2000):
        store.remove("local")
    assert [model.index(r).data() for r in range(model.rowCount())] == ["gateway", "third"]
    qtmodeltester.check(model)


def test_editor_validates_inline_and_adds_profile(qtbot: Any, window: Any, store: Any) -> None:
    editor = window.editor
    window.new_blank_profile()
    editor.name_edit.setText("local llama")
    editor.url_edit.setText("ftp://nowhere")
    assert not editor.save_button.isEnabled()
    assert "invalid base URL" in editor.errors["base_url"].text()
    assert editor.errors["base_url"].isVisibleTo(window)

    editor.url_edit.setText("http://127.0.0.1:8080")
    editor.env_edit.setPlainText("1BAD=x")
    assert "invalid environment variable name" in editor.errors["env"].text()
    editor.env_edit.setPlainText("CLAUDE_CODE_ATTRIBUTION_HEADER=0")
    assert editor.save_button.isEnabled()

    with qtbot.waitSignal(window.model.rowsInserted, timeout=2000):
        editor.save_button.click()
    assert store.get("local llama").base_url == "http://127.0.0.1:8080"
    assert window.selected_name() == "local llama"

    window.new_blank_profile()
    editor.name_edit.setText("LOCAL LLAMA")
    assert "already exists" in editor.errors["name"].text()
    assert not editor.save_button.isEnabled()


def test_api_key_is_masked_until_revealed(qtbot: Any, window: Any) -> None:
    editor = window.editor
    editor.key_edit.setText("sk-test-1234567890abcdef")
    assert editor.key_edit.echoMode() == editor.key_edit.EchoMode.Password
    editor.reveal_button.click()
    assert editor.key_edit.echoMode() == editor.key_edit.EchoMode.Normal
    editor.reveal_button.click()
    assert editor.key_edit.echoMode() == editor.key_edit.EchoMode.Password


def test_presets_fill_every_kind(qtbot: Any, window: Any) -> None:
    from kvswitch.core.models import ProfileKind
    from kvswitch.servers import preset

    for kind in ProfileKind:
        window.editor.apply_preset(kind)
        assert window.editor.url_edit.text() == preset(kind).base_url
        assert window.editor.kind_combo.currentData() == kind.value


def test_lint_warning_offers_one_click_fix(qtbot: Any, window: Any, store: Any) -> None:
    store.add(make_profile("bare", env={}))
    window._select("bare")
    window.edit_action.trigger()  # the form opens beside the list
    editor = window.editor
    assert editor.editing == "bare"
    assert "attribution-header" in editor.lint_panel.fix_buttons
    assert editor.lint_panel.isVisibleTo(window)
    editor.lint_panel.fix_buttons["attribution-header"].click()
    qtbot.waitUntil(lambda: store.get("bare").env.get("CLAUDE_CODE_ATTRIBUTION_HEADER") == "0", timeout=2000)
    assert "attribution-header" not in editor.lint_panel.fix_buttons


def test_apply_shows_masked_diff_and_writes_settings(qtbot: Any, window: Any, store: Any, fake_home: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    key = "sk-secret-abcdefghijklmnop"
    store.add(make_profile("local", api_key=key, env={"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"}))
    window._select("local")
    shown: list[str] = []

    def confirm(_parent: Any, name: str, plans: list[Any], render: Any) -> bool:
        dialog = ApplyDialog(name, plans, render)
        qtbot.addWidget(dialog)
        for index in range(dialog.tabs.count()):
            from PySide6.QtWidgets import QPlainTextEdit

            shown.append(dialog.tabs.widget(index).findChild(QPlainTextEdit).toPlainText())
        return True

    monkeypatch.setattr(ApplyDialog, "ask", staticmethod(confirm))
    with qtbot.waitSignal(window.controller.profile_applied, timeout=5000) as blocker:
        window.apply_action.trigger()
    assert blocker.args == ["local"]
    diff = "\n".join(shown)
    assert "ANTHROPIC_BASE_URL" in diff
    assert key not in diff
    settings = json.loads((fake_home / ".claude" / "settings.json").read_text())
    assert settings["env"]["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:8080"
    assert settings["env"]["ANTHROPIC_AUTH_TOKEN"] == key
    assert store.active_name == "local"
    row = window.model.row_of("local")
    assert window.model.index(row).data(IsActiveRole) is True
    assert window.model.index(row).data(Qt.ItemDataRole.FontRole).bold()
    assert window.message_bar.level == "success"

    with qtbot.waitSignal(window.controller.undo_finished, timeout=5000):
        window.undo_action.trigger()
    assert not (fake_home / ".claude" / "settings.json").exists() or \
        "ANTHROPIC_BASE_URL" not in (fake_home / ".claude" / "settings.json").read_text()


def test_apply_failure_shows_engine_message_and_changes_nothing(qtbot: Any, window: Any, store: Any,
                                                               fake_home: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    settings = fake_home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text('{"env": {"KEEP": "1"},,}')
    before = settings.read_bytes()
    store.add(make_profile("local"))
    window._select("local")
    monkeypatch.setattr(ApplyDialog, "ask", staticmethod(lambda *a: pytest.fail("no diff for a broken file")))
    window.apply_action.trigger()
    assert window.message_bar.level == "error"
    assert "settings.json" in window.message_bar.text
    assert settings.read_bytes() == before
    assert store.active_name is None


def test_apply_while_another_process_holds_the_lock_fails_fast_with_its_message(
        qtbot: Any, window: Any, store: Any, fake_home: Path) -> None:
    """A CLI apply in progress must not freeze the window for the engine's default lock wait."""
    from kvswitch.core.lock import FileLock
    from kvswitch.ui.control.controller import GUI_LOCK_TIMEOUT_S

    store.add(make_profile("local"))
    controller = window.controller
    assert controller.engine.lock_timeout == GUI_LOCK_TIMEOUT_S <= 1.0
    holder = FileLock(controller.paths.lock_file, timeout=1.0)  # its own open file: conflicts like a process
    with holder, qtbot.waitSignal(controller.apply_failed) as failed:
        assert controller.apply("local") is False
    assert "another KV Switch process" in failed.args[1]
    assert window.message_bar.level == "error"
    assert not (fake_home / ".claude" / "settings.json").exists()
    assert store.active_name is None


def test_import_claude_settings_adds_profile(qtbot: Any, window: Any, store: Any, fake_home: Path) -> None:
    settings = fake_home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"env": {"ANTHROPIC_BASE_URL": "http://127.0.0.1:8080",
                                            "ANTHROPIC_AUTH_TOKEN": "sk-imported-0123456789"}}))
    with qtbot.waitSignal(window.model.rowsInserted, timeout=3000):
        window.import_claude_action.trigger()
    [profile] = store.profiles()
    assert profile.base_url == "http://127.0.0.1:8080"
    assert window.message_bar.level == "success"
    assert "sk-imported" not in window.message_bar.text


def test_command_log_source_round_trips(qtbot: Any, window: Any, store: Any) -> None:
    editor = window.editor
    window.new_blank_profile()
    editor.name_edit.setText("managed")
    editor.log_kind_combo.setCurrentIndex(editor.log_kind_combo.findData("command"))
    editor.log_path_edit.setText("llama-server -m '/models/my model.gguf' --port 8080")
    assert editor.save()
    expected = ["llama-server", "-m", "/models/my model.gguf", "--port", "8080"]
    assert store.get("managed").log.command == expected
    editor.load_profile("managed")
    assert editor.log_path_edit.text() == "llama-server -m '/models/my model.gguf' --port 8080"


def test_apply_writes_the_confirmed_preview_and_offers_a_fresh_one_when_the_file_changed(
        qtbot: Any, window: Any, store: Any, fake_home: Path) -> None:
    """The real diff dialog: the file is edited while it is open; Apply must not write unseen bytes."""
    from PySide6.QtWidgets import QApplication, QLabel, QPlainTextEdit

    key = "sk-secret-abcdefghijklmnop"
    settings = fake_home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text('{"theme": "dark"}\n')
    store.add(make_profile("local", api_key=key))
    window._select("local")
    seen: list[dict[str, Any]] = []

    def answer_dialog() -> None:
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, ApplyDialog):
            return
        page = dialog.tabs.widget(0)
        seen.append({
            "diff": page.findChild(QPlainTextEdit).toPlainText(),
            "labels": [label.text() for label in page.findChildren(QLabel)],
        })
        if len(seen) == 1:
            settings.write_text('{"theme": "light", "mine": 1}\n')  # edited while the preview is open
        dialog.apply_button.click()

    timer = qtbot_timer(answer_dialog)
    with qtbot.waitSignal(window.controller.profile_applied, timeout=10000):
        window.apply_action.trigger()
    timer.stop()
    assert len(seen) == 2, "the changed file must bring up a fresh preview, not be written blindly"
    assert '"dark"' in seen[0]["diff"]
    assert '"light"' in seen[1]["diff"], "the second preview is computed from the edited file"
    assert any("changed after the preview" in text for text in seen[1]["labels"])
    data = json.loads(settings.read_text())
    assert data["theme"] == "light"
    assert data["mine"] == 1
    assert data["env"]["ANTHROPIC_AUTH_TOKEN"] == key


def test_cancelling_the_fresh_preview_writes_nothing(qtbot: Any, window: Any, store: Any,
                                                    fake_home: Path) -> None:
    from PySide6.QtWidgets import QApplication

    settings = fake_home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text('{"theme": "dark"}\n')
    store.add(make_profile("local"))
    window._select("local")
    answers: list[str] = []

    def answer_dialog() -> None:
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, ApplyDialog):
            return
        if not answers:
            settings.write_text('{"theme": "light"}\n')
            answers.append("apply")
            dialog.apply_button.click()
        else:
            answers.append("cancel")
            dialog.reject()

    timer = qtbot_timer(answer_dialog)
    assert window.apply_profile("local", review=True) is False
    timer.stop()
    assert answers == ["apply", "cancel"]
    assert settings.read_text() == '{"theme": "light"}\n'
    assert store.active_name is None


def qtbot_timer(callback: Any) -> Any:
    """A timer that keeps answering whichever modal dialog is open (``exec`` blocks the test)."""
    from PySide6.QtCore import QTimer

    timer = QTimer()
    timer.setInterval(50)
    timer.timeout.connect(callback)
    timer.start()
    return timer
