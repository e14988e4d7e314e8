"""LMCache 0.5.6's own pages, as a real ``lmcache server`` gave them (tests/fixtures/lmcache-0.5.6/).

The numbers each test expects are read from the captured page by the test itself (a line of the page),
never written from what the code under test returns.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from kvswitch.core.strictparse import loads as strict_json
from kvswitch.servers import lmcache
from kvswitch.servers.vllm import LMCACHE_TIER
from kvswitch.verify.evidence import parse_metrics

PAGES = Path(__file__).resolve().parent.parent / "fixtures" / "lmcache-0.5.6"


def _page(name: str) -> str:
    return (PAGES / name).read_text(encoding="utf-8")


def _line_value(text: str, name: str, label: str = "") -> float:
    """The value of the first line of ``text`` for ``name`` (with ``label`` among its labels)."""
    for line in text.splitlines():
        if (line.startswith(name + "{") or line.startswith(name + " ")) and label in line:
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"{name} {label} not on the page")


def test_settings_are_read_from_the_real_config_pages() -> None:
    config = strict_json(_page("config.json"))
    settings = lmcache.settings_from(config, strict_json(_page("config-adapters.json")))
    assert settings.chunk_size == config["mp"]["chunk_size"] == 256
    memory = config["storage_manager"]["l1_manager_config"]["memory_config"]["size_in_bytes"]
    assert settings.l1_size_gb == memory / 2**30
    assert settings.adapters == ("fs", "resp")
    assert settings.adapter_settings[0]["base_path"].endswith("/fs")
    # credentials stay out of what is kept
    assert all("password" not in a and "username" not in a for a in settings.adapter_settings)


def test_the_tier_counters_are_on_the_real_page() -> None:
    page = _page("metrics-l1-hit.txt")
    values = parse_metrics(page)
    for name in (lmcache.HIT, lmcache.REQUESTED, lmcache.HIT_L1, lmcache.HIT_L2, LMCACHE_TIER.read_chunks):
        assert name in values, name
    # the page's own invariant: what L1 and L2 served adds up to the hit
    assert values[lmcache.HIT_L1] + values[lmcache.HIT_L2] == values[lmcache.HIT]
    assert values[lmcache.HIT_L1] == _line_value(page, lmcache.HIT_L1)


def test_labelled_counters_are_split_by_adapter() -> None:
    page = _page("metrics-l1-hit.txt")
    stored = lmcache.labelled(page, "lmcache_mp_l2_store_completed_requests_total", "l2_name")
    assert stored == {"fs": _line_value(page, "lmcache_mp_l2_store_completed_requests_total", '"fs"'),
                      "resp": _line_value(page, "lmcache_mp_l2_store_completed_requests_total", '"resp"')}


def test_a_cold_request_is_all_computed_by_the_counters() -> None:
    vb, va = _page("cold-vllm-before.txt"), _page("cold-vllm-after.txt")
    lb, la = _page("cold-lmcache-before.txt"), _page("cold-lmcache-after.txt")
    split = lmcache.tier_split(parse_metrics(vb), parse_metrics(va), parse_metrics(lb), parse_metrics(la),
                               lmcache.load_deltas(lb, la), 256)
    assert split is not None
    prompt = _line_value(va, "vllm:prompt_tokens_total") - _line_value(vb, "vllm:prompt_tokens_total")
    assert split.to_json() == {"vllm_prefix_cache": 0, "lmcache_l1": 0, "lmcache_l2": 0, "computed": prompt,
                               "lmcache_l2_adapters": {}, "chunk_size": 256}
    json.dumps(split.to_json())  # the contract is plain JSON


def test_block_size_is_vllms_own_label() -> None:
    page = _page("cold-vllm-after.txt")
    label = re.search(r'vllm:cache_config_info\{[^}]*\bblock_size="(\d+)"', page)
    assert label is not None
    assert lmcache.block_size(page) == int(label.group(1)) == 32


def test_a_chunk_size_the_block_size_does_not_divide_is_named_with_the_fix() -> None:
    found = lmcache.troubles(lmcache.Settings(chunk_size=48), 32, {}, {})
    assert len(found) == 1
    assert "chunk size 48 is not a multiple of vLLM's block size 32" in found[0]
    assert "--chunk-size 32" in found[0]
    assert lmcache.troubles(lmcache.Settings(chunk_size=256), 32, {}, {}) == []


def test_the_boundary_names_the_first_difference_and_the_chunks() -> None:
    text = lmcache.boundary(1000, 256, 768)
    assert text == ("the prompt first differs at token 1000; LMCache reuses whole chunks of 256 tokens, "
                    "so 768 were reused and 232 lost to the boundary")
    assert lmcache.boundary(1000, 128, 768) == (
        "the prompt first differs at token 1000; LMCache reuses whole chunks of 128 tokens, so at most 896 "
        "could be reused (104 lost to the boundary); LMCache's counters say 768 were reused, so 128 more "
        "were not in its tiers (evicted or never stored)")


def test_start_failures_are_named_from_the_real_logs() -> None:
    vllm_log = _page("vllm-start-chunk-48.log")
    said = re.search(r"LMCache chunk size 48 must be a multiple of 32[^'\n]*", vllm_log)
    assert said is not None  # vLLM's own words, in its captured log
    named = lmcache.start_failure(vllm_log)
    assert named is not None
    assert said.group(0) in named
    assert "--chunk-size" in named
    lm_log = _page("lmcache-start-fs-not-a-folder.log")
    assert "Application startup failed" in lm_log
    named = lmcache.start_failure(lm_log)
    assert named is not None
    assert "base_path is not a writable folder" in named
    assert "NotADirectoryError" in named
    assert lmcache.start_failure(_page("cold-vllm-after.txt")) is None


def test_the_lmcache_server_this_vllm_uses_is_found_by_its_port() -> None:
    """Two LMCache servers on one machine (the sweep's and a test's, measured): verify read the first
    one's counters until it matched the ZMQ port in vLLM's own --kv-transfer-config."""
    from kvswitch.servers.tier_sources import tier_metrics_url  # noqa: PLC0415
    from kvswitch.servers.vllm import lmcache_port  # noqa: PLC0415

    connector = {"kv_connector": "LMCacheMPConnector", "kv_role": "kv_both",
                 "kv_connector_extra_config": {"lmcache.mp.host": "tcp://127.0.0.1", "lmcache.mp.port": 6002}}
    vllm = ["/venv/bin/python", "/venv/bin/vllm", "serve", "/m", "--port", "8123",
            "--kv-transfer-config", json.dumps(connector)]
    assert lmcache_port(vllm, 8123) == 6002
    assert lmcache_port(vllm, 8000) is None  # another vLLM
    other = ["/venv/bin/python", "/venv/bin/lmcache", "server", "--port", "6001", "--http-port", "7001"]
    mine = ["/venv/bin/python", "/venv/bin/lmcache", "server", "--port", "6002", "--http-port", "7002"]
    assert tier_metrics_url(LMCACHE_TIER, "127.0.0.1", [other, mine], linked=6002) == "http://127.0.0.1:7002/metrics"
    assert tier_metrics_url(LMCACHE_TIER, "127.0.0.1", [other, mine]) == "http://127.0.0.1:7001/metrics"


def test_an_l1_too_small_for_the_prompt_is_named_from_the_real_page() -> None:
    """``--l1-size-gb 0.001`` and verify's ~5k-token prompt (measured): LMCache could not allocate chunks."""
    page = _page("metrics-l1-too-small.txt")
    failed = _line_value(page, lmcache.L1_ALLOC_FAILED)
    evicted = _line_value(page, lmcache.L1_EVICTED)
    assert failed > 0
    found = lmcache.troubles(lmcache.Settings(chunk_size=256, l1_size_gb=0.001), 32, {}, parse_metrics(page),
                             "", page)
    assert len(found) == 1
    assert f"{int(evicted)} chunks were evicted, {int(failed)} could not be allocated" in found[0]
    assert "LMCache's L1 (0.001 GB) is too small for this prompt" in found[0]
    assert "larger --l1-size-gb" in found[0]


def test_a_lookup_waiting_on_a_dead_adapter_is_named() -> None:
    """Measured on 0.5.6 with the Redis adapter's port closed at LMCache's start: its page showed
    ``lmcache_mp_active_prefetch_jobs 1.0`` for minutes and vLLM's request never ended."""
    import socket  # noqa: PLC0415

    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens there now
        probe.bind(("127.0.0.1", 0))
        dead = probe.getsockname()[1]
    settings = lmcache.Settings(chunk_size=256, adapters=("resp",),
                                adapter_settings=({"host": "127.0.0.1", "port": dead},))
    found = lmcache.stalled(settings, {lmcache.ACTIVE_PREFETCH: 1.0})
    assert found == [f"LMCache is waiting on its Redis L2 adapter (resp), and nothing answers at "
                     f"127.0.0.1:{dead} (lmcache_mp_active_prefetch_jobs 1): start that server, or restart "
                     "`lmcache server` without that --l2-adapter."]
    assert lmcache.stalled(settings, {lmcache.ACTIVE_PREFETCH: 0.0}) == []
