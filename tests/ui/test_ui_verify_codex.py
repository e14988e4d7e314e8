""""Verify with Codex" / "Verify with OpenCode" beside "Verify with Claude Code": the real Codex 0.169
through a profile to a real llama-server b11434 from the Verify tab's button (the CLI's
``verify --client codex`` run, the same report and history), the tray's entries, and the message
when a client is not installed."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from uihelpers import make_profile

from kvswitch.ui.shell.tray import TrayIcon
from support.claude import eos_token_id
from support.clients import CODEX_VERSION, codex_binary
from support.llama import RunningServer, llama_server

KEY = "local-dummy-key-5151"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with llama_server(tmp_path_factory.mktemp("llama-ui-codex"), "-l", f"{eos_token_id()}+100",
                      "--cache-ram", "0") as running:
        yield running


def _metrics(server: RunningServer) -> tuple[float, float]:
    text = httpx.get(f"{server.url}/metrics", timeout=10).text
    found = dict(re.findall(r"^(llamacpp:prompt_tokens(?:_cached)?_total) (\S+)$", text, re.M))
    return float(found["llamacpp:prompt_tokens_total"]), float(found["llamacpp:prompt_tokens_cached_total"])


def _activate(window: Any, store: Any, url: str) -> None:
    store.add(make_profile("local", base_url=url, api_key=KEY, model="tiny", targets=["codex", "bash"],
                           context_window=32768))
    window._select("local")
    assert window.controller.apply("local")


@pytest.mark.real_server
@pytest.mark.timeout(900)
def test_verify_with_real_codex_from_the_verify_tab(qtbot: Any, window: Any, store: Any,
                                                    server: RunningServer,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KVSWITCH_CODEX_BIN", str(codex_binary()))
    _activate(window, store, server.url)
    card = window.verify_card
    button = card.more_client_buttons["codex"]
    assert button.text() == "Verify with Codex"
    steps: list[str] = []
    window.controller.verify_progressed.connect(lambda text, _fraction: steps.append(text))
    before = _metrics(server)
    with qtbot.waitSignal(window.controller.client_verify_finished, timeout=800_000) as blocker:
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
        assert not button.isEnabled()  # one verify at a time
        assert not card.client_button.isEnabled()
    after = _metrics(server)
    report = blocker.args[0]
    data = report.to_json()
    assert data["client"] == "codex"
    assert data["client_version"] == CODEX_VERSION
    assert steps[0] == "Codex: conversation 1, turn 1"
    requests = data["requests"]
    assert [(r["conversation"], r["turn"]) for r in requests] == [(1, 1), (1, 2), (1, 3), (2, 1)]
    # the report's numbers are the server's own: its counters moved by exactly their sums
    assert after[0] - before[0] == sum(r["prompt_tokens"] - r["cached_tokens"] for r in requests)
    assert after[1] - before[1] == sum(r["cached_tokens"] for r in requests)
    inside = [t for t in data["turns"] if t["conversation"] == 1 and t["turn"] > 1]
    assert all(t["cached_tokens"] >= 0.99 * t["prompt_tokens"] for t in inside)
    assert card.client_view.table.rowCount() == 4
    assert not card.client_view.isHidden()
    assert button.isEnabled()
    qtbot.waitUntil(lambda: [e.check for e in card.history.entries] == ["client"], timeout=10000)
    assert card.history.entries[0].client_version == CODEX_VERSION


def test_missing_opencode_is_said_and_nothing_runs(qtbot: Any, window: Any, store: Any, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KVSWITCH_OPENCODE_BIN", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # no opencode anywhere
    _activate(window, store, "http://127.0.0.1:9")
    card = window.verify_card
    with qtbot.waitSignal(window.controller.verify_failed, timeout=5000) as blocker:
        qtbot.mouseClick(card.more_client_buttons["opencode"], Qt.MouseButton.LeftButton)
    assert blocker.args[0].startswith("Nothing was verified: OpenCode is not installed here")
    assert not window.controller.verify_running
    assert card.more_client_buttons["opencode"].isEnabled()


def test_tray_offers_codex_and_opencode(qtbot: Any, controller: Any, store: Any, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(QApplication, "quit", staticmethod(lambda: None))
    tray = TrayIcon(controller)
    tray.menu.aboutToShow.emit()
    texts = [a.text() for a in tray.menu.actions()]
    at = texts.index("Verify with Claude Code")
    assert texts[at + 1:at + 3] == ["Verify with Codex", "Verify with OpenCode"]
    assert not any(a.isEnabled() for a in tray.more_client_actions)  # no active profile yet
    store.add(make_profile("local", base_url="http://127.0.0.1:9", targets=["codex"]))
    assert controller.apply("local")
    tray.menu.aboutToShow.emit()
    assert all(a.isEnabled() for a in tray.more_client_actions)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("KVSWITCH_CODEX_BIN", raising=False)
    with qtbot.waitSignal(controller.verify_failed, timeout=5000) as blocker:
        tray.more_client_actions[0].trigger()
    assert "Codex is not installed here" in blocker.args[0]
