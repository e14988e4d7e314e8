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
        if line.startswith(name + "{") or line.startswith(name + " "):
            if label in line:
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
    assert "LMCache's counters decide" in lmcache.boundary(1000, 128, 768)
