"""vLLM, optionally with LMCache (whose lines share vLLM's log)."""

from __future__ import annotations

from typing import Any

from kvswitch.core.models import ProfileKind
from kvswitch.servers.base import (
    Advice,
    CacheCounter,
    Get,
    Metrics,
    PortFacts,
    PortSignature,
    ProcessSignature,
    Server,
    model_ids,
    positive_int,
)


def _version_shape(status: int, payload: Any) -> bool:
    return status == 200 and isinstance(payload, dict) and isinstance(payload.get("version"), str)


def _version_facts(get: Get, payload: Any) -> PortFacts:
    _, models = get("/v1/models")
    context = None
    if isinstance(models, dict) and isinstance(models.get("data"), list) and models["data"]:
        first = models["data"][0]
        context = positive_int(first.get("max_model_len")) if isinstance(first, dict) else None
    return PortFacts(str(payload["version"]), model_ids(models), context)


SERVER = Server(
    kind=ProfileKind.VLLM,
    label="vLLM",
    short_label="vLLM",
    badge="vL",
    base_url="http://127.0.0.1:8000",
    description="vLLM (optionally with LMCache).",
    local=True,
    aliases=("lmcache",),
    log_formats=("vllm", "lmcache"),
    process=ProcessSignature(
        programs=("vllm",),
        subcommand="serve",
        python_module_prefixes=("vllm.entrypoints",),
        python_serve_modules=("vllm",),
        model_flags=(("--served-model-name",), ("--model",)),
        positional_model=True,
        context_flags=("--max-model-len",),
        parallel_flags=("--max-num-seqs",),
    ),
    port_answer=PortSignature("/version", _version_shape, _version_facts),
    owned_by=("vllm",),
    metrics=Metrics(
        markers=("vllm:prefix_cache",),
        counters=(
            CacheCounter("vllm:prefix_cache_hits_total", "vllm:prefix_cache_queries_total", 70),
            CacheCounter("vllm:prefix_cache_hits", "vllm:prefix_cache_queries", 70),
            CacheCounter("vllm:gpu_prefix_cache_hits_total", "vllm:gpu_prefix_cache_queries_total", 95),
        ),
    ),
    advice=Advice(
        miss=(
            "vLLM did not reuse the prefix: check that prefix caching is on (no --no-enable-prefix-caching)."
        ),
        partial="vLLM reuses whole blocks only; a low share means the cache was evicted or blocks are large.",
        unknown="start vLLM with --enable-prompt-tokens-details, or expose /metrics, to get cache numbers.",
    ),
)
