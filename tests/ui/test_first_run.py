"""The setup assistant with real stand-in servers: detect, add profiles, import, and the empty machine."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from kvswitch.core.errors import KvSwitchError
from kvswitch.core.models import ProfileKind
from kvswitch.core.settings import load_settings
from kvswitch.platform.detect import detect
from kvswitch.platform.procscan import iter_processes
from kvswitch.ui.shell.first_run import FirstRunDialog, should_show
from support.net import free_port

STANDIN = Path(__file__).resolve().parents[1] / "platform" / "standin.py"


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """A vLLM stand-in found by its port, and an ``ollama serve`` process found by its command line."""
    shutil.copy(STANDIN, tmp_path / "standin.py")
    (tmp_path / "serve").write_text("import standin\nstandin.main('ollama')\n")
    vllm_port, ollama_port = free_port(), free_port()
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "OLLAMA_HOST": f"127.0.0.1:{ollama_port}"}
    procs = [
        subprocess.Popen([sys.executable, "standin.py", "vllm", "--port", str(vllm_port),
                          "--model", "Qwen/Qwen3-8B"], cwd=tmp_path, env=env),
        subprocess.Popen(["ollama", "serve"], executable=sys.executable, cwd=tmp_path, env=env),
    ]
    try:
        for port in (vllm_port, ollama_port):
            deadline = time.monotonic() + 15
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                    break
                except OSError:
                    assert time.monotonic() < deadline, f"stand-in on {port} did not start"
                    time.sleep(0.05)
        yield {"vllm_port": vllm_port, "ollama_port": ollama_port, "ollama_pid": procs[1].pid}
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def open_dialog(qtbot: Any, controller: Any, detector: Any) -> FirstRunDialog:
    dialog = FirstRunDialog(controller, detector=detector)
    qtbot.addWidget(dialog)
    with qtbot.waitSignal(dialog.detection_finished, timeout=15000):
        dialog.show()
    return dialog


def test_detected_servers_become_profiles(qtbot: Any, store: Any, controller: Any,
                                          servers: dict[str, Any]) -> None:
    assert should_show(controller)
    def detector() -> Any:
        return detect([servers["vllm_port"]], processes=list(iter_processes(pids=[servers["ollama_pid"]])))

    dialog = open_dialog(qtbot, controller, detector)

    assert dialog.server_list.count() == 2
    assert {s.kind for s in dialog.checked_servers()} == {ProfileKind.VLLM, ProfileKind.OLLAMA}
    assert "Found 2 server(s)" in dialog.servers_status.text()
    assert dialog.add_button.isEnabled()

    with qtbot.waitSignal(dialog.profiles_added, timeout=2000) as added:
        qtbot.mouseClick(dialog.add_button, Qt.MouseButton.LeftButton)

    names = sorted(added.args[0])
    assert names == sorted([f"vLLM :{servers['vllm_port']}", f"Ollama :{servers['ollama_port']}"])
    vllm = store.get(f"vLLM :{servers['vllm_port']}")
    assert (vllm.kind, vllm.base_url, vllm.model) == (
        ProfileKind.VLLM, f"http://127.0.0.1:{servers['vllm_port']}", "Qwen/Qwen3-8B")
    assert vllm.env["CLAUDE_CODE_ATTRIBUTION_HEADER"] == "0"
    assert store.get(f"Ollama :{servers['ollama_port']}").model == "qwen2.5-coder:7b"
    # the list is refreshed: both now exist, so nothing is checked and adding again is off
    assert dialog.checked_servers() == []
    assert not dialog.add_button.isEnabled()
    assert "already exists" in dialog.server_list.item(0).text()
    assert not should_show(controller)


def test_unchecking_a_server_leaves_it_out(qtbot: Any, store: Any, controller: Any,
                                          servers: dict[str, Any]) -> None:
    dialog = open_dialog(qtbot, controller, lambda: detect([servers["vllm_port"]], processes=[]))
    dialog.server_list.item(0).setCheckState(Qt.CheckState.Unchecked)
    assert not dialog.add_button.isEnabled()
    assert dialog.add_checked_servers() == []
    assert store.profiles() == []


def test_empty_machine_offers_nothing_and_remembers_setup_ran(qtbot: Any, paths: Any,
                                                              controller: Any) -> None:
    closed = free_port()
    dialog = open_dialog(qtbot, controller, lambda: detect([closed], processes=[]))
    assert dialog.server_list.count() == 0
    assert "No local server is running" in dialog.servers_status.text()
    assert not dialog.add_button.isEnabled()
    assert dialog.detect_button.isEnabled()
    dialog.reject()
    assert load_settings(paths).first_run_done is True
    assert not should_show(controller)


def test_detection_failure_is_shown_inline(qtbot: Any, controller: Any) -> None:
    def broken() -> Any:
        raise KvSwitchError("process list unreadable")

    dialog = open_dialog(qtbot, controller, broken)
    assert dialog.servers_status.text() == "Detection failed: process list unreadable"
    assert dialog.detect_button.isEnabled()


def test_import_claude_code_settings(qtbot: Any, store: Any, controller: Any, fake_home: Path) -> None:
    claude = fake_home / ".claude"
    claude.mkdir()
    (claude / "settings.json").write_text(json.dumps({"env": {
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:8080", "ANTHROPIC_MODEL": "qwen"}}))
    closed = free_port()
    dialog = open_dialog(qtbot, controller, lambda: detect([closed], processes=[]))
    assert dialog.import_claude_button.isEnabled()
    assert not dialog.import_cc_switch_button.isEnabled()  # no ~/.cc-switch here

    with qtbot.waitSignal(dialog.profiles_added, timeout=2000):
        qtbot.mouseClick(dialog.import_claude_button, Qt.MouseButton.LeftButton)

    [profile] = store.profiles()
    assert (profile.base_url, profile.model, profile.kind) == (
        "http://127.0.0.1:8080", "qwen", ProfileKind.LLAMA_CPP)
    assert "Imported 1 profile(s)" in dialog.result_label.text()


def test_accepts_the_short_constructor_form(qtbot: Any, store: Any, controller: Any) -> None:
    """``FirstRunDialog(controller, parent)`` as the main window calls it: the store is the controller's."""
    from PySide6.QtWidgets import QWidget

    parent = QWidget()
    qtbot.addWidget(parent)
    closed = free_port()
    dialog = FirstRunDialog(controller, parent, detector=lambda: detect([closed], processes=[]))
    with qtbot.waitSignal(dialog.detection_finished, timeout=15000):
        pass
    assert dialog.parent() is parent
    assert dialog.store is store


def test_nothing_found_says_where_it_looked_and_offers_a_way_on(qtbot: Any, controller: Any,
                                                                fake_home: Path) -> None:
    from kvswitch.platform.detect import PROBE_PORTS

    closed = sorted({free_port(), free_port()})
    dialog = open_dialog(qtbot, controller, lambda: detect(closed, processes=[]))
    assert dialog.server_list.isHidden()  # no large empty box
    assert not dialog.searched_label.isHidden()
    text = dialog.searched_label.text()
    assert "127.0.0.1" in text
    assert all(str(port) in text for port in closed)  # the ports really asked, not the default list
    assert not any(f"{port} (" in text for port in PROBE_PORTS if port not in closed)
    assert "The process list was not read." in text
    claude_settings = fake_home / ".claude" / "settings.json"
    assert f"Read {claude_settings} (Claude Code): not there." in text
    assert f"Looked for CC Switch in {fake_home / '.cc-switch'}: not there." in text
    assert dialog.detect_button.text() == "Scan again"

    claude_settings.parent.mkdir()
    claude_settings.write_text("{}")
    with qtbot.waitSignal(dialog.detection_finished, timeout=15000):
        dialog.detect_button.click()
    assert f"Read {claude_settings} (Claude Code): found." in dialog.searched_label.text()
    dialog.reject()


def test_a_default_port_is_named_by_its_server_and_the_process_names_are_the_servers_own(
        qtbot: Any, controller: Any) -> None:
    from kvswitch import servers as known
    from kvswitch.platform.detect import Detection, Searched, detect_tools, process_names
    from kvswitch.ui.shell.first_run import searched_text

    ports = tuple(sorted(server.port for server in known.local() if server.port))
    text = searched_text(Detection(tuple(detect_tools()), (), Searched.of(ports, True)))
    for server in known.local():
        assert f"{server.port} ({server.short_label})" in text
    assert all(name in text for name in process_names())
    assert "llama-server" in process_names()
    assert "ollama serve" in process_names()


def test_browse_presets_opens_the_gallery_from_the_window(qtbot: Any, window: Any) -> None:
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    def click_browse() -> None:
        dialog = QApplication.activeModalWidget()
        assert isinstance(dialog, FirstRunDialog)
        dialog.gallery_button.click()

    QTimer.singleShot(300, click_browse)
    window.open_first_run()
    qtbot.waitUntil(lambda: getattr(window, "gallery", None) is not None and window.gallery.isVisible(),
                    timeout=5000)
    # detection ended (its status is set just before ``detection_finished``, which may have come already):
    # it probes this machine's default ports and processes, slower while other tests run alongside
    gallery = window.gallery
    qtbot.waitUntil(lambda: not gallery.status.text().startswith("Looking for servers"), timeout=30_000)
    assert "server" in gallery.status.text() or "Detection failed" in gallery.status.text()
    gallery.close()


def test_a_first_run_leads_with_cc_switch_and_folds_the_diagnostics(qtbot: Any, controller: Any,
                                                                    fake_home: Path) -> None:
    import sqlite3

    from kvswitch.platform.importers import read_cc_switch

    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "cc-switch-3.20"
    folder = fake_home / ".cc-switch"
    folder.mkdir()
    with sqlite3.connect(folder / "cc-switch.db") as conn:
        conn.executescript((fixtures / "providers.sql").read_text(encoding="utf-8"))
    count = len(read_cc_switch().profiles)
    assert count > 0
    dialog = open_dialog(qtbot, controller, lambda: detect([free_port()], processes=[]))
    qtbot.waitUntil(lambda: dialog.lead_button.isVisible(), timeout=10_000)
    assert dialog.lead_button.text() == f"Found CC Switch: import {count} providers"
    assert not dialog.details_box.isVisible()  # where tools and files are: under Details
    dialog.details_button.click()
    assert dialog.details_box.isVisible()
    with qtbot.waitSignal(dialog.profiles_added, timeout=5000) as added:
        dialog.lead_button.click()
    assert len(added.args[0]) == count
    assert not dialog.lead_button.isVisible()
    dialog.reject()
