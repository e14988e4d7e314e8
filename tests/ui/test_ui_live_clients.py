"""One truth per client in the window: the cards' badges and the tray's sections come from the clients'
own files in a temporary HOME (``targets.live``), not from the last apply.

A Claude-only profile, then a Codex-only one: each card is badged for the client whose file runs it; the
tray checks each in its own section, and each switch message names the clients whose files it changed.
A hand edit of Claude Code's file is seen through the file watcher and marks the card as differing,
with Use back on it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.ui.uihelpers import (
    make_profile,
    shell_fixture,  # noqa: F401 - the shell fixture
)

from kvswitch.ui.profiles.profile_card import card_badges, shows_use

SAFE = {"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"}


def _badges(shell: Any, name: str) -> list[tuple[str, bool]]:
    model = shell.window.model
    return [(b.text, b.differs) for b in card_badges(model.index(model.row_of(name)))]


def _apply_and_wait_live(qtbot: Any, shell: Any, name: str) -> None:
    controller = shell.controller
    with qtbot.waitSignal(controller.live_clients_changed, timeout=10_000):
        assert shell.window.apply_profile(name, review=False)
    qtbot.waitUntil(lambda: bool(controller.live_for(name)), timeout=10_000)  # read back from the files


def test_claude_then_codex_profile_both_stay_live_per_client(qtbot: Any, shell: Any, fake_home: Path) -> None:
    store = shell.controller.store
    store.add(make_profile("claude-a", base_url="http://127.0.0.1:8081", model="qwen3-8b", env=SAFE))
    store.add(make_profile("codex-b", base_url="http://127.0.0.1:8082", model="gemma-3", targets=["codex"]))
    shell.start()
    qtbot.waitUntil(lambda: shell.window.content_built, timeout=10_000)

    _apply_and_wait_live(qtbot, shell, "claude-a")
    assert "Claude Code" in shell.window.message_bar.text
    assert "Codex" not in shell.window.message_bar.text  # one client was written, and it says which
    written = [p.target_id for p in shell.controller.plan("codex-b") if p.changes]
    _apply_and_wait_live(qtbot, shell, "codex-b")
    message = shell.window.message_bar.text
    assert "Codex" in message
    # the message names exactly the clients whose files this apply changed
    assert ("Claude Code" in message) == any(t.startswith("claude") for t in written)

    # the cards and the tray say what the clients' own files say, read here independently
    from kvswitch.targets.live import live_clients

    truth = {c.key: c.profile for c in live_clients(shell.controller.paths, store.profiles())}
    assert truth["codex"] == "codex-b"
    assert "127.0.0.1:8082" in (fake_home / ".codex" / "config.toml").read_text()
    assert _badges(shell, "codex-b") == [("Codex", False)]
    claude_live = truth.get("claude:user") == "claude-a"
    assert _badges(shell, "claude-a") == ([("Claude Code", False)] if claude_live else [])
    model = shell.window.model
    assert not shows_use(model.index(model.row_of("codex-b")))  # live where it is applied: no Use

    tray = shell.tray
    tray.rebuild_menu(vendors=False)
    sections = {key: {a.text().split(" — ")[0]: a.isChecked() for a in actions}
                for key, actions in tray.client_sections.items()}
    assert sections["codex"] == {"codex-b": True}
    assert sections["claude:user"] == {"claude-a": claude_live}
    headers = [a.text() for a in tray.menu.actions() if not a.isEnabled() and " — " in a.text()]
    assert "Codex — codex-b" in headers
    assert ("Claude Code — claude-a" in headers) == claude_live


def test_a_hand_edit_of_the_client_file_marks_the_card_as_differing(qtbot: Any, shell: Any,
                                                                     fake_home: Path) -> None:
    store = shell.controller.store
    store.add(make_profile("claude-a", base_url="http://127.0.0.1:8081", model="qwen3-8b", env=SAFE))
    shell.start()
    qtbot.waitUntil(lambda: shell.window.content_built, timeout=10_000)
    _apply_and_wait_live(qtbot, shell, "claude-a")
    assert _badges(shell, "claude-a") == [("Claude Code", False)]

    path = fake_home / ".claude" / "settings.json"
    settings = json.loads(path.read_text())
    settings["env"]["ANTHROPIC_MODEL"] = "edited-by-hand"
    path.write_text(json.dumps(settings, indent=2))  # no apply: only the watcher can see this
    model = shell.window.model
    index = model.index(model.row_of("claude-a"))
    qtbot.waitUntil(lambda: any(b.differs for b in card_badges(index)), timeout=10_000)
    assert [(b.text, b.differs) for b in card_badges(index)] == [("Claude Code", True)]
    assert shows_use(index)  # one click applies it again


def test_saving_the_live_profile_writes_its_client_file_and_undo_restores_it(
        qtbot: Any, shell: Any, fake_home: Path) -> None:
    store = shell.controller.store
    store.add(make_profile("claude-a", base_url="http://127.0.0.1:8081", model="qwen3-8b", env=SAFE))
    shell.start()
    qtbot.waitUntil(lambda: shell.window.content_built, timeout=10_000)
    _apply_and_wait_live(qtbot, shell, "claude-a")
    path = fake_home / ".claude" / "settings.json"
    before = path.read_bytes()
    window = shell.window
    window._select("claude-a")
    window.show_editor()
    window.editor.model_edit.setText("qwen3-coder")
    assert window.editor.save()
    assert json.loads(path.read_text())["env"]["ANTHROPIC_MODEL"] == "qwen3-coder"  # written through
    assert "Claude Code" in window.message_bar.text
    assert "undo" in window.message_bar.action_buttons
    with qtbot.waitSignal(shell.controller.undo_finished, timeout=5000):
        window.message_bar.action_buttons["undo"].click()
    assert path.read_bytes() == before


def test_an_import_of_cc_switch_marks_its_current_provider_live(qtbot: Any, shell: Any,
                                                                 fake_home: Path) -> None:
    import sqlite3

    fixtures = Path(__file__).resolve().parents[1] / "fixtures"
    settings = fake_home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_bytes((fixtures / "cc-switch-3.20" / "claude-settings-deepseek.json").read_bytes())
    folder = fake_home / ".cc-switch"
    folder.mkdir()
    with sqlite3.connect(folder / "cc-switch.db") as conn:
        conn.executescript((fixtures / "cc-switch-3.20" / "providers.sql").read_text(encoding="utf-8"))
    shell.start()
    qtbot.waitUntil(lambda: shell.window.content_built, timeout=10_000)
    shell.window._import("cc-switch")
    model = shell.window.model
    qtbot.waitUntil(lambda: model.row_of("DeepSeek") >= 0
                    and bool(card_badges(model.index(model.row_of("DeepSeek")))), timeout=10_000)
    assert [(b.text, b.differs) for b in card_badges(model.index(model.row_of("DeepSeek")))] == [
        ("Claude Code", False)]
    fixture = fixtures / "cc-switch-3.20" / "claude-settings-deepseek.json"
    assert settings.read_bytes() == fixture.read_bytes()  # marked live, not rewritten
