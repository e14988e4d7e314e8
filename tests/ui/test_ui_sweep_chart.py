"""The settings sweep as a chart in the Verify tab: a real ``kvswitch sweep`` (the real llama-server
b11434, tiny model) stored by the CLI's own history writer, read back through the controller on the task
pool, one point per setting with the numbers the sweep stored."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kvswitch.cli import main
from kvswitch.verify.history import HistoryEntry, VerifyHistory
from support.llama import CONTEXT, llama_server_binary, tiny_model
from support.net import free_port

pytestmark = [pytest.mark.real_server, pytest.mark.timeout(600)]


def _sweep(paths: Any, capsys: pytest.CaptureFixture[str]) -> tuple[list[dict[str, Any]], list[HistoryEntry]]:
    """A real sweep of one flag: set, llama-server refuses to start; left out, it serves (HIT)."""
    port = free_port()
    assert main(["profile", "add", "local", "--kind", "llama.cpp", "--base-url", f"http://127.0.0.1:{port}",
                 "--model", "tiny", "--target", "bash"]) == 0
    capsys.readouterr()
    command = [str(llama_server_binary()), "-m", str(tiny_model()), "-a", "tiny", "--host", "127.0.0.1",
               "--port", str(port), "-c", str(CONTEXT), "--metrics"]
    main(["sweep", "local", "--server-cmd", " ".join(command), "--vary=--no-such-flag=set,default",
          "--json"])
    rows = json.loads(capsys.readouterr().out)["rows"]
    stored = VerifyHistory(paths.data_dir / "verify-history").load("local")
    return rows, stored


def test_the_newest_sweep_is_a_chart_point_per_setting(qtbot: Any, controller: Any, paths: Any,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    from kvswitch.ui.verify.sweep_chart import SweepView  # noqa: PLC0415

    rows, stored = _sweep(paths, capsys)
    assert [row["status"] for row in rows] == ["failed to start", "measured"], rows
    view = SweepView(controller)
    qtbot.addWidget(view)
    view.resize(600, 200)
    view.show()
    view.reload("local")
    qtbot.waitUntil(lambda: view.chart.run is not None, timeout=30_000)
    run = view.chart.run
    assert run is not None
    assert [e.setting for e in run.entries] == ["--no-such-flag set", "--no-such-flag default"]
    assert run.entries == tuple(stored)  # what the CLI wrote, read back whole, nothing re-derived
    failed, served = view.chart.points()
    assert failed.verdict == "failed"  # drawn as a × on the floor, not as a miss
    assert served.verdict == "hit"
    assert served.reuse_ratio == pytest.approx(rows[1]["reuse_ratio"])
    assert served.reuse_ratio > 0.9
    assert served.prompt_ms == rows[1]["ttft_warm_ms"]
    assert view.chart.setting_labels() == ["--no-such-flag set", "--no-such-flag default"]
    view.chart.repaint()
    drawn = view.chart.layout_drawn
    assert drawn is not None
    assert len(drawn.errors) == 1  # the setting whose server refused the flag
    shown = [text for _rect, text in drawn.labels]
    assert "--no-such-flag default" in shown
    assert "local" in view.title.text()
    assert "--no-such-flag" in view.title.text()


def test_a_profile_never_swept_says_so(qtbot: Any, controller: Any, paths: Any) -> None:
    from kvswitch.ui.verify.sweep_chart import SweepView  # noqa: PLC0415

    VerifyHistory(paths.data_dir / "verify-history").append(HistoryEntry(
        time="2026-12-01T10:00:00+00:00", profile="local", check="synthetic", verdict="HIT",
        reuse_ratio=0.99))
    view = SweepView(controller)
    qtbot.addWidget(view)
    view.reload("local")
    qtbot.waitUntil(lambda: not view.loading, timeout=30_000)
    assert view.chart.run is None
    assert view.chart.points() == []
    view.resize(600, 200)
    view.show()
    view.chart.update()
    qtbot.waitUntil(lambda: view.chart.layout_drawn is not None, timeout=10_000)
    drawn = view.chart.layout_drawn
    assert drawn is not None
    assert any("No sweep recorded yet" in text for _rect, text in drawn.labels)
