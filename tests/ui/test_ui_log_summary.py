"""The log panel read at a glance, on real llama-server b11434 logs followed through a real file: the
summary strip equals sums over the engine's own events, rows carry the log's own clock and the server's
task and slot numbers (or say that only the read time exists), and the chart's labels stay inside."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetricsF

from kvswitch.core.models import LogSource
from kvswitch.logs.analyzer import LogAnalyzer
from kvswitch.logs.model import CacheEvent
from kvswitch.ui.logs.events_model import COL_REQUEST, COL_TIME
from kvswitch.ui.logs.log_panel import LogPanel

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures" / "llama.cpp-b11434"
DEMO_LOG = ROOT / "ui" / "data" / "llama_server_demo.log"


def _engine_events(path: Path) -> tuple[list[str], list[CacheEvent]]:
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    analyzer = LogAnalyzer("llama.cpp")
    events = [event for number, text in enumerate(lines, 1) for event in analyzer.feed(text, number).events]
    return lines, events


def _expected_strip(events: list[CacheEvent]) -> dict[str, Any]:
    """The strip's numbers from the engine's events, as its tooltips define them: per slot, the first
    request that did not hit is cold, a shorter prompt that reused over 256 tokens a shared prefix; on a
    miss or partial, the tokens of the slot's previous prompt not reused count as re-processed, and their
    share of the prompt time as lost."""
    previous: dict[int | None, int] = {}
    hits = chances = reprocessed = 0
    lost = 0.0
    for e in events:
        before = previous.get(e.slot)
        previous[e.slot] = e.prompt_tokens
        if e.verdict != "hit" and (before is None or (e.prompt_tokens < before and e.cached_tokens > 256)):
            continue
        chances += 1
        if e.verdict == "hit":
            hits += 1
            continue
        assert before is not None
        again = max(0, min(before, e.prompt_tokens) - e.cached_tokens)
        reprocessed += again
        lost += (e.prompt_ms or 0.0) * min(1.0, again / e.new_tokens)
    return {"hits": hits, "chances": chances, "reprocessed": reprocessed, "lost_ms": lost,
            "prompt": sum(e.prompt_tokens for e in events), "cached": sum(e.cached_tokens for e in events)}


@pytest.fixture
def panel(qtbot: Any) -> Any:
    widget = LogPanel()
    qtbot.addWidget(widget)
    widget.resize(1000, 760)
    widget.show()
    yield widget
    widget.stop()


def _follow(qtbot: Any, panel: LogPanel, tmp_path: Path, lines: list[str], count: int) -> None:
    log_file = tmp_path / "server.log"
    log_file.write_text("")
    panel.bind(LogSource(kind="file", path=str(log_file)), "llama.cpp")
    qtbot.waitUntil(lambda: "following" in panel.status_label.text(), timeout=10000)
    with log_file.open("a", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    qtbot.waitUntil(lambda: panel.events_model.rowCount() == count, timeout=20000)


@pytest.mark.parametrize("log", [DEMO_LOG, FIXTURES / "llama_server_cc_np2.log"], ids=["demo", "cc_np2"])
def test_strip_equals_sums_over_the_engines_events(qtbot: Any, panel: LogPanel, tmp_path: Path,
                                                   log: Path) -> None:
    lines, events = _engine_events(log)
    _follow(qtbot, panel, tmp_path, lines, len(events))
    want = _expected_strip(events)
    assert want["reprocessed"] > 0
    assert 0 < want["hits"] < want["chances"]
    strip = panel.summary
    assert strip.hit_rate.value.text() == f"{want['hits'] / want['chances']:.0%}"
    assert strip.hit_rate.caption.text() == f"hit rate: {want['hits']:,} of {want['chances']:,} requests"
    assert strip.reused.value.text() == f"{want['cached'] / want['prompt']:.0%}"
    assert f"{want['prompt']:,} prompt tokens" in strip.reused.caption.text()
    assert strip.reprocessed.value.text() == f"{want['reprocessed']:,}"
    totals = panel.events_model.totals
    assert totals.lost_ms == pytest.approx(want["lost_ms"])
    assert strip.time_lost.value.text() in (f"{want['lost_ms']:,.0f} ms", f"{want['lost_ms'] / 1000:.1f} s",
                                            f"{want['lost_ms'] / 1000:,.0f} s")
    for tile in (strip.hit_rate, strip.reused, strip.reprocessed, strip.time_lost):
        assert len(tile.toolTip()) > 40  # each says how it is computed
    # on top of the panel, and the requests above the raw log, which gets less room
    assert strip.geometry().bottom() < panel.splitter.geometry().top()
    requests, raw = panel.splitter.sizes()
    assert requests > raw
    assert panel.splitter.widget(1).isAncestorOf(panel.view)
    panel.clear()
    assert strip.reprocessed.value.text() == "0"


def _clock_text(line: str) -> str:
    minutes, seconds, millis, _micros = line.split(" ", 1)[0].split(".")
    return f"{int(minutes)}:{seconds}.{millis}"


def test_rows_carry_the_servers_clock_and_numbers(qtbot: Any, panel: LogPanel, tmp_path: Path) -> None:
    lines, events = _engine_events(DEMO_LOG)
    _follow(qtbot, panel, tmp_path, lines, len(events))
    model = panel.events_model
    assert model.headerData(COL_TIME, Qt.Orientation.Horizontal) == "Server clock"
    assert "no wall-clock time" in model.headerData(COL_TIME, Qt.Orientation.Horizontal,
                                                    Qt.ItemDataRole.ToolTipRole)
    shown = [model.index(row, COL_TIME).data() for row in range(model.rowCount())]
    # the clock the server printed on the line that finished each request, as the raw log shows it
    assert shown == [_clock_text(lines[e.last_line - 1]) for e in events]
    assert len(set(shown)) == len(shown)
    assert [model.index(row, COL_REQUEST).data() for row in range(model.rowCount())] == [
        f"task {e.task} · slot {e.slot}" for e in events]


def test_a_log_without_time_says_the_time_is_the_read_time(qtbot: Any, panel: LogPanel,
                                                           tmp_path: Path) -> None:
    lines, events = _engine_events(FIXTURES / "llama_server_np1_plain.log")
    _follow(qtbot, panel, tmp_path, lines, len(events))
    model = panel.events_model
    assert model.headerData(COL_TIME, Qt.Orientation.Horizontal) == "Read at"
    tip = model.headerData(COL_TIME, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
    assert "when KV Switch read" in tip
    assert "when KV Switch read" in model.index(0, COL_TIME).data(Qt.ItemDataRole.ToolTipRole)
    assert model.index(0, COL_REQUEST).data() == f"task {events[0].task} · slot {events[0].slot}"


@pytest.mark.parametrize("width", [1000, 420])
def test_chart_clamps_the_cold_outliers_and_keeps_labels_inside(qtbot: Any, panel: LogPanel, tmp_path: Path,
                                                                width: int) -> None:
    lines, events = _engine_events(FIXTURES / "llama_server_cc_np2.log")
    _follow(qtbot, panel, tmp_path, lines, len(events))
    panel.resize(width, 760)
    chart = panel.chart
    chart.repaint()
    drawn = chart.layout_drawn
    assert drawn is not None
    times = [e.prompt_ms for e in events]
    assert drawn.scale_ms is not None
    assert drawn.scale_ms < max(t for t in times if t is not None)
    assert drawn.outliers == [i for i, t in enumerate(times) if t is not None and t > drawn.scale_ms]
    assert drawn.outliers  # the cold 13.8k-token prompts
    texts = [text for _rect, text in drawn.labels]
    assert "10 s" in texts  # readable units, never "11,227m"
    metrics = QFontMetricsF(_chart_font(chart))
    inside = chart.rect().toRectF()
    for rect, text in drawn.labels:
        assert inside.contains(rect), (text, rect, inside)
        assert metrics.horizontalAdvance(text) <= rect.width() + 0.5, text  # nothing cut off
    assert any("above the scale" in text or text.endswith("…") for text in texts)


def _chart_font(chart: Any) -> Any:
    font = chart.font()
    font.setPointSizeF(max(8.0, font.pointSizeF() * 0.9))
    return font


def test_a_log_with_wall_clock_shows_its_own_time_and_request_ids(qtbot: Any) -> None:
    """vLLM + LMCache lines carry a date and time and a request id (``pasted-lines``, see its README)."""
    import json

    from kvswitch.logs.follow import classify_lines
    from kvswitch.ui.logs.events_model import CacheEventsModel

    pasted = ROOT / "fixtures" / "pasted-lines"
    hint = json.loads((pasted / "lmcache_vllm.expected.json").read_text())["kind_hint"]
    lines = (pasted / "lmcache_vllm.log").read_text().splitlines()
    _classified, events, _last = classify_lines(LogAnalyzer(hint), lines, 0)
    model = CacheEventsModel()
    model.add_events(events)
    assert model.headerData(COL_TIME, Qt.Orientation.Horizontal) == "Time"
    assert [model.index(row, COL_TIME).data() for row in range(len(events))] == [
        e.timestamp[11:19] for e in events if e.timestamp]
    assert [model.index(row, COL_REQUEST).data() for row in range(len(events))] == [
        e.request_id for e in events]


def test_totals_outlive_the_tables_cap(qtbot: Any) -> None:
    from kvswitch.ui.logs.events_model import CacheEventsModel

    _lines, events = _engine_events(DEMO_LOG)
    whole = CacheEventsModel(max_events=1000)
    whole.add_events(events)
    capped = CacheEventsModel(max_events=4)
    capped.add_events(events[:6])
    capped.add_events(events[6:])
    assert capped.rowCount() == 4
    assert capped.totals == whole.totals
    assert [capped.verdict_at(row) for row in range(4)] == [whole.verdict_at(row) for row in range(9, 13)]
