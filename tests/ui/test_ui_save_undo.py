"""Undo after saving a live profile takes the whole save back (issue 38, item 5).

Saving a profile that Claude Code runs writes it through to settings.json; Undo then restores the file
*and* the profile (one undo step), so the card is live again for the same client and nothing differs.
A file that holds a key after the undo stays 0600; one that holds none gets back the mode it had. The
save's message offers "Review changes" (what it wrote), as Use's does. Real files in a temporary HOME.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from tests.ui.uihelpers import (
    make_profile,
    shell_fixture,  # noqa: F401 - the shell fixture
)

from kvswitch.targets.live import live_clients

SAFE = {"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"}
KEY = "sk-undo-0123456789abcdefghij"


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def _use_then_save(qtbot: Any, shell: Any, fake_home: Path, *, key_before: bool) -> tuple[Path, bytes]:
    """A user's settings.json (0644), a profile used on it, then edited in the form and saved."""
    settings = fake_home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text('{"theme": "dark"}')
    os.chmod(settings, 0o644)
    extra = {"api_key": KEY} if key_before else {}
    shell.controller.store.add(make_profile("a", base_url="http://127.0.0.1:8081", model="m1", env=SAFE,
                                            **extra))
    shell.start()
    qtbot.waitUntil(lambda: shell.window.content_built, timeout=10_000)
    with qtbot.waitSignal(shell.controller.live_clients_changed, timeout=10_000):
        assert shell.window.apply_profile("a", review=False)
    used = settings.read_bytes()
    window = shell.window
    window._select("a")
    window.show_editor()
    window.editor.model_edit.setText("m2")
    window.editor.key_edit.setText(KEY)
    assert window.editor.save()
    assert json.loads(settings.read_text())["env"]["ANTHROPIC_MODEL"] == "m2"  # written through
    return settings, used


def _undo(qtbot: Any, shell: Any) -> str:
    buttons = shell.window.message_bar.action_buttons
    with qtbot.waitSignal(shell.controller.undo_finished, timeout=5000) as done:
        buttons["undo"].click()
    return str(done.args[0])


def test_undo_of_a_save_puts_the_profile_back_with_the_file(qtbot: Any, shell: Any, fake_home: Path,
                                                            paths: Any) -> None:
    settings, used = _use_then_save(qtbot, shell, fake_home, key_before=True)
    message = _undo(qtbot, shell)
    store = shell.controller.store
    assert settings.read_bytes() == used
    assert store.get("a").model == "m1"  # the profile too, not only the file
    assert "back as it was before the save" in message
    assert _mode(settings) == 0o600  # it holds the key: still only the user's
    live = [c for c in live_clients(paths, store.profiles()) if c.profile == "a"]
    assert live  # `current` shows it live...
    assert not any(c.differs for c in live)  # ...and matching the profile


def test_a_file_that_holds_no_key_after_the_undo_gets_its_own_mode_back_and_is_told_so(
        qtbot: Any, shell: Any, fake_home: Path) -> None:
    settings, used = _use_then_save(qtbot, shell, fake_home, key_before=False)
    assert _mode(settings) == 0o600  # the save wrote the key
    message = _undo(qtbot, shell)
    assert settings.read_bytes() == used
    assert KEY not in settings.read_text()
    assert shell.controller.store.get("a").key == ""  # the key the save added is gone with it
    assert _mode(settings) == 0o644
    assert "mode 0600 -> 0644 (as it was before; it holds no key now)" in message
    assert "it holds a key" not in message


def test_the_save_message_offers_review_changes_like_use(qtbot: Any, shell: Any, fake_home: Path) -> None:
    _use_then_save(qtbot, shell, fake_home, key_before=True)
    window = shell.window
    assert list(window.message_bar.action_buttons) == ["review", "undo"]
    window.message_bar.action_buttons["review"].click()
    dialog = window.review_dialog
    from PySide6.QtWidgets import QPlainTextEdit

    shown = "\n".join(dialog.tabs.widget(i).findChild(QPlainTextEdit).toPlainText()
                      for i in range(dialog.tabs.count()))
    assert '"ANTHROPIC_MODEL": "m2"' in shown.replace("+", "")  # what the save wrote
    assert KEY not in shown  # masked
    dialog.close()
