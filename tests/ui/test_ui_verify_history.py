"""The verify history in the Verify tab: real history files written by the engine, the table, the
chart's points, comparing two runs side by side, and Export CSV through the file dialog. Times are
recorded in UTC and shown in local time: the tests fix the zone (UTC+8) through ``TZ``."""

from __future__ import annotations

import csv
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QItemSelectionModel
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import QFileDialog

from kvswitch.ui.verify.verify_history import VerifyHistoryPanel
from kvswitch.verify.history import HistoryEntry, VerifyHistory

FIRST = HistoryEntry(
    time="2026-11-30T10:00:00+00:00", profile="local", check="synthetic", verdict="PARTIAL",
    server={"url": "http://127.0.0.1:8080", "build": "b11000",
            "settings": {"n_ctx": 4096, "cache_ram_mib": 0}},
    env_fingerprint="aaaa", reuse_ratio=0.42, cached_tokens=420, prompt_tokens=1000,
    ttft_cold_ms=900.0, ttft_warm_ms=600.0,
    requests=[{"request": "cold", "cached_tokens": 0, "prompt_tokens": 1000, "prompt_ms": 900.0},
              {"request": "warm", "cached_tokens": 420, "prompt_tokens": 1000, "prompt_ms": 600.0}])
SECOND = HistoryEntry(
    time="2026-11-30T11:00:00+00:00", profile="local", check="client", verdict="hit", client="claude",
    client_version="2.1.332",
    server={"url": "http://127.0.0.1:8080", "build": "b11434",
            "settings": {"n_ctx": 4096, "cache_ram_mib": 8192}},
    env_fingerprint="bbbb", reuse_ratio=0.995, cached_tokens=19_900, prompt_tokens=20_000,
    ttft_cold_ms=4000.0, ttft_warm_ms=120.0,
    requests=[{"conversation": 1, "turn": 1, "number": 1, "cached_tokens": 0, "prompt_tokens": 9000,
               "prompt_ms": 4000.0},
              {"conversation": 1, "turn": 2, "number": 2, "cached_tokens": 8990, "prompt_tokens": 9050,
               "prompt_ms": 120.0}])


@pytest.fixture(autouse=True)
def _utc_plus_8(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A fixed local zone, eight hours east of UTC, in POSIX form (no tz database needed)."""
    monkeypatch.setenv("TZ", "KVT-8")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def history_dir(paths: Any) -> Path:
    directory = paths.data_dir / "verify-history"
    store = VerifyHistory(directory)
    store.append(FIRST)
    store.append(SECOND)
    return directory


def _select_rows(panel: VerifyHistoryPanel, rows: list[int]) -> None:
    selection = panel.table.selectionModel()
    flags = QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
    selection.clearSelection()
    for row in rows:
        selection.select(panel.table.model().index(row, 0), flags)


def test_table_and_chart_list_runs_oldest_first_in_local_time(qtbot: Any, history_dir: Path) -> None:
    panel = VerifyHistoryPanel()
    qtbot.addWidget(panel)
    panel.bind(history_dir, "local")
    assert panel.table.rowCount() == 2
    top = [panel.table.item(0, column).text() for column in range(7)]
    assert top == ["2026-11-30 18:00", "synthetic", "–", "partial", "42%", "900 → 600 ms", "b11000"]
    bottom = [panel.table.item(1, column).text() for column in range(7)]
    assert bottom == ["2026-11-30 19:00", "client", "claude 2.1.332", "hit", "100%", "4,000 → 120 ms",
                      "b11434"]
    assert panel.table.item(1, 0).toolTip() == f"Recorded as {SECOND.time}"
    # the chart reads as the table does: the oldest run first (left), the newest last (right)
    assert [(p.reuse_ratio, p.verdict, p.prompt_ms) for p in panel.chart.points()] == [
        (0.42, "partial", 600.0), (0.995, "hit", 120.0)]
    assert panel.chart.tick_labels() == ["18:00", "19:00"]
    assert panel.title.text() == "Verify history of “local”"
    panel.bind(history_dir, "other")
    assert panel.table.rowCount() == 0
    assert not panel.export_button.isEnabled()


def test_two_selected_runs_compare_side_by_side(qtbot: Any, history_dir: Path) -> None:
    panel = VerifyHistoryPanel()
    qtbot.addWidget(panel)
    panel.bind(history_dir, "local")
    _select_rows(panel, [0])
    assert not panel.compare_button.isEnabled()
    _select_rows(panel, [0, 1])
    assert panel.compare_button.isEnabled()
    panel.compare_button.click()
    dialog = panel.compare_dialog
    qtbot.addWidget(dialog)
    rows = {name: (a, b) for name, a, b in dialog.rows}
    # older run first, whichever order the rows were selected in
    assert rows["time"] == ("2026-11-30 18:00", "2026-11-30 19:00")
    headers = [dialog.table.horizontalHeaderItem(column).text() for column in range(3)]
    assert headers == ["Field", "Older run, 2026-11-30 18:00", "Newer run, 2026-11-30 19:00"]
    assert rows["verdict"] == ("PARTIAL", "hit")
    assert rows["server build"] == ("b11000", "b11434")
    assert rows["server cache_ram_mib"] == ("0", "8,192")
    assert rows["server n_ctx"] == ("4,096", "4,096")
    # requests side by side in the order each run sent them
    assert rows["request warm"] == ("420 / 1,000 cached, 600 ms", "8,990 / 9,050 cached, 120 ms")
    assert rows["request cold"] == ("0 / 1,000 cached, 900 ms", "0 / 9,000 cached, 4,000 ms")
    table = dialog.table
    labels = [table.item(row, 0).text() for row in range(table.rowCount())]
    assert table.item(labels.index("server build"), 1).font().bold()
    assert not table.item(labels.index("server n_ctx"), 1).font().bold()
    dialog.close()


def test_export_csv_writes_the_profiles_runs(qtbot: Any, history_dir: Path, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "exported.csv"
    asked: list[str] = []

    def fake_save(_parent: Any, _title: str, suggested: str, _filter: str) -> tuple[str, str]:
        asked.append(suggested)
        return str(target), "CSV files (*.csv)"

    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(fake_save))
    panel = VerifyHistoryPanel()
    qtbot.addWidget(panel)
    panel.bind(history_dir, "local")
    panel.export_button.click()
    assert asked == ["local-history.csv"]
    rows = list(csv.DictReader(target.open(encoding="utf-8")))
    assert [(r["check"], r["verdict"], r["server_build"]) for r in rows] == [
        ("synthetic", "PARTIAL", "b11000"), ("client", "hit", "b11434")]
    assert rows[1]["client_version"] == "2.1.332"
    assert "Exported 2 runs" in panel.status_label.text()


def test_export_cancelled_writes_nothing(qtbot: Any, history_dir: Path, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *_a: ("", "")))
    panel = VerifyHistoryPanel()
    qtbot.addWidget(panel)
    panel.bind(history_dir, "local")
    panel.export_button.click()
    assert list(tmp_path.glob("*.csv")) == []
    assert panel.status_label.text() == ""


def test_export_to_unwritable_place_says_so(qtbot: Any, history_dir: Path, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    target = blocker / "out.csv"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *_a: (str(target), "")))
    panel = VerifyHistoryPanel()
    qtbot.addWidget(panel)
    panel.bind(history_dir, "local")
    panel.export_button.click()
    assert not target.exists()
    assert panel.status_label.text() == f"Could not export: {target}: Not a directory"


def test_chart_spreads_runs_over_its_width_with_local_time_ticks(qtbot: Any, paths: Any) -> None:
    """Seven runs over two days (the issue's case): the bars fill the plot, each run has a local-time
    tick under it at this width, and every label is whole and inside the widget."""
    directory = paths.data_dir / "verify-history"
    store = VerifyHistory(directory)
    utc_hours = [(29, 23), (30, 2), (30, 5), (30, 9), (30, 13), (30, 15), (30, 16)]
    warm = [600.0, 120.0, 11_227.0, 130.0, 400.0, 110.0, 95.0]
    for (day, hour), ms in zip(utc_hours, warm, strict=True):
        store.append(HistoryEntry(time=f"2026-11-{day}T{hour:02d}:30:00+00:00", profile="local",
                                  check="synthetic", verdict="hit", reuse_ratio=0.99, ttft_warm_ms=ms))
    panel = VerifyHistoryPanel()
    qtbot.addWidget(panel)
    panel.resize(900, 420)
    panel.show()
    panel.bind(directory, "local")
    chart = panel.chart
    qtbot.waitExposed(panel)
    chart.repaint()
    qtbot.waitUntil(lambda: chart.layout_drawn is not None, timeout=5000)
    drawn = chart.layout_drawn
    assert drawn is not None
    ticks = chart.tick_labels()
    # UTC+8: 23:30 UTC on the 29th is 07:30 on the 30th; 16:30 UTC on the 30th is 00:30 on 12-01
    assert ticks[0] == "11-30 07:30"
    assert ticks[-1] == "12-01 00:30"
    assert [panel.table.item(row, 0).text()[5:] for row in range(7)] == ticks  # same runs, same order
    texts = [text for _rect, text in drawn.labels]
    assert all(tick in texts for tick in ticks)
    tick_rects = [rect for rect, text in drawn.labels if text in ticks]
    spread = max(r.right() for r in tick_rects) - min(r.left() for r in tick_rects)
    assert spread > 0.8 * drawn.plot.width()  # spread over the plot, not squeezed to its right
    assert drawn.outliers == [2]  # the 11 s warm TTFT is marked, the others stay readable
    assert drawn.scale_ms is not None
    assert drawn.scale_ms < 11_227.0
    font = chart.font()
    font.setPointSizeF(max(8.0, font.pointSizeF() * 0.9))
    metrics = QFontMetricsF(font)
    for rect, text in drawn.labels:
        assert chart.rect().toRectF().contains(rect), text
        assert metrics.horizontalAdvance(text) <= rect.width() + 0.5, text


def test_an_error_run_is_a_marker_not_a_full_bar(qtbot: Any, paths: Any) -> None:
    """A run that never reached the server measured nothing: a small × on the floor, its slot otherwise
    as empty as the chart's background (a full red column would read as a total miss)."""
    from PySide6.QtGui import QPalette

    directory = paths.data_dir / "verify-history"
    store = VerifyHistory(directory)
    store.append(FIRST)
    store.append(HistoryEntry(time="2026-11-30T10:30:00+00:00", profile="local", check="synthetic",
                              verdict="ERROR", server={"url": "http://127.0.0.1:8080"},
                              env_fingerprint="cccc"))
    store.append(SECOND)
    panel = VerifyHistoryPanel()
    qtbot.addWidget(panel)
    panel.bind(directory, "local")
    panel.resize(700, 400)
    panel.show()
    qtbot.waitExposed(panel)
    image = panel.chart.grab().toImage()
    errors = panel.chart.layout_drawn.errors
    assert len(errors) == 1
    box = errors[0]
    base = panel.chart.palette().color(QPalette.ColorRole.Base)
    plot = panel.chart.layout_drawn.plot
    above = image.pixelColor(int(box.center().x()), int(plot.top() + plot.height() * 0.3))
    assert above == base  # no tinted column over the error run
    assert box.height() < plot.height() / 4
