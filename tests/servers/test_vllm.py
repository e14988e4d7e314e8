"""vLLM (+LMCache): its /version answer, its command lines and its prefix-cache counters."""

from __future__ import annotations

from server_helpers import table_get

from kvswitch import servers
from kvswitch.core.models import ProfileKind
from kvswitch.logs.parsers import family
from kvswitch.servers import vllm
from kvswitch.verify.evidence import metrics_reading

MODELS = {"object": "list", "data": [{"id": "Qwen/Qwen3-8B", "owned_by": "vllm", "max_model_len": 32768}]}


def test_version_route_names_vllm_with_its_context() -> None:
    get = table_get({"/version": (200, {"version": "0.11.1"}), "/v1/models": (200, MODELS)})
    found = servers.identify(get)
    assert found is not None
    assert (found.server.kind, found.facts.models, found.facts.context) == (
        ProfileKind.VLLM, ("Qwen/Qwen3-8B",), 32768)


def test_command_lines() -> None:
    assert servers.process_kind(["/usr/bin/vllm", "serve", "Qwen/Qwen3-8B"]) == ProfileKind.VLLM
    assert servers.process_kind(["python3", "-m", "vllm.entrypoints.openai.api_server"]) == ProfileKind.VLLM
    assert servers.process_kind(["python3", "-m", "vllm", "serve", "x"]) == ProfileKind.VLLM
    assert servers.process_kind(["python3", "-m", "vllm", "bench"]) is None


def test_prefix_cache_counters_count_every_queried_token() -> None:
    before = {"vllm:prefix_cache_hits_total": 0.0, "vllm:prefix_cache_queries_total": 0.0}
    after = {"vllm:prefix_cache_hits_total": 1536.0, "vllm:prefix_cache_queries_total": 1601.0}
    reading = metrics_reading(before, after)
    assert reading is not None
    assert (reading.source, reading.cached, reading.prompt) == ("metrics vllm:prefix_cache_hits", 1536, 1601)


def test_lmcache_is_an_alias_with_the_same_log_formats() -> None:
    assert servers.get("lmcache") is vllm.SERVER
    assert family("lmcache") == family("vllm") == ("vllm", "lmcache")


def test_advice_for_each_outcome() -> None:
    advice = vllm.SERVER.advice
    assert advice.miss
    assert advice.partial
    assert advice.unknown
