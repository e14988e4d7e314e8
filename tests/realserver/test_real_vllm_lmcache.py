"""vLLM 0.32.0 with LMCache 0.5.6 in multi-process mode (``lmcache server`` + ``LMCacheMPConnector``).

vLLM runs with ``--no-enable-prefix-caching``, so a repeated prompt can only be served by LMCache; after
a vLLM restart (its own memory gone, LMCache's store kept) the repeat must be reported as served by
LMCache, with the numbers LMCache's own ``/metrics`` and vLLM's ``vllm:external_prefix_cache_*`` give.
This vLLM is started without the tool-choice flags, so it also shows ``kvswitch test`` naming them.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kvswitch.core.models import ModelMap, Profile, ProfileKind
from kvswitch.verify.api_detect import OPENAI_CHAT, ServerInfo
from kvswitch.verify.connection import check_connection
from kvswitch.verify.probe import Guard
from kvswitch.verify.prompts import SUFFIX_COLD, make_prefix
from kvswitch.verify.target import Target, measure
from support.vllm import RestartableVllm, RunningLmcache, lmcache_server, metric_sum, metric_values

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
