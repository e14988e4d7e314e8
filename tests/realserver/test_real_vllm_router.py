"""Two vLLM 0.32.0 instances sharing one LMCache 0.5.6 server, behind ``vllm-router`` 0.1.17 (round_robin).

Both instances run with vLLM's own prefix caching off, so a prompt instance A computed can reach
instance B only from LMCache. The truth is read here, independently of the code under test: each
instance's own ``/metrics`` (which one ran a request: its ``vllm:prompt_tokens_total`` moved; what LMCache
gave it: ``vllm:external_prefix_cache_hits_total``) and LMCache's own ``/metrics``.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from kvswitch.core.models import ModelMap, Profile, ProfileKind
from kvswitch.servers.tier_words import describe_tiers
from kvswitch.ui.logs.metrics_follower import MetricsFollower
from kvswitch.verify import run_verify
from kvswitch.verify.api_detect import OPENAI_CHAT, detect_server
from kvswitch.verify.probe import Guard
from kvswitch.verify.prompts import SUFFIX_COLD, SUFFIX_WARM, make_prefix
from kvswitch.verify.target import Target, measure
from support.cli import ok
from support.vllm import metric_sum, metric_values
from support.vllm_router import RoutedVllm, routed_vllm

log = logging.getLogger(__name__)

#: two vLLM starts side by side on 2 busy cores, LMCache and the router before and after them
pytestmark = [pytest.mark.real_server, pytest.mark.timeout(1200)]

LM_HITS, LM_ASKED = "lmcache_mp_lookup_hit_tokens_total", "lmcache_mp_lookup_requested_tokens_total"
EXT_HITS, LOCAL_HITS = "vllm:external_prefix_cache_hits_total", "vllm:prefix_cache_hits_total"
PROMPT = "vllm:prompt_tokens_total"
HIT_L1, HIT_L2 = "lmcache_mp_lookup_hit_l1_tokens_total", "lmcache_mp_lookup_hit_l2_tokens_total"


@pytest.fixture(scope="module")
def routed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RoutedVllm]:
    with routed_vllm(tmp_path_factory.mktemp("vllm-router")) as running:
        yield running


def _profile(url: str) -> Profile:
    return Profile(name="routed", kind=ProfileKind.VLLM, base_url=url, model="tiny",
                   models=ModelMap(small_fast="tiny"), targets=["codex"])


def _target(url: str) -> Target:
    profile = _profile(url)
    return Target(profile, detect_server(Guard(60), profile), OPENAI_CHAT, "tiny")


def _pages(routed: RoutedVllm) -> dict[str, dict[str, float]]:
    """Every instance's page and LMCache's, read here."""
    pages = {server.url: metric_values(server.metrics_url) for server in routed.instances}
    pages["lmcache"] = metric_values(routed.lmcache.metrics_url)
    return pages


def _delta(before: dict[str, dict[str, float]], after: dict[str, dict[str, float]], where: str,
           name: str) -> int:
    return int(metric_sum(after[where], name) - metric_sum(before[where], name))


def _ran_on(routed: RoutedVllm, before: dict[str, dict[str, float]], after: dict[str, dict[str, float]]
            ) -> list[str]:
    return [s.url for s in routed.instances if _delta(before, after, s.url, PROMPT) > 0]


def test_a_prefix_computed_on_a_is_served_to_b_by_lmcache(routed: RoutedVllm) -> None:
    a, b = routed.instances
    on_a, on_b = _target(a.url), _target(b.url)
    assert on_a.server.instances is None  # an instance itself is no router
    prefix = make_prefix("router-a-then-b", 40)

    first = measure(Guard(300), on_a, on_a.body(prefix, SUFFIX_COLD))
    assert first.served_by is not None
    assert "neither" in first.served_by, first.served_by

    before = _pages(routed)
    again = measure(Guard(300), on_b, on_b.body(prefix, SUFFIX_WARM))
    after = _pages(routed)
    assert _ran_on(routed, before, after) == [b.url]  # A's own counters did not move
    lm_hits, lm_asked = (_delta(before, after, "lmcache", n) for n in (LM_HITS, LM_ASKED))
    external = _delta(before, after, b.url, EXT_HITS)
    assert lm_hits > 1000, (lm_hits, lm_asked)
    assert external == lm_hits
    assert _delta(before, after, b.url, LOCAL_HITS) == 0  # B never saw the prompt; its own cache is off
    assert again.served_by is not None
    assert again.served_by.startswith("served by LMCache"), again.served_by
    by_source = {r.source: r for r in again.readings}
    assert by_source["LMCache lmcache_mp_lookup_hit_tokens"].cached == lm_hits
    assert by_source["LMCache lmcache_mp_lookup_hit_tokens"].prompt == lm_asked
    assert by_source["metrics vllm:external_prefix_cache_hits"].cached == external


def test_verify_through_the_router_names_each_instance(routed: RoutedVllm) -> None:
    found = _target(routed.url).server.instances
    assert found is not None  # from the router's own list, nothing configured
    assert sorted(found.urls) == sorted(s.url for s in routed.instances)

    pages: list[dict[str, dict[str, float]]] = [_pages(routed)]

    def between(_guard: Guard, _target: Target, _prefix: str) -> None:
        pages.append(_pages(routed))  # after the cold request, before the warm one

    result = run_verify(_profile(routed.url), timeout=300, api=OPENAI_CHAT, claude_replay=False,
                        between=between)
    pages.append(_pages(routed))
    cold_on, warm_on = _ran_on(routed, pages[0], pages[1]), _ran_on(routed, pages[1], pages[2])
    assert len(cold_on) == 1, cold_on
    assert len(warm_on) == 1, warm_on
    assert cold_on != warm_on  # round_robin: the warm request went to the other instance
    assert result.cold_instance == cold_on[0]
    assert result.instance == warm_on[0]
    data: dict[str, Any] = result.to_json()
    assert data["instance"] == warm_on[0]
    lm_hits = _delta(pages[1], pages[2], "lmcache", LM_HITS)
    assert lm_hits > 1000
    assert result.verdict == "HIT", result.describe()
    assert result.cached_tokens == _delta(pages[1], pages[2], warm_on[0], EXT_HITS) == lm_hits
    assert result.served_by is not None
    assert result.served_by.startswith("served by LMCache"), result.served_by
    assert any(e.startswith(f"warm request: ran on {warm_on[0]}") for e in result.evidence), result.evidence


def test_instances_given_on_the_command_line(routed: RoutedVllm, capsys: pytest.CaptureFixture[str]) -> None:
    """``verify --instance URL`` (for a router that does not list its instances) reads the same truth."""
    urls = [server.url for server in routed.instances]
    before = _pages(routed)
    out = ok(capsys, "verify", "--base-url", routed.url, "--kind", "vllm", "--api", OPENAI_CHAT,
             "--no-claude-replay", "--timeout", "300", "--json", *(f"--instance={url}" for url in urls))
    after = _pages(routed)
    data = json.loads(out)
    ran = _ran_on(routed, before, after)
    assert sorted(ran) == sorted(urls)  # round_robin: one request on each
    assert {data["cold_instance"], data["instance"]} == set(urls)
    assert any(e.startswith(f"warm request: ran on {data['instance']} (instance")
               and "behind the given instances" in e for e in data["evidence"]), data["evidence"]
    assert data["verdict"] == "HIT"
    assert data["cached_tokens"] == _delta(before, after, "lmcache", LM_HITS)


def _lm_config_chunk(routed: RoutedVllm) -> Any:
    """LMCache's chunk size as its own ``/config`` page says it, read here."""
    config = httpx.get(routed.lmcache.metrics_url.removesuffix("/metrics") + "/config", timeout=10).json()

    def find(data: Any) -> Any:
        if isinstance(data, dict):
            if "chunk_size" in data:
                return data["chunk_size"]
            data = list(data.values())
        for value in data if isinstance(data, list) else ():
            found = find(value)
            if found is not None:
                return found
        return None

    return find(config)


def test_the_live_counters_follow_each_instance_behind_the_router(routed: RoutedVllm) -> None:
    """The live panel's counters reader, given the router's URL, follows each instance's own page (the
    router's ``/metrics`` is one instance's in turn): each event is one instance's counters moving. With
    LMCache connected, each event also carries the tier split, every figure equal to the counters' own
    increase around that request (LMCache's and the instance's pages, read here)."""
    follower = MetricsFollower(routed.url + "/metrics", interval=0.5)
    follower.start()
    prompt = make_prefix("router-live-counters", 40) + "\n" + SUFFIX_COLD
    rounds: list[tuple[dict[str, dict[str, float]], dict[str, dict[str, float]], list[Any]]] = []
    try:
        deadline = time.monotonic() + 30
        while not all((r.status or "").startswith("reading") and r.deltas.tiers is not None
                      for r in follower.readers) and time.monotonic() < deadline:
            time.sleep(0.2)  # the thread's first scrapes (the baseline, LMCache found from the processes)
        assert sorted(r.url for r in follower.readers) == sorted(s.metrics_url for s in routed.instances)
        time.sleep(1.5)  # a few idle scrapes after the baseline
        follower.take()
        for _ in range(2):  # round_robin: one on each instance, the second served by LMCache
            before = _pages(routed)
            answer = httpx.post(routed.url + "/v1/chat/completions", timeout=300,
                                json={"model": "tiny", "messages": [{"role": "user", "content": prompt}]})
            assert answer.status_code == 200, answer.text
            after = _pages(routed)
            events: list[Any] = []
            wait = time.monotonic() + 60
            while not events and time.monotonic() < wait:
                time.sleep(0.5)  # the follower's next scrapes
                events += follower.take().events
            rounds.append((before, after, events))
    finally:
        follower.stop()
    ran = [_ran_on(routed, before, after) for before, after, _ in rounds]
    assert sorted(sum(ran, [])) == sorted(s.url for s in routed.instances), ran
    chunk = _lm_config_chunk(routed)
    for (before, after, events), [where] in zip(rounds, ran, strict=True):
        assert [e.requests for e in events] == [1], events
        [event] = events
        local, external = (_delta(before, after, where, n) for n in (LOCAL_HITS, EXT_HITS))
        prompt_tokens = _delta(before, after, where, PROMPT)
        assert (event.prompt_tokens, event.cached_tokens) == (prompt_tokens, external)
        tiers = event.tiers
        assert tiers is not None, event
        assert tiers["lmcache_l1"] == _delta(before, after, "lmcache", HIT_L1)
        assert tiers["lmcache_l2"] == _delta(before, after, "lmcache", HIT_L2)
        assert tiers["vllm_prefix_cache"] == local
        assert tiers["vllm_external"] == external
        assert tiers["computed"] == prompt_tokens - local - external
        assert tiers["chunk_size"] == chunk
        assert tiers["requests"] == 1
        assert tiers["source"] == routed.lmcache.metrics_url
        text = describe_tiers(tiers)
        assert f"LMCache L1 (CPU) {tiers['lmcache_l1']:,}" in text, text
        assert f"computed {tiers['computed']:,}" in text, text
    first, again = (r[2][0].tiers for r in rounds)
    assert first["lmcache_l1"] == 0  # A computed it
    assert first["computed"] == rounds[0][2][0].prompt_tokens
    # B got it from LMCache's L1: what LMCache counted is what vLLM took
    assert again["lmcache_l1"] > 1000
    assert again["lmcache_l1"] + again["lmcache_l2"] == again["vllm_external"]
    log.info(f"live tier split: A {describe_tiers(first)} | B {describe_tiers(again)}")
