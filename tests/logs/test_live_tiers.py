"""The live panel's tier split (``logs.parsers.tier_counters``, ``servers.tier_words``) on real pages of vLLM
0.32.0 and LMCache 0.5.6 (``tests/fixtures/lmcache-0.5.6/``, see its README): a 1,542-token prompt that
was all computed, with both pages right before and after it.

Every expected figure is read from the captured pages by the test itself, never from the code under test.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kvswitch.core.strictparse import loads as strict_json
from kvswitch.logs.model import CacheEvent
from kvswitch.logs.parsers.request_counters import MetricsDeltas, parse_counters
from kvswitch.logs.parsers.tier_counters import TierInterval, connect, tier_page
from kvswitch.servers import lmcache
from kvswitch.servers.tier_sources import pinned_tier
from kvswitch.servers.tier_words import describe_tiers
from kvswitch.servers.vllm import LMCACHE_TIER
from support.net import free_port

PAGES = Path(__file__).resolve().parents[1] / "fixtures" / "lmcache-0.5.6"
FIXTURES = PAGES.parent


def _text(name: str) -> str:
    return (PAGES / name).read_text(encoding="utf-8")


def _sum(text: str, name: str) -> float:
    """A metric's value summed over its label sets, read from the page's own lines."""
    total = 0.0
    for line in text.splitlines():
        if line.startswith((name + "{", name + " ")):
            total += float(line.rsplit(" ", 1)[1])
    return total


def _delta(before: str, after: str, name: str) -> int:
    return int(_sum(_text(after), name) - _sum(_text(before), name))


def _settings() -> lmcache.Settings:
    config, adapters = (strict_json(_text(name)) for name in ("config.json", "config-adapters.json"))
    return lmcache.settings_from(config, adapters)


def _deltas() -> MetricsDeltas:
    deltas = MetricsDeltas()
    deltas.tiers = TierInterval(LMCACHE_TIER, "http://127.0.0.1:1/metrics", _settings())
    return deltas


def _cold_event() -> CacheEvent:
    deltas = _deltas()
    vllm_before, vllm_after = (parse_counters(_text(f"cold-vllm-{w}.txt")) for w in ("before", "after"))
    assert deltas.feed(vllm_before, tier=tier_page(_text("cold-lmcache-before.txt"))) == []  # the baseline
    [event] = deltas.feed(vllm_after, tier=tier_page(_text("cold-lmcache-after.txt")))
    return event


def test_a_computed_prompt_is_computed_by_the_pages_own_counters() -> None:
    event = _cold_event()
    vb, va = "cold-vllm-before.txt", "cold-vllm-after.txt"
    lb, la = "cold-lmcache-before.txt", "cold-lmcache-after.txt"
    prompt = _delta(vb, va, "vllm:prompt_tokens_total")
    local = _delta(vb, va, "vllm:prefix_cache_hits_total")
    external = _delta(vb, va, "vllm:external_prefix_cache_hits_total")
    assert _delta(vb, va, "vllm:request_success_total") == 1
    tiers = event.tiers
    assert tiers is not None
    assert tiers["requests"] == event.requests == 1
    assert tiers["vllm_prefix_cache"] == local
    assert tiers["vllm_external"] == external
    assert tiers["lmcache_l1"] == _delta(lb, la, "lmcache_mp_lookup_hit_l1_tokens_total")
    assert tiers["lmcache_l2"] == _delta(lb, la, "lmcache_mp_lookup_hit_l2_tokens_total")
    assert tiers["computed"] == prompt - local - external == event.new_tokens
    assert tiers["computed"] > 1000  # the captured prompt: all computed (README)
    assert tiers["chunk_size"] == strict_json(_text("config.json"))["mp"]["chunk_size"]
    assert tiers["source"] == "http://127.0.0.1:1/metrics"
    text = describe_tiers(tiers)
    assert text.startswith(f"vLLM prefix cache {local:,} · LMCache L1 (CPU) {tiers['lmcache_l1']:,} · "), text
    assert f"computed {prompt - local - external:,}" in text
    assert f"LMCache chunk size {tiers['chunk_size']:,}" in text
    assert "together" not in text  # one request's own numbers
    assert "lookups found" not in text  # LMCache found what vLLM took (nothing)


def test_the_event_json_keeps_its_keys_without_a_split_and_carries_it_with_one() -> None:
    event = _cold_event()
    data = event.to_json()
    assert data["tiers"] == event.tiers
    assert json.loads(json.dumps(data))["tiers"] == event.tiers
    assert CacheEvent.from_json(data).tiers == event.tiers
    plain = MetricsDeltas()  # no LMCache connected: the event of before, key for key
    plain.feed(parse_counters(_text("cold-vllm-before.txt")))
    [alone] = plain.feed(parse_counters(_text("cold-vllm-after.txt")))
    assert alone.tiers is None
    assert "tiers" not in alone.to_json()
    assert set(data) - set(alone.to_json()) == {"tiers"}


def test_lookups_while_this_vllm_was_idle_stay_out_of_its_event() -> None:
    """Behind a router another instance may use the shared LMCache: a scrape where this vLLM holds no
    request starts the interval again, so its event counts none of that instance's L1 hits."""
    deltas = _deltas()
    idle = parse_counters(_text("cold-vllm-before.txt"))
    assert idle["vllm:num_requests_running"] == idle["vllm:num_requests_waiting"] == 0
    deltas.feed(idle, tier=tier_page(_text("cold-lmcache-before.txt")))
    other = _delta("cold-lmcache-before.txt", "metrics-l1-hit.txt", "lmcache_mp_lookup_hit_l1_tokens_total")
    assert other > 1000  # LMCache's L1 served these to someone else meanwhile
    assert deltas.feed(idle, tier=tier_page(_text("metrics-l1-hit.txt"))) == []
    busy = parse_counters(_text("cold-vllm-after.txt"))
    [event] = deltas.feed(busy, tier=tier_page(_text("metrics-l1-hit.txt")))
    assert event.tiers is not None
    assert event.tiers["lmcache_l1"] == _delta("metrics-l1-hit.txt", "metrics-l1-hit.txt",
                                               "lmcache_mp_lookup_hit_l1_tokens_total")


def test_a_lookup_of_its_own_before_a_lagging_idle_gauge_stays_in_its_event() -> None:
    """vLLM's gauges can lag its scheduler: a scrape may show no request running or waiting just after this
    vLLM's own lookup hit LMCache (once in a fresh-clone CI run behind vllm-router). vLLM then counts the
    tokens as brought in by LMCache, more than LMCache's counters moved since that scrape: the split is
    taken since the previous event, so it holds the hit."""
    deltas = _deltas()
    idle = parse_counters(_text("cold-vllm-before.txt"))
    deltas.feed(idle, tier=tier_page(_text("cold-lmcache-before.txt")))  # the baseline
    hit = _delta("cold-lmcache-before.txt", "metrics-l1-hit.txt", "lmcache_mp_lookup_hit_l1_tokens_total")
    assert hit > 1000
    assert deltas.feed(dict(idle), tier=tier_page(_text("metrics-l1-hit.txt"))) == []  # "idle", lookup done
    done = dict(idle)
    for name, grew in (("vllm:request_success_total", 1), ("vllm:prompt_tokens_total", hit + 34),
                       ("vllm:external_prefix_cache_hits_total", hit)):
        done[name] = idle[name] + grew  # the request's own counts, once its first output came
    [event] = deltas.feed(done, tier=tier_page(_text("metrics-l1-hit.txt")))
    assert event.tiers is not None
    assert event.tiers["vllm_external"] == hit
    assert event.tiers["lmcache_l1"] + event.tiers["lmcache_l2"] == hit + _delta(
        "cold-lmcache-before.txt", "metrics-l1-hit.txt", "lmcache_mp_lookup_hit_l2_tokens_total")
    assert event.tiers["computed"] == 34


def test_no_split_when_lmcache_restarted_or_did_not_answer() -> None:
    vllm_before, vllm_after = (parse_counters(_text(f"cold-vllm-{w}.txt")) for w in ("before", "after"))
    restarted = _deltas()
    restarted.feed(vllm_before, tier=tier_page(_text("metrics-l1-hit.txt")))
    # LMCache's counters went down (a fresh server's page): its figures are no interval's
    assert _sum(_text("cold-lmcache-after.txt"), "lmcache_mp_lookup_hit_l1_tokens_total") < _sum(
        _text("metrics-l1-hit.txt"), "lmcache_mp_lookup_hit_l1_tokens_total")
    [event] = restarted.feed(vllm_after, tier=tier_page(_text("cold-lmcache-after.txt")))
    assert event.tiers is None
    silent = _deltas()
    silent.feed(vllm_before, tier=None)  # LMCache's page did not answer at the start
    [event] = silent.feed(vllm_after, tier=tier_page(_text("cold-lmcache-after.txt")))
    assert event.tiers is None
    assert describe_tiers(event.tiers) == ""


def _split_with(**changes: Any) -> dict[str, Any]:
    tiers = _cold_event().tiers
    assert tiers is not None
    return {**tiers, **changes}


def test_an_aggregate_says_the_split_is_for_all_its_requests_together() -> None:
    text = describe_tiers(_split_with(requests=3))
    assert text.startswith("3 requests together (the counters moved once for all of them, not split per "
                           "request): vLLM prefix cache "), text


def test_l2_gives_its_tokens_once_and_each_adapters_loads() -> None:
    split = _split_with(lmcache_l2=1024, vllm_external=1024, lmcache_l2_adapters={"fs": 2, "resp": 1})
    text = describe_tiers(split)
    assert "LMCache L2 1,024 (disk (fs) 2 loads, Redis (resp) 1 load)" in text, text
    assert "lookups found" not in text


def test_lmcache_finding_more_than_vllm_took_gives_both_numbers() -> None:
    text = describe_tiers(_split_with(lmcache_l1=4864, vllm_external=4608))
    assert "LMCache's lookups found 4,864 tokens in this time, vLLM counted 4,608" in text, text


def test_a_split_without_figures_is_no_text() -> None:
    assert describe_tiers(None) == ""
    assert describe_tiers({}) == ""
    assert describe_tiers({"lmcache_l1": "many"}) == ""
    assert describe_tiers({"lmcache_l1": 5}) == "LMCache L1 (CPU) 5"  # what is missing is left out, not 0


def test_connect_finds_lmcache_from_vllms_page_and_not_from_llama_cpp() -> None:
    url = f"http://127.0.0.1:{free_port()}/metrics"  # pinned, as `kvswitch sweep` pins the one it started
    with pinned_tier("lmcache", url):
        found = connect("vllm", _text("cold-vllm-before.txt"), "http://127.0.0.1:8000/metrics", 1.0)
        llama = (FIXTURES / "llama.cpp-b11434" / "responses" / "metrics.txt").read_text(encoding="utf-8")
        assert connect("vllm", llama, "http://127.0.0.1:8000/metrics", 1.0) is None
    assert found is not None
    assert found.metrics_url == url
    assert found.settings is None  # nothing answers there: no chunk size, the split goes on without it
