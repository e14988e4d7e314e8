""""Verify with Claude Code" from the window: the real Claude Code through a profile to a real
llama-server, the missing-binary message, Cancel stopping a running client, and the tray entry."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from uihelpers import make_profile

from kvswitch.core.presets import CACHE_SAFE_ENV
from kvswitch.ui.profiles.diff_dialog import ApplyDialog
from support.claude import claude_binary, eos_token_id
from support.llama import RunningServer, llama_server
from support.net import free_port

KEY = "local-dummy-key-4242"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with llama_server(tmp_path_factory.mktemp("llama-ui-client"), "-l", f"{eos_token_id()}+100",
                      "--cache-ram", "0") as running:
        yield running


def _activate(window: Any, store: Any, monkeypatch: pytest.MonkeyPatch, url: str,
              env: dict[str, str] | None = None) -> None:
    store.add(make_profile("local", base_url=url, api_key=KEY, model="tiny",
                           models={"small_fast": "tiny"}, env=dict(CACHE_SAFE_ENV) if env is None else env))
    monkeypatch.setattr(ApplyDialog, "ask", staticmethod(lambda *a: True))
    window._select("local")
    assert window.apply_profile("local")


@pytest.mark.real_server
@pytest.mark.timeout(900)
def test_verify_with_real_claude_code_shows_turns_and_records_history(
        qtbot: Any, window: Any, store: Any, paths: Any, server: RunningServer,
        monkeypatch: pytest.MonkeyPatch) -> None:
    window.controller.claude_bin = str(claude_binary())
    _activate(window, store, monkeypatch, server.url)
    card = window.verify_card
    steps: list[tuple[str, float]] = []
    window.controller.verify_progressed.connect(lambda text, fraction: steps.append((text, fraction)))
    with qtbot.waitSignal(window.controller.client_verify_finished, timeout=800_000) as blocker:
        qtbot.mouseClick(card.client_button, Qt.MouseButton.LeftButton)
        assert not card.cancel_button.isHidden()
        assert not card.client_button.isEnabled()
    report = blocker.args[0]
    assert report.session.version == "2.1.332"
    assert [text for text, _ in steps][:4] == [
        "Claude Code: conversation 1, turn 1", "Claude Code: conversation 1, turn 2",
        "Claude Code: conversation 1, turn 3", "Claude Code: conversation 2, turn 1"]
    assert steps[-1][1] == 1.0
    table = card.client_view.table
    assert table.rowCount() == len(report.turns) == 4
    verdicts = [table.item(row, 2).data(Qt.ItemDataRole.UserRole) for row in range(4)]
    assert verdicts[0] == "cold"
    assert verdicts[1:3] == ["hit", "hit"]  # cache-safe env: continued turns keep the cache
    assert table.item(0, 2).text() == "cold"
    assert report.verdict == "hit"
    assert card.verdict_label.text() == "Claude Code keeps the cache"
    assert not card.client_view.isHidden()
    assert card.grid_box.isHidden()
    assert card.cancel_button.isHidden()
    assert card.client_button.isEnabled()
    # the run is in the profile's history, as the CLI records it, and the table shows it
    history = card.history
    assert history.profile == "local"
    assert [e.check for e in history.entries] == ["client"]
    entry = history.entries[0]
    assert entry.client_version == "2.1.332"
    assert entry.verdict == "hit"
    assert entry.reuse_ratio is not None
    # each continued turn read from the cache all of the turn before it (the server's own numbers); the
    # history's ratio is cached over the whole prompt, so a long answer (the profile now carries the
    # server's context window, and Claude Code then lets the tiny model answer at length) lowers it
    # without any loss: what the ratio says is checked against what was reusable
    inside = [t for t in report.turns if t.conversation == 1]
    for before, turn in zip(inside, inside[1:], strict=False):
        assert (turn.cached_tokens or 0) >= (before.prompt_tokens or 0) - 1, report.turns
    assert entry.reuse_ratio == pytest.approx(
        sum(t.cached_tokens or 0 for t in inside[1:]) / sum(t.prompt_tokens or 0 for t in inside[1:]))
    assert history.table.rowCount() == 1
    assert history.table.item(0, 2).text() == "claude 2.1.332"
    assert history.table.item(0, 6).text() == str(entry.server["build"])
    assert KEY not in (paths.data_dir / "verify-history" / "local.jsonl").read_text()


@pytest.mark.real_server
@pytest.mark.timeout(900)
def test_real_claude_code_loss_names_the_cause_and_fixes_in_one_click(
        qtbot: Any, window: Any, store: Any, server: RunningServer,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Without CLAUDE_CODE_ATTRIBUTION_HEADER=0 a new conversation loses the cache; the card says why
    and its fix button writes the setting into the profile."""
    from PySide6.QtWidgets import QMessageBox

    window.controller.claude_bin = str(claude_binary())
    env = {k: v for k, v in CACHE_SAFE_ENV.items() if k != "CLAUDE_CODE_ATTRIBUTION_HEADER"}
    _activate(window, store, monkeypatch, server.url, env)
    card = window.verify_card
    with qtbot.waitSignal(window.controller.client_verify_finished, timeout=800_000) as blocker:
        card.client_button.click()
    report = blocker.args[0]
    assert report.fixes == {"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"}
    table = card.client_view.table
    last = table.rowCount() - 1
    assert table.item(last, 0).text() == "2"
    assert table.item(last, 2).data(Qt.ItemDataRole.UserRole) in ("miss", "partial")
    assert table.item(last, 7).text()  # why, from the diagnosis
    assert card.message_label.text().startswith("Why: ")
    assert not card.fix_button.isHidden()
    assert card.fix_button.text() == "Fix: add CLAUDE_CODE_ATTRIBUTION_HEADER=0 to “local”"
    monkeypatch.setattr(QMessageBox, "question", staticmethod(lambda *a, **k: QMessageBox.StandardButton.No))
    card.fix_button.click()
    assert store.get("local").env["CLAUDE_CODE_ATTRIBUTION_HEADER"] == "0"
    assert [e.verdict for e in card.history.entries] == [report.verdict]


def test_no_claude_binary_says_so_inline(qtbot: Any, window: Any, store: Any, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    _activate(window, store, monkeypatch, f"http://127.0.0.1:{free_port()}")
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    window.controller.claude_bin = None
    card = window.verify_card
    with qtbot.waitSignal(window.controller.verify_failed, timeout=5000):
        card.client_button.click()
    assert not card.card.isHidden()
    assert card.verdict_label.text() == "⚠ Verify failed"
    assert "Claude Code is not installed here" in card.message_label.text()
    assert card.client_button.isEnabled()
    assert card.cancel_button.isHidden()
    assert card.history.entries == []  # nothing ran, nothing recorded


def test_cancel_stops_the_running_claude_promptly(qtbot: Any, window: Any, store: Any,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A backend that never answers keeps the real client waiting; Cancel must end it at once."""
    window.controller.claude_bin = str(claude_binary())
    _activate(window, store, monkeypatch, f"http://127.0.0.1:{free_port()}")
    card = window.verify_card
    with qtbot.waitSignal(window.controller.verify_progressed, timeout=30_000):
        card.client_button.click()
    qtbot.wait(1500)  # the client is now retrying its first request
    assert window.controller.verify_running
    started = time.monotonic()
    with qtbot.waitSignal(window.controller.verify_failed, timeout=10_000) as blocker:
        card.cancel_button.click()
    assert time.monotonic() - started < 3.0
    assert blocker.args[0] == "Verify cancelled; the running Claude Code was stopped."
    assert card.message_label.text() == blocker.args[0]
    assert not window.controller.verify_running
    assert not any("claude" in _command(pid) for pid in _children())


def _children() -> list[int]:
    me = str(os.getpid())
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if stat[1] == me:
                found.append(int(entry.name))
    return found


def _command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return ""


def test_tray_menu_starts_the_client_verify(qtbot: Any, controller: Any, store: Any, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from kvswitch.ui.shell.tray import TrayIcon

    store.add(make_profile("local", base_url=f"http://127.0.0.1:{free_port()}"))
    tray = TrayIcon(controller)
    assert not tray.client_verify_action.isEnabled()  # nothing applied yet
    assert controller.apply("local")
    tray.rebuild_menu()
    assert tray.client_verify_action.text() == "Verify with Claude Code"
    assert tray.client_verify_action.isEnabled()
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    controller.claude_bin = None
    with qtbot.waitSignal(controller.verify_failed, timeout=5000) as blocker:
        tray.client_verify_action.trigger()
    assert "Claude Code is not installed here" in blocker.args[0]
