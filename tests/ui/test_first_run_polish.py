"""The setup assistant's list after "Details" and after "Add selected profiles" (issue 38, item 8)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from test_first_run import open_dialog, servers

from kvswitch.core.models import ProfileKind
from kvswitch.platform.detect import detect
from kvswitch.platform.procscan import iter_processes
from kvswitch.ui.shell.first_run import SERVER_ROLE

__all__ = ["servers"]  # the fixture: real stand-in servers, a vLLM on a port and an `ollama serve`


def _two_servers(qtbot: Any, controller: Any, servers: dict[str, Any]) -> Any:
    def detector() -> Any:
        return detect([servers["vllm_port"]], processes=list(iter_processes(pids=[servers["ollama_pid"]])))

    dialog = open_dialog(qtbot, controller, detector)
    assert dialog.server_list.count() == 2
    return dialog


def test_a_server_the_user_unticked_stays_unticked_after_adding_the_others(
        qtbot: Any, store: Any, controller: Any, servers: dict[str, Any]) -> None:
    dialog = _two_servers(qtbot, controller, servers)
    items = [dialog.server_list.item(row) for row in range(2)]
    ollama = next(item for item in items if item.data(SERVER_ROLE).kind == ProfileKind.OLLAMA)
    ollama.setCheckState(Qt.CheckState.Unchecked)
    qtbot.mouseClick(dialog.add_button, Qt.MouseButton.LeftButton)
    assert [p.kind for p in store.profiles()] == [ProfileKind.VLLM]
    # the list was refilled: vLLM exists now (unticked), and Ollama is still the user's "no"
    assert dialog.checked_servers() == []
    assert not dialog.add_button.isEnabled()
    qtbot.mouseClick(dialog.add_button, Qt.MouseButton.LeftButton)  # a second click adds nothing
    assert [p.kind for p in store.profiles()] == [ProfileKind.VLLM]


def test_details_leave_the_server_list_room_for_its_servers(qtbot: Any, controller: Any,
                                                             servers: dict[str, Any]) -> None:
    dialog = _two_servers(qtbot, controller, servers)
    qtbot.waitExposed(dialog)
    view = dialog.server_list
    before = view.viewport().height()
    qtbot.mouseClick(dialog.details_button, Qt.MouseButton.LeftButton)
    assert dialog.details_box.isVisible()
    qtbot.wait(50)
    rows = sum(view.visualItemRect(view.item(row)).height() for row in range(2))
    assert view.viewport().height() >= max(rows, before)  # the fold grew the dialog, not squeezed the list
    assert dialog.height() <= dialog.screen().availableGeometry().height()
