"""The gallery and the editor's backend checks against a real llama-server: detected first, its models
listed by "Fetch models", "Test connection" answered by the server, and a one-click tray switch to it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kvswitch.ui.profiles.diff_dialog import ApplyDialog
from support.llama import RunningServer
from support.llama import llama_server as start_llama_server
from support.net import free_port


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    workdir = tmp_path_factory.mktemp("llama-gallery")
    with start_llama_server(workdir, context=4096, metrics=False) as server:
        yield server


@pytest.mark.real_server
def test_detected_server_comes_first_and_the_editor_checks_it(qtbot: Any, window: Any, store: Any,
                                                               llama_server: RunningServer,
                                                               fake_home: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from kvswitch.platform.detect import detect_servers

    gallery = window.open_gallery(detector=lambda: detect_servers([llama_server.port]))
    with qtbot.waitSignal(gallery.detection_finished, timeout=20000) as blocker:
        pass
    assert blocker.args[0] >= 1  # the process list may show other servers on this machine too
    titles = gallery.entry_titles()
    ours = next(t for t in titles if t.endswith(f":{llama_server.port}"))
    assert titles.index(ours) < blocker.args[0]  # detected servers come before every preset
    assert gallery.select_title(ours)
    gallery.buttons.accepted.emit()
    editor = window.editor
    assert editor.url_edit.text() == llama_server.url

    box = editor.models_box
    assert box.fetch_button.isEnabled()
    with qtbot.waitSignal(box.models_fetched, timeout=20000) as fetched:
        box.fetch_button.click()
    assert fetched.args[0]  # the tiny model's id, as the server reports it
    assert fetched.args[0][0] in box.result_label.text()
    assert box.fetched.stringList() == fetched.args[0]
    with qtbot.waitSignal(box.connection_tested, timeout=30000) as tested:
        box.test_button.click()
    report = tested.args[0]
    assert report.ok, report.lines()
    assert box.result_note.state == "ok"
    assert box.result_note.title.text().startswith("Connected: ")

    with qtbot.waitSignal(window.model.rowsInserted, timeout=2000):
        editor.save_button.click()
    monkeypatch.setattr(ApplyDialog, "ask", staticmethod(lambda *a: True))
    assert window.apply_profile(ours)
    env = json.loads((fake_home / ".claude" / "settings.json").read_text())["env"]
    assert env["ANTHROPIC_BASE_URL"] == llama_server.url

    # a verify from the window lands in the history the card reads
    # (the cards' summary is read again off the GUI thread once the run is recorded)
    with qtbot.waitSignal(window.controller.verify_summary.changed, timeout=60000), \
            qtbot.waitSignal(window.controller.verify_finished, timeout=60000) as verified:
        window.verify_action.trigger()
    entry = window.controller.last_verify(ours)
    assert entry is not None
    assert entry.verdict == verified.args[0].verdict
    from kvswitch.ui.profiles.profile_card import card_lines

    assert card_lines(window.model.index(window.model.row_of(ours)))[2] == f"{entry.verdict} · just now"


def test_test_connection_to_a_dead_port_names_the_failure_and_the_fix(qtbot: Any, window: Any) -> None:
    window.new_blank_profile()
    editor = window.editor
    editor.name_edit.setText("dead")
    editor.url_edit.setText(f"http://127.0.0.1:{free_port()}")
    box = editor.models_box
    with qtbot.waitSignal(box.connection_tested, timeout=30000) as tested:
        box.test_button.click()
    report = tested.args[0]
    assert not report.ok
    assert report.outcome == "refused"
    note = box.result_note
    # styled as the error cards are: red title and icon on a red tint, the fix, and Retry
    assert note.state == "failed"
    assert note.title.text() == f"Connection failed: {report.summary}"
    assert " · refused · " in note.text.text()
    assert f"Fix: {report.fix}" in note.text.text()
    assert note.icon.isVisibleTo(window)
    assert note.retry_button.isVisibleTo(window)
    from kvswitch.ui.cache_state import CacheState
    from kvswitch.ui.widgets import theme

    miss = theme.state_color(CacheState.MISS, note.palette())
    assert note.title.palette().color(note.title.foregroundRole()) == miss
    image = note.grab().toImage()
    tint = theme.tinted_background(CacheState.MISS, note.palette())
    assert image.pixelColor(4, image.height() // 2) == tint
    with qtbot.waitSignal(box.connection_tested, timeout=30000) as retried:
        note.retry_button.click()  # Retry runs the test again
    assert retried.args[0].outcome == "refused"


def test_a_server_error_message_is_shown_safe(qtbot: Any, window: Any) -> None:
    from support.hostile_servers import RAW_CONTROLS, HostileServer

    window.new_blank_profile()
    editor = window.editor
    editor.name_edit.setText("hostile")
    with HostileServer("escapes_error") as server:
        editor.url_edit.setText(server.url)
        box = editor.models_box
        with qtbot.waitSignal(box.connection_tested, timeout=30000) as tested:
            box.test_button.click()
    report = tested.args[0]
    assert not report.ok
    note = box.result_note
    assert note.state == "failed"
    shown = note.title.text() + note.text.text()
    assert "bad model" in shown  # the server's own words
    assert not any(char in shown for char in RAW_CONTROLS)
