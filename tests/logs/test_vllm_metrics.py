"""Cache events from vLLM's ``/metrics`` counters (``logs.parsers.request_counters``), on real pages of
vLLM 0.32.0 captured by ``scripts/capture_vllm_logs.py --metrics`` (``tests/fixtures/vllm-0.32.0/metrics``):
a page after every step, and the answers' own ``usage`` to check each event against."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kvswitch.core.prometheus import metrics_url
from kvswitch.logs.parsers.request_counters import (
    HITS,
    PROMPT,
    SUCCESS,
    MetricsDeltas,
    has_cache_counters,
    parse_counters,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
PAGES = FIXTURES / "vllm-0.32.0" / "metrics"
STEPS: list[dict[str, Any]] = json.loads((PAGES / "steps.json").read_text(encoding="utf-8"))


def _page(name: str) -> dict[str, float]:
    return parse_counters((PAGES / name).read_text(encoding="utf-8"))


def _usage_numbers(usage: dict[str, Any]) -> tuple[int, int]:
    """(prompt tokens, cached tokens) as the answer states them (Chat Completions or Messages)."""
    if "prompt_tokens" in usage:
        return usage["prompt_tokens"], (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
    cached = usage.get("cache_read_input_tokens") or 0
    return usage["input_tokens"] + cached, cached


def _events_per_step() -> list[list[Any]]:
    deltas = MetricsDeltas()
    assert deltas.feed(_page("00-start.prom")) == []  # the first scrape is the baseline
    return [deltas.feed(_page(step["page"])) for step in STEPS]


def test_the_pages_are_vllms_with_the_counters_an_event_needs() -> None:
    start = _page("00-start.prom")
    assert has_cache_counters(start)
    assert start[SUCCESS] == 0
    last = _page(STEPS[-1]["page"])
    assert last[SUCCESS] == sum(step["requests"] for step in STEPS)
    # a llama.cpp page has its own counters, none of these
    llama = (FIXTURES / "llama.cpp-b11434" / "responses" / "metrics.txt").read_text(encoding="utf-8")
    assert not has_cache_counters(parse_counters(llama))


@pytest.mark.parametrize("index", range(len(STEPS)), ids=[step["step"] for step in STEPS])
def test_each_step_is_one_event_with_the_answers_numbers(index: int) -> None:
    step = STEPS[index]
    [event] = _events_per_step()[index]
    numbers = [_usage_numbers(usage) for usage in step["usage"]]
    assert event.requests == step["requests"]
    assert event.prompt_tokens == sum(prompt for prompt, _ in numbers)
    assert event.cached_tokens == sum(cached for _, cached in numbers)
    assert event.new_tokens == event.prompt_tokens - event.cached_tokens
    assert event.server == "vllm"
    assert (event.first_line, event.last_line) == (index + 2, index + 2)  # scrape numbers, baseline is 1


def test_the_repeat_is_a_hit_and_the_changed_first_block_a_miss() -> None:
    per_step = zip(STEPS, _events_per_step(), strict=True)
    verdicts = {step["step"]: events[0].verdict for step, events in per_step}
    assert verdicts["cold"] == "miss"
    assert verdicts["repeat"] == "hit"
    assert verdicts["first-block-changed"] == "miss"


def test_two_requests_between_two_scrapes_are_one_aggregate_not_a_split() -> None:
    index = next(i for i, step in enumerate(STEPS) if step["requests"] > 1)
    [event] = _events_per_step()[index]
    assert event.requests == 2
    assert event.reason is not None
    assert "2 requests finished between two scrapes" in event.reason
    assert "not split per request" in event.reason
    single = _events_per_step()[0][0]
    assert "one finished request" in (single.reason or "")


def test_tokens_counted_before_a_request_finishes_go_to_the_next_event() -> None:
    """A scrape between a request's prefill and its end: its tokens wait for the request's event."""
    deltas = MetricsDeltas()
    deltas.feed(_page("00-start.prom"))
    cold = _page(STEPS[0]["page"])
    unfinished = dict(cold, **{SUCCESS: 0.0})  # the counters of the same moment, the request not done
    assert deltas.feed(unfinished) == []
    [event] = deltas.feed(cold)
    assert event.prompt_tokens == cold[PROMPT]
    assert (event.first_line, event.last_line) == (2, 3)  # the event spans both scrapes


def test_a_counter_going_down_is_a_restart_and_a_new_baseline() -> None:
    deltas = MetricsDeltas()
    for name in ("00-start.prom", STEPS[0]["page"], STEPS[1]["page"]):
        deltas.feed(_page(name))
    assert deltas.feed(_page("00-start.prom")) == []  # vLLM started again: counters back at zero
    [event] = deltas.feed(_page(STEPS[1]["page"]))  # two requests since the restart's baseline
    repeat = _page(STEPS[1]["page"])
    assert (event.requests, event.prompt_tokens, event.cached_tokens) == (2, repeat[PROMPT], repeat[HITS])


def test_a_page_without_the_counters_yields_nothing_and_keeps_the_baseline() -> None:
    deltas = MetricsDeltas()
    deltas.feed(_page("00-start.prom"))
    assert deltas.feed(parse_counters("# HELP nothing\nnot_vllm_total 3\n")) == []
    [event] = deltas.feed(_page(STEPS[0]["page"]))
    assert event.requests == 1


def test_the_metrics_url_is_beside_the_api_root() -> None:
    assert metrics_url("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/metrics"
    assert metrics_url("http://127.0.0.1:8000/") == "http://127.0.0.1:8000/metrics"
