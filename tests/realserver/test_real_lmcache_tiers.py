"""Which LMCache tier served a prompt, and the chunk boundary, on vLLM 0.32.0 + LMCache 0.5.6 + redis-server.

One vLLM (its own prefix cache off) and one ``lmcache server`` on fixed ports; the LMCache server is
restarted with other settings, and vLLM with it (measured: vLLM's connector survives one LMCache restart,
"LMCache server is healthy again", but its engine died on the next request after a second one: "non-GPU
context not registered"). Every figure verify reports is compared with the counters this test reads
itself from LMCache's ``--http-port`` and vLLM's ``/metrics`` right around the same request.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from kvswitch.servers.vllm import LMCACHE_TIER
from kvswitch.verify.probe import Guard
from kvswitch.verify.prompts import make_prefix
from kvswitch.verify.runner import run_verify
from kvswitch.verify.target import Measured, measure
from kvswitch.verify.tier_truth import chunk_boundary
from support.lmcache_stack import Stack
from support.redis import RunningRedis, redis_server
from support.vllm import metric_sum, metric_values

pytestmark = [pytest.mark.real_server, pytest.mark.timeout(1800)]

HIT, HIT_L1, HIT_L2 = ("lmcache_mp_lookup_hit_tokens_total", "lmcache_mp_lookup_hit_l1_tokens_total",
                       "lmcache_mp_lookup_hit_l2_tokens_total")
LOADS = "lmcache_mp_l2_load_completed_requests_total"
STORE_SUBMITTED = "lmcache_mp_l2_store_submitted_objects_chunks_total"
ALLOC_FAILED = "lmcache_mp_l1_allocation_failure_chunks_total"
EVICTED = "lmcache_mp_l1_evicted_chunks_total"
#: an L1 that holds one ~1,544-token prompt's 6 chunks of 256 tokens (128 KiB each for the tiny model,
#: measured: lmcache_mp_l1_memory_usage_bytes 786,432 after one) but not two, nor verify's ~5k-token prompt
SMALL_L1_GB = 0.0015
STORE_COMPLETED = "lmcache_mp_l2_store_completed_objects_chunks_total"
LOCAL, EXTERNAL, PROMPT = ("vllm:prefix_cache_hits_total", "vllm:external_prefix_cache_hits_total",
                           "vllm:prompt_tokens_total")


@dataclass
class Counted:
    """One request through verify's ``measure`` and the counters this test read around it."""

    measured: Measured
    vllm: dict[str, float]
    lmcache: dict[str, float]
    loads: dict[str, float]

    def __post_init__(self) -> None:
        assert self.measured.tiers is not None, self.measured.readings


def _loads(page: dict[str, float], before: dict[str, float]) -> dict[str, float]:
    """LMCache's completed L2 loads per ``l2_name`` label, as a delta."""
    found = {}
    for key, value in page.items():
        if key.startswith(LOADS + "{") and 'l2_name="' in key:
            name = key.split('l2_name="', 1)[1].split('"', 1)[0]
            found[name] = found.get(name, 0.0) + value - before.get(key, 0.0)
    return {k: v for k, v in found.items() if v}


def _counted(stack: Stack, body: dict[str, Any]) -> Counted:
    vllm_before, lm_before = stack.pages()
    measured = measure(Guard(300), stack.target(), body)
    vllm_after, lm_after = stack.pages()
    return Counted(
        measured,
        {n: metric_sum(vllm_after, n) - metric_sum(vllm_before, n) for n in (LOCAL, EXTERNAL, PROMPT)},
        {n: metric_sum(lm_after, n) - metric_sum(lm_before, n) for n in (HIT, HIT_L1, HIT_L2)},
        _loads(lm_after, lm_before),
    )


def _assert_own_counters(got: Counted) -> dict[str, Any]:
    """Every figure of verify's split equals the counter this test read for the same request."""
    tiers = got.measured.tiers
    assert tiers is not None
    assert tiers["vllm_prefix_cache"] == got.vllm[LOCAL] == 0  # vLLM's own cache is off here
    assert tiers["lmcache_l1"] == got.lmcache[HIT_L1]
    assert tiers["lmcache_l2"] == got.lmcache[HIT_L2]
    assert tiers["lmcache_l1"] + tiers["lmcache_l2"] == got.lmcache[HIT]
    assert tiers["computed"] == got.vllm[PROMPT] - got.vllm[LOCAL] - got.vllm[EXTERNAL]
    assert tiers["lmcache_l2_adapters"] == got.loads
    return tiers


def _port_open(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
        return True
    return False


def _tokens(url: str, body: dict[str, Any]) -> list[int]:
    """vLLM's own tokens of a chat body (its /tokenize renders the chat template)."""
    answer = httpx.post(f"{url}/tokenize", json={"model": "tiny", "messages": body["messages"],
                                                 "add_generation_prompt": True}, timeout=60)
    answer.raise_for_status()
    return list(answer.json()["tokens"])


@pytest.fixture(scope="module")
def redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningRedis]:
    with redis_server(tmp_path_factory.mktemp("redis")) as server:
        yield server


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    handle = Stack(tmp_path_factory.mktemp("tiers"))
    try:
        yield handle
    finally:
        handle.stop()


@pytest.fixture(scope="module")
def stored(stack: Stack, redis: RunningRedis, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Phase 1: LMCache with a disk and a Redis L2; one prompt stored in L1, disk and Redis."""
    disk = tmp_path_factory.mktemp("lmcache-disk")
    adapters = ({"type": "fs", "base_path": str(disk)},
                {"type": "resp", "host": "127.0.0.1", "port": redis.port})
    stack.use(256, adapters)
    body = stack.target().body(make_prefix("tiers-stored", 60), "Which line names a fox?")
    cold = _counted(stack, body)
    assert cold.lmcache[HIT] == 0
    assert cold.measured.tiers is not None
    return {"body": body, "disk": disk, "adapters": adapters}


def _differing_at_about(stack: Stack, label: str) -> tuple[dict[str, Any], dict[str, Any], int]:
    """Two prompts equal for their first ~1,000 tokens (by vLLM's own tokens), then different."""
    prefix = make_prefix(label, 80)
    lines = prefix.splitlines()
    a = stack.target().body(prefix, "Question: which animal?")
    changed = "\n".join(lines[:40]) + "\nA different text from here on.\n" + "\n".join(lines[41:])
    b = stack.target().body(changed, "Question: which animal?")
    ta, tb = _tokens(stack.url, a), _tokens(stack.url, b)
    first = next(i for i, (x, y) in enumerate(zip(ta, tb, strict=False)) if x != y)
    assert 900 <= first <= 1100, first  # the prompts part near token 1,000
    return a, b, first


def _boundary_case(stack: Stack, label: str) -> None:
    a, b, first = _differing_at_about(stack, label)
    _counted(stack, a)
    got = _counted(stack, b)
    tiers = _assert_own_counters(got)
    reused = int(got.lmcache[HIT])
    assert 0 < reused <= first, (reused, first)
    assert reused % stack.chunk_size == 0, (reused, first)
    assert tiers["chunk_size"] == stack.chunk_size
    why = chunk_boundary(Guard(60), LMCACHE_TIER, stack.url, {}, a, b, tiers)
    assert why is not None
    head = (f"the prompt first differs at token {first}; LMCache reuses whole chunks of {stack.chunk_size} "
            "tokens")
    if reused == first // stack.chunk_size * stack.chunk_size:  # whole chunks predicted it; measured so
        assert why == f"{head}, so {reused} were reused and {first - reused} lost to the boundary"
    else:
        assert why.startswith(head), why
        assert f"LMCache's counters say {reused} were reused" in why


def test_a_repeat_is_served_from_l1_with_lmcaches_numbers(stack: Stack, stored: dict[str, Any]) -> None:
    got = _counted(stack, stored["body"])
    tiers = _assert_own_counters(got)
    assert tiers["lmcache_l1"] > 1000, tiers
    assert tiers["lmcache_l2"] == 0, tiers
    assert tiers["chunk_size"] == 256
    assert got.measured.served_by is not None
    assert got.measured.served_by.startswith("served by LMCache")
    assert got.measured.tiers_text is not None
    assert f"LMCache L1 (CPU) {tiers['lmcache_l1']}" in got.measured.tiers_text


def test_verify_explain_shows_tiers_and_the_boundary(stack: Stack, stored: dict[str, Any]) -> None:
    profile = stack.target().profile
    result = run_verify(profile, timeout=300, explain=True, claude_replay=False)
    assert result.tiers is not None, result.describe()
    assert result.tiers["lmcache_l1"] > 0, result.describe()
    data = result.to_json()
    assert data["tiers"] == result.tiers
    assert isinstance(data["tiers"]["lmcache_l1"], int)
    assert result.chunk_boundary is not None
    assert "whole chunks of 256 tokens" in result.chunk_boundary
    text = result.describe()
    assert "prompt tokens by tier:" in text
    assert "chunk boundary: the prompt first differs at token" in text


def test_a_prompt_that_differs_near_token_1000_chunk_256(stack: Stack, stored: dict[str, Any]) -> None:
    _boundary_case(stack, "boundary-256")


def test_after_a_restart_the_disk_tier_serves_it(stack: Stack, stored: dict[str, Any]) -> None:
    stack.use(256, (stored["adapters"][0],))  # empty L1, the same folder
    got = _counted(stack, stored["body"])
    tiers = _assert_own_counters(got)
    assert tiers["lmcache_l2"] > 1000, tiers
    assert tiers["lmcache_l1"] == 0, tiers
    assert set(tiers["lmcache_l2_adapters"]) == {"fs"}
    assert got.measured.tiers_text is not None
    assert "disk (fs)" in got.measured.tiers_text
    assert stack.doctor() == []  # a healthy LMCache: doctor names nothing


def test_doctor_names_a_disk_folder_that_went_away(stack: Stack, stored: dict[str, Any]) -> None:
    """LMCache 0.5.6 exits at start on an fs base_path that is not a folder (captured log); when its folder
    goes away while it runs, doctor names it with the fix, and says nothing once it is back."""
    if stack.settings != (256, (stored["adapters"][0],), 1.0):
        stack.use(256, (stored["adapters"][0],))
    disk: Path = stored["disk"]
    moved = disk.with_name(disk.name + "-moved")
    disk.rename(moved)
    try:
        found = stack.doctor()
    finally:
        moved.rename(disk)
    assert len(found) == 1, found
    assert f"LMCache's disk L2 adapter (fs): its folder {disk} is gone" in found[0]
    assert f"mkdir -p {disk}" in found[0]
    assert stack.doctor() == []


def test_after_a_restart_the_redis_tier_serves_it(stack: Stack, stored: dict[str, Any]) -> None:
    stack.use(256, (stored["adapters"][1],))  # empty L1, the same Redis, no disk
    got = _counted(stack, stored["body"])
    tiers = _assert_own_counters(got)
    assert tiers["lmcache_l2"] > 1000, tiers
    assert tiers["lmcache_l1"] == 0, tiers
    assert set(tiers["lmcache_l2_adapters"]) == {"resp"}
    assert got.measured.tiers_text is not None
    assert "Redis (resp)" in got.measured.tiers_text


def test_redis_down_is_named_with_the_fix(stack: Stack, stored: dict[str, Any], redis: RunningRedis) -> None:
    """Measured on 0.5.6: with its Redis gone after it was connected, LMCache still serves from L1, and
    every store to Redis fails (``l2_store_submitted_objects`` grows, ``l2_store_completed_objects`` not);
    verify says so, with the address that does not answer."""
    assert stack.lmcache is not None
    os.kill(redis.pid, signal.SIGTERM)
    deadline = time.monotonic() + 30
    while _port_open(redis.port) and time.monotonic() < deadline:
        time.sleep(0.2)  # waiting for our own redis-server to exit
    before = metric_values(stack.lmcache.metrics_url)
    result = run_verify(stack.target().profile, timeout=120, claude_replay=False)
    after = metric_values(stack.lmcache.metrics_url)
    submitted = metric_sum(after, STORE_SUBMITTED) - metric_sum(before, STORE_SUBMITTED)
    completed = metric_sum(after, STORE_COMPLETED) - metric_sum(before, STORE_COMPLETED)
    assert submitted > 0, (submitted, completed)  # LMCache's own page, read here
    assert completed == 0, (submitted, completed)
    named = [p for p in result.tier_problems if "L2 stored 0 of" in p]
    assert named, result.describe()
    assert f"nothing answers at Redis (resp) 127.0.0.1:{redis.port}" in named[0]
    assert "without that --l2-adapter" in named[0]
    said = stack.doctor()  # the same trouble, at rest, with the store counts since LMCache started
    assert len(said) == 1, said
    assert f"LMCache's Redis L2 adapter (resp): nothing answers at 127.0.0.1:{redis.port}" in said[0]
    assert f"redis-server --port {redis.port}" in said[0]
    now = metric_values(stack.lmcache.metrics_url)  # no request since: the totals doctor read
    total = (int(metric_sum(now, STORE_COMPLETED)), int(metric_sum(now, STORE_SUBMITTED)))
    assert f"LMCache's L2 stored {total[0]} of {total[1]} chunks since it started" in said[0]


def test_a_prompt_that_differs_near_token_1000_chunk_128(stack: Stack, stored: dict[str, Any]) -> None:
    stack.use(128, ())
    _boundary_case(stack, "boundary-128")


def _small_l1(stack: Stack, stored: dict[str, Any]) -> None:
    """LMCache with ``SMALL_L1_GB`` and a disk L2 of its own (started once for the two tests below)."""
    adapters = ({"type": "fs", "base_path": str(stored["disk"].with_name("lmcache-disk-small-l1"))},)
    if stack.settings != (256, adapters, SMALL_L1_GB):
        stack.use(256, adapters, l1_size_gb=SMALL_L1_GB)


def test_after_l1_evicts_a_prompt_the_repeat_says_disk(stack: Stack, stored: dict[str, Any]) -> None:
    """Real eviction, no restart: prompt A fills half of a small L1, prompt B pushes A's first chunks out
    (``l1_evicted_chunks`` grows, LMCache's own page), and A's repeat reads them from the fs adapter.
    Measured on 0.5.6 with 0.0015 GB: B evicted 4 of A's 6 chunks; A's repeat: L1 512, L2 1024, 1 fs load."""
    _small_l1(stack, stored)
    assert stack.lmcache is not None
    a = stack.target().body(make_prefix("evict-a", 60), "Which line names a fox?")
    b = stack.target().body(make_prefix("evict-b", 60), "Which line names a fox?")
    first = _counted(stack, a)
    assert first.lmcache[HIT] == 0
    before = metric_values(stack.lmcache.metrics_url)
    _counted(stack, b)
    deadline = time.monotonic() + 10
    while metric_sum(metric_values(stack.lmcache.metrics_url), EVICTED) == metric_sum(before, EVICTED):
        assert time.monotonic() < deadline, "LMCache's L1 evicted nothing after prompt B"
        time.sleep(0.5)  # LMCache evicts in its own loop, shortly after the store
    repeat = _counted(stack, a)
    tiers = _assert_own_counters(repeat)
    assert tiers["lmcache_l2"] > 0, tiers
    assert tiers["lmcache_l1"] + tiers["lmcache_l2"] == repeat.lmcache[HIT] > 1000, tiers
    assert set(tiers["lmcache_l2_adapters"]) == {"fs"}
    assert repeat.measured.tiers_text is not None
    loads = int(repeat.loads["fs"])
    assert f"LMCache L2 {tiers['lmcache_l2']} [disk (fs) {loads} load" in repeat.measured.tiers_text
    assert not [p for p in repeat.measured.tier_problems if "too small" in p], repeat.measured.tier_problems
    assert stack.doctor() == []  # eviction into a working L2 is LMCache at work, not a trouble


def test_an_l1_too_small_for_the_prompt_is_named(stack: Stack, stored: dict[str, Any]) -> None:
    """Measured on 0.5.6 with ``--l1-size-gb 0.001`` (~1 MB; verify's prompt needs ~2.5 MB) and with
    0.0015: LMCache cannot allocate most chunks (``l1_allocation_failure``), the warm request is PARTIAL."""
    _small_l1(stack, stored)
    assert stack.lmcache is not None
    before = metric_values(stack.lmcache.metrics_url)
    result = run_verify(stack.target().profile, timeout=120, claude_replay=False)
    after = metric_values(stack.lmcache.metrics_url)
    failed = metric_sum(after, ALLOC_FAILED) - metric_sum(before, ALLOC_FAILED)
    assert failed > 0  # LMCache's own page, read here
    named = [p for p in result.tier_problems if "is too small for this prompt" in p]
    assert named, result.describe()
    assert f"LMCache's L1 ({SMALL_L1_GB:g} GB)" in named[0]
    assert "restart `lmcache server` with a larger --l1-size-gb" in named[0]
    said = [line for line in stack.doctor() if "is too small for the prompts it was given" in line]
    assert len(said) == 1, said  # doctor, at rest: the failures since LMCache started, read here too
    assert f"since it started {int(metric_sum(after, ALLOC_FAILED))} could not be allocated" in said[0]
    assert "restart `lmcache server` with a larger --l1-size-gb" in said[0]
    if result.verdict != "HIT":
        assert result.diagnosis is not None
        assert "is too small for this prompt" in result.diagnosis


def test_an_lmcache_server_that_is_gone_is_named(stack: Stack, stored: dict[str, Any]) -> None:
    """Measured on 0.5.6: with its LMCache server gone, vLLM either answers late, computing everything (a
    cold request waited ~17 s, then MISS), or not at all within 120 s; either way verify names the LMCache
    server vLLM's connector expects."""
    assert stack.lmcache is not None
    url = stack.lmcache.metrics_url
    stack.stop_lmcache()  # vLLM stays, its LMCache server is gone
    with pytest.raises(httpx.HTTPError):
        httpx.get(url, timeout=5)  # nothing answers there now, read here
    result = run_verify(stack.target().profile, timeout=45, claude_replay=False)
    assert result.verdict in ("MISS", "ERROR"), result.describe()
    said = f"{result.message} {result.diagnosis}"
    assert "LMCache is connected to the server but its own page" in said, result.describe()
    assert f"start `lmcache server --port {stack.port} --http-port PORT`" in said
    told = stack.doctor()
    assert len(told) == 1, told
    assert "LMCache is connected to the server but its own page" in told[0]
    assert f"start `lmcache server --port {stack.port} --http-port PORT`" in told[0]
