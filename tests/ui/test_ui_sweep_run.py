"""A settings sweep started from the window (issue 38, item 8): the Verify tab's "Run a sweep…" opens a
dialog that builds the same ``kvswitch sweep`` command, runs the same engine on a worker against a real
llama-server b11434 (progress as it goes, each row into the verify history, the chart reloaded), and
cancels it (the server it started is stopped, the port is free again)."""

from __future__ import annotations

import socket
from typing import Any

import pytest
from PySide6.QtCore import Qt

from kvswitch.cli import main
from kvswitch.verify.history import VerifyHistory
from support.llama import CONTEXT, llama_server_binary, tiny_model
from support.net import free_port

pytestmark = [pytest.mark.real_server, pytest.mark.timeout(900)]


def _profile_and_command(capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    port = free_port()
    assert main(["profile", "add", "local", "--kind", "llama.cpp", "--base-url", f"http://127.0.0.1:{port}",
                 "--model", "tiny", "--target", "bash"]) == 0
    capsys.readouterr()
    command = [str(llama_server_binary()), "-m", str(tiny_model()), "-a", "tiny", "--host", "127.0.0.1",
               "--port", str(port), "-c", str(CONTEXT), "--metrics"]
    return port, " ".join(command)


def _dialog(qtbot: Any, controller: Any, command: str, varies: str) -> tuple[Any, Any]:
    from kvswitch.ui.verify.sweep_chart import SweepView  # noqa: PLC0415

    view = SweepView(controller)
    qtbot.addWidget(view)
    view.reload("local")
    view.show()
    qtbot.mouseClick(view.run_button, Qt.MouseButton.LeftButton)
    dialog = view.dialog
    assert dialog is not None  # a child of the view's window: it goes with the view
    assert not dialog.start_button.isEnabled()  # nothing to run yet
    dialog.server_edit.setText(command)
    dialog.vary_edit.setPlainText(varies)
    return view, dialog


def test_the_window_runs_a_sweep_and_charts_it(qtbot: Any, controller: Any, paths: Any,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    _port, command = _profile_and_command(capsys)
    view, dialog = _dialog(qtbot, controller, command, "--no-such-flag=set,default")
    assert dialog.command_line().startswith("kvswitch sweep local --server-cmd ")
    assert dialog.command_line().endswith("--vary=--no-such-flag=set,default")
    assert dialog.command_label.text().endswith(dialog.command_line())
    steps: list[str] = []
    qtbot.mouseClick(dialog.start_button, Qt.MouseButton.LeftButton)
    assert dialog.running
    assert dialog.cancel_button.isEnabled()
    qtbot.waitUntil(lambda: steps.append(dialog.step_label.text()) or dialog.report is not None,
                    timeout=600_000)
    report = dialog.report
    assert [row.status for row in report.rows] == ["failed to start", "measured"]
    assert report.rows[1].verdict == "HIT"  # the server's own numbers: the warm request reused the prefix
    assert any("starting the server" in step for step in steps)  # progress came while it ran
    assert dialog.progress.value() == 1000
    assert "--no-such-flag default" in dialog.result_view.toPlainText()
    stored = VerifyHistory(paths.data_dir / "verify-history").load("local")
    assert [entry.setting for entry in stored] == ["--no-such-flag set", "--no-such-flag default"]
    qtbot.waitUntil(lambda: view.chart.run is not None and len(view.chart.run.entries) == 2, timeout=30_000)


def test_cancel_stops_the_sweep_and_the_server_it_started(qtbot: Any, controller: Any, paths: Any,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    port, command = _profile_and_command(capsys)
    _view, dialog = _dialog(qtbot, controller, command, "-np=1,2,4")
    qtbot.mouseClick(dialog.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "starting the server" in dialog.step_label.text(), timeout=60_000)
    qtbot.mouseClick(dialog.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.running, timeout=300_000)
    assert dialog.report is not None
    assert len(dialog.report.rows) < 3  # it stopped before the grid's end
    assert dialog.start_button.isEnabled()  # another run can start
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()  # no server left behind


def test_quitting_during_a_sweep_stops_its_server(qtbot: Any, controller: Any, paths: Any,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """The window's quit (``AppController.shutdown``) cancels the sweep before draining the pool: the
    server it started is stopped, none is left running after the process ends."""
    port, command = _profile_and_command(capsys)
    _view, dialog = _dialog(qtbot, controller, command, "-np=1,2")
    qtbot.mouseClick(dialog.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "starting the server" in dialog.step_label.text(), timeout=60_000)
    controller.shutdown()
    assert dialog.task.cancel_event.is_set()
    qtbot.waitUntil(lambda: not dialog.running, timeout=60_000)
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
