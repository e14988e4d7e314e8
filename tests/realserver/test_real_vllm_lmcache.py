"""vLLM 0.32.0 with LMCache 0.5.6 in multi-process mode (``lmcache server`` + ``LMCacheMPConnector``).

vLLM runs with ``--no-enable-prefix-caching``, so a repeated prompt can only be served by LMCache; after
a vLLM restart (its own memory gone, LMCache's store kept) the repeat must be reported as served by
LMCache, with the numbers LMCache's own ``/metrics`` and vLLM's ``vllm:external_prefix_cache_*`` give.
This vLLM is started without the tool-choice flags, so it also shows ``kvswitch test`` naming them. The
same servers behind a real ``kvswitch gateway run`` show the gateway's record of each request's prompt by
tier (issue 37).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from kvswitch.cli import main
from kvswitch.core.gateway_config import ensure_token, usage_db
from kvswitch.core.models import ModelMap, Profile, ProfileKind
from kvswitch.core.paths import AppPaths
from kvswitch.usage.queries import query
from kvswitch.usage.schema import UsageRow
from kvswitch.verify.api_detect import OPENAI_CHAT, ServerInfo
from kvswitch.verify.connection import check_connection
from kvswitch.verify.probe import Guard
from kvswitch.verify.prompts import SUFFIX_COLD, make_prefix
from kvswitch.verify.target import Target, measure
from support.gateway import gateway_process
from support.net import free_port
from support.vllm import (
    BLOCK_SIZE,
    RestartableVllm,
    RunningLmcache,
    lmcache_server,
    metric_sum,
    metric_values,
)

#: a vLLM start takes 1-3 min on 2 busy cores (LMCache adds its own start), more than the default timeout
pytestmark = [pytest.mark.real_server, pytest.mark.timeout(1500)]

LM_HITS, LM_ASKED = "lmcache_mp_lookup_hit_tokens_total", "lmcache_mp_lookup_requested_tokens_total"
EXT_HITS = "vllm:external_prefix_cache_hits_total"


@pytest.fixture(scope="module")
def lmcache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningLmcache]:
    with lmcache_server(tmp_path_factory.mktemp("lmcache")) as server:
        yield server


@pytest.fixture(scope="module")
def backed(tmp_path_factory: pytest.TempPathFactory, lmcache: RunningLmcache) -> Iterator[RestartableVllm]:
    handle = RestartableVllm(tmp_path_factory.mktemp("vllm-lmcache"), lmcache=lmcache, tool_choice=False)
    try:
        handle.start()
        yield handle
    finally:
        handle.stop()


def _target(handle: RestartableVllm) -> Target:
    assert handle.server is not None
    url = handle.server.url
    profile = Profile(name="lm", kind=ProfileKind.VLLM, base_url=url, model="tiny",
                      models=ModelMap(small_fast="tiny"), targets=["claude"])
    return Target(profile, ServerInfo(server="vllm", metrics_url=f"{url}/metrics"), OPENAI_CHAT, "tiny")


def test_connection_test_names_the_tool_choice_flags(backed: RestartableVllm) -> None:
    report = check_connection(_target(backed).profile, timeout=120)
    assert not report.ok
    assert report.outcome == "server-setup", report.lines()
    assert report.status == 400
    assert '"auto" tool choice requires' in report.server_message  # vLLM's own words
    assert "--enable-auto-tool-choice" in report.fix
    assert "--tool-call-parser" in report.fix


def test_after_a_vllm_restart_lmcache_serves_the_repeat(
    backed: RestartableVllm, lmcache: RunningLmcache
) -> None:
    body = _target(backed).body(make_prefix("lmcache-restart", 40), SUFFIX_COLD)
    first = measure(Guard(300), _target(backed), body)
    assert first.served_by is not None
    assert "neither" in first.served_by, first.served_by  # a new prompt: nothing held it yet

    backed.restart()  # vLLM's memory is gone; LMCache's server keeps its store
    target = _target(backed)
    vllm_metrics = target.server.metrics_url or ""
    lm_before, vllm_before = metric_values(lmcache.metrics_url), metric_values(vllm_metrics)
    again = measure(Guard(300), target, body)
    lm_after, vllm_after = metric_values(lmcache.metrics_url), metric_values(vllm_metrics)
    lm_hits = metric_sum(lm_after, LM_HITS) - metric_sum(lm_before, LM_HITS)
    lm_asked = metric_sum(lm_after, LM_ASKED) - metric_sum(lm_before, LM_ASKED)
    external = metric_sum(vllm_after, EXT_HITS) - metric_sum(vllm_before, EXT_HITS)
    assert lm_hits > 1000, (lm_hits, lm_asked)
    assert again.served_by is not None
    assert again.served_by.startswith("served by LMCache"), again.served_by
    by_source = {r.source: r for r in again.readings}
    # verify's numbers are LMCache's own and vLLM's external counter, as scraped here
    assert by_source["LMCache lmcache_mp_lookup_hit_tokens"].cached == lm_hits
    assert by_source["LMCache lmcache_mp_lookup_hit_tokens"].prompt == lm_asked
    assert by_source["metrics vllm:external_prefix_cache_hits"].cached == external
    assert by_source["metrics vllm:prefix_cache_hits"].cached == 0  # vLLM's own cache is off

    changed = measure(Guard(300), target, target.body(make_prefix("zz-other-first-block", 40), SUFFIX_COLD))
    assert changed.served_by is not None
    assert "neither" in changed.served_by, changed.served_by


def _ask_gateway(port: int, token: str, body: dict[str, object]) -> dict[str, object]:
    answer = httpx.post(f"http://127.0.0.1:{port}/p/lm/v1/chat/completions", json=body,
                        headers={"authorization": f"Bearer {token}"}, timeout=300)
    assert answer.status_code == 200, answer.text
    return answer.json()


def _chat(prefix: str, **extra: object) -> dict[str, object]:
    return {"model": "tiny", "max_tokens": 4,
            "messages": [{"role": "user", "content": f"{prefix}\n{SUFFIX_COLD}"}], **extra}


def _rows(paths: AppPaths, count: int) -> list[UsageRow]:
    """The gateway's rows once there are ``count`` (a row is stored once the tiers' counters are read)."""
    deadline = time.monotonic() + 20
    while True:
        rows = query(usage_db(paths))
        if len(rows) >= count or time.monotonic() > deadline:
            return rows
        time.sleep(0.1)  # the gateway is another process


async def _together(port: int, token: str, bodies: list[dict[str, object]]) -> list[tuple[float, float]]:
    """Send ``bodies`` through the gateway at the same time; each one's (start, end) on this clock."""
    async with httpx.AsyncClient(timeout=300) as client:
        async def one(body: dict[str, object]) -> tuple[float, float]:
            start = time.monotonic()
            answer = await client.post(f"http://127.0.0.1:{port}/p/lm/v1/chat/completions", json=body,
                                       headers={"authorization": f"Bearer {token}"})
            assert answer.status_code == 200, answer.text
            return start, time.monotonic()

        return list(await asyncio.gather(*(one(body) for body in bodies)))


def _delta(after: dict[str, float], before: dict[str, float], name: str) -> int:
    return int(metric_sum(after, name) - metric_sum(before, name))


def test_the_gateway_records_each_requests_prompt_by_tier(
    backed: RestartableVllm, lmcache: RunningLmcache, fake_home: Path, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Through a real ``kvswitch gateway run``: a repeat's row carries the split LMCache's and vLLM's own
    counters give (read here, around the request, one request at a time), the CLI shows it, two requests
    in flight together get no split and say why, and requests back to back each get their own."""
    assert backed.server is not None
    paths = AppPaths.default()
    assert main(["profile", "add", "lm", "--kind", "vllm", "--base-url", backed.server.url, "--model", "tiny",
                 "--target", "claude"]) == 0
    token = ensure_token(paths)
    port = free_port()
    body = _chat(make_prefix("gateway-tiers", 40))
    with gateway_process(fake_home, port, tmp_path / "gateway.log"):
        _ask_gateway(port, token, body)  # new to LMCache; the gateway finds LMCache's page meanwhile
        _rows(paths, 1)
        lm_before, vllm_before = metric_values(lmcache.metrics_url), metric_values(backed.server.metrics_url)
        answer = _ask_gateway(port, token, body)
        rows = _rows(paths, 2)
        lm_after, vllm_after = metric_values(lmcache.metrics_url), metric_values(backed.server.metrics_url)
        repeat = rows[1]
        assert repeat.tiers is not None, repeat.notes
        tiers = json.loads(repeat.tiers)
        prompt = _delta(vllm_after, vllm_before, "vllm:prompt_tokens_total")
        local = _delta(vllm_after, vllm_before, "vllm:prefix_cache_hits_total")
        external = _delta(vllm_after, vllm_before, EXT_HITS)
        assert answer["usage"]["prompt_tokens"] == prompt == repeat.input_tokens  # type: ignore[index]
        assert tiers["lmcache_l1"] == _delta(lm_after, lm_before, "lmcache_mp_lookup_hit_l1_tokens_total")
        assert tiers["lmcache_l2"] == _delta(lm_after, lm_before, "lmcache_mp_lookup_hit_l2_tokens_total")
        assert tiers["lmcache_l1"] + tiers["lmcache_l2"] == _delta(lm_after, lm_before, LM_HITS)
        assert tiers["vllm_prefix_cache"] == local == 0  # vLLM's own cache is off in this module
        assert tiers["computed"] == prompt - local - external
        assert tiers["lmcache_l1"] > 1000, tiers  # the repeat came from LMCache's CPU tier
        assert tiers["chunk_size"] == BLOCK_SIZE * 4  # what lmcache_server started LMCache with

        # two requests at once, each with a long prompt (seconds of prefill on CPU): both in flight together
        spans = asyncio.run(_together(port, token, [_chat(make_prefix(f"gateway-tiers-{n}", 300))
                                                    for n in ("a", "b")]))
        (start_a, end_a), (start_b, end_b) = spans
        assert start_a < end_b, spans  # they overlapped, as the client saw them
        assert start_b < end_a, spans
        together = _rows(paths, 4)[2:]
        assert len(together) == 2
        assert all(r.tiers is None for r in together), [r.tiers for r in together]
        assert all("another request to the same server ran at the same time" in (r.notes or "")
                   for r in together), [r.notes for r in together]

        # back to back (as a client sends its next turn the moment an answer ends): each row its own split
        lm_before = metric_values(lmcache.metrics_url)
        for _ in range(2):
            _ask_gateway(port, token, body)
        pair = _rows(paths, 6)[4:]
        lm_after = metric_values(lmcache.metrics_url)
        assert all(r.tiers is not None for r in pair), [r.notes for r in pair]
        split = [json.loads(r.tiers or "") for r in pair]
        assert sum(t["lmcache_l1"] for t in split) == _delta(lm_after, lm_before,
                                                             "lmcache_mp_lookup_hit_l1_tokens_total")
        assert [t["lmcache_l1"] for t in split] == [tiers["lmcache_l1"]] * 2  # the same repeat, twice

    capsys.readouterr()
    assert main(["usage", "--requests"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert (f"tiers vLLM 0 · L1 {tiers['lmcache_l1']} · L2 {tiers['lmcache_l2']} · computed "
            f"{tiers['computed']}") in lines[1], lines
    assert main(["usage", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed[1]["tiers"] == tiers
    assert listed[0]["tiers"] is None  # the gateway was still finding LMCache's page (not held for it)
