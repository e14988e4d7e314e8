"""vLLM, optionally with LMCache (whose lines share vLLM's log)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kvswitch.core.models import ProfileKind
from kvswitch.core.strictparse import loads as strict_json
from kvswitch.servers import lmcache
from kvswitch.servers.base import (
    Advice,
    CacheCounter,
    CacheTier,
    ClientNeed,
    Get,
    Metrics,
    PortFacts,
    PortSignature,
    ProcessSignature,
    Router,
    Server,
    model_ids,
    positive_int,
)
from kvswitch.servers.process_match import flag_value, program_name, script_argv


def _version_shape(status: int, payload: Any) -> bool:
    return status == 200 and isinstance(payload, dict) and isinstance(payload.get("version"), str)


def _version_facts(get: Get, payload: Any) -> PortFacts:
    _, models = get("/v1/models")
    context = None
    if isinstance(models, dict) and isinstance(models.get("data"), list) and models["data"]:
        first = models["data"][0]
        context = positive_int(first.get("max_model_len")) if isinstance(first, dict) else None
    return PortFacts(str(payload["version"]), model_ids(models), context)


#: Claude Code 2.1.332 sends every request with tools and ``tool_choice: {"type": "auto"}``; vLLM 0.32.0's
#: /v1/messages then answers ``400 "auto" tool choice requires --enable-auto-tool-choice and
#: --tool-call-parser to be set`` unless it was started with both (measured; the parser must suit the
#: model's chat template: ``hermes`` for ChatML models such as Qwen, ``llama3_json`` for Llama 3).
TOOL_CHOICE_FLAGS = "--enable-auto-tool-choice --tool-call-parser <parser>"
CLAUDE_TOOL_CHOICE = ClientNeed(
    client="claude",
    code="vllm-tool-choice",
    message=("Claude Code sends tools with tool_choice 'auto'; vLLM refuses every such request (HTTP 400) "
             f"unless it was started with {TOOL_CHOICE_FLAGS} (e.g. hermes for Qwen/ChatML models, "
             "llama3_json for Llama 3)."),
    fix=f"Restart vLLM with {TOOL_CHOICE_FLAGS} (the parser that suits the model's chat template).",
    refusal='"auto" tool choice requires',
    probe={"tools": [{"name": "kvswitch_probe", "description": "connection test",
                      "input_schema": {"type": "object", "properties": {}}}],
           "tool_choice": {"type": "auto"}},
)

#: LMCache in multi-process mode behind vLLM (``--kv-transfer-config`` naming ``LMCacheMPConnector``):
#: vLLM counts what the connector served as its *external* prefix cache, LMCache's server counts its
#: own lookups on its HTTP port (``lmcache server --http-port``; names measured on lmcache 0.5.6).
LMCACHE_TIER = CacheTier(
    name="lmcache",
    label="LMCache",
    external_hits="vllm:external_prefix_cache_hits_total",
    external_queries="vllm:external_prefix_cache_queries_total",
    server_prompt_tokens="vllm:prompt_tokens_total",
    # the MP connector adds its lookup timer to vLLM's own /metrics (lmcache 0.5.6, vLLM 0.32.0)
    metrics_marker="vllm:lmcache_mp_",
    hit_tokens="lmcache_mp_lookup_hit_tokens_total",
    requested_tokens="lmcache_mp_lookup_requested_tokens_total",
    read_chunks="lmcache_mp_l1_read_chunks_total",
    program="lmcache",
    subcommand="server",
    port_flag="--http-port",
    default_port=8080,
    linked_port=lambda argv, port: lmcache_port(argv, port),
    settings_routes=("/config", "/config/adapters"),
    settings=lambda pages: lmcache.settings_from(*pages),
    split=lambda *pages: _split(*pages),
    boundary=lmcache.boundary_of,
    stalled=lmcache.stalled,
    check=lambda page, settings, *pages: lmcache.troubles(settings, lmcache.block_size(page), *pages),
    tokenize_route="/tokenize",
)

#: ``vllm-router`` (PyPI, 0.1.17 measured) in front of several vLLM instances: ``GET /list_workers`` answers
#: ``{"urls": [...]}``; it renames its process (``vllm::router``), so its argv cannot be read. It proxies
#: ``/metrics`` and ``/version`` to one instance in turn, so the router's own page is no instance's truth.
VLLM_ROUTER = Router(label="vllm-router", route="/list_workers", field="urls",
                     ran_counter="vllm:prompt_tokens_total")

LOCAL_HITS = "vllm:prefix_cache_hits_total"
LOCAL_QUERIES = "vllm:prefix_cache_queries_total"


@dataclass(frozen=True)
class ServedBy:
    """Which cache served a request's prompt prefix, by vLLM's own counters (and LMCache's).

    ``tier`` is ``vllm`` (vLLM's own prefix cache), ``lmcache``, ``both`` or ``none``; the counts are
    the ``/metrics`` deltas around the one request.
    """

    tier: str
    local_hits: int
    external_hits: int
    queried: int
    lmcache_hits: int | None = None
    lmcache_requested: int | None = None

    def describe(self) -> str:
        where = {"vllm": "vLLM's own prefix cache", "lmcache": "LMCache",
                 "both": "vLLM's prefix cache and LMCache",
                 "none": "neither vLLM's prefix cache nor LMCache"}[self.tier]
        text = (f"served by {where}: vllm:prefix_cache_hits +{self.local_hits}, "
                f"vllm:external_prefix_cache_hits +{self.external_hits} of {self.queried} queried")
        if self.lmcache_hits is not None:
            text += (f"; LMCache {LMCACHE_TIER.hit_tokens.removesuffix('_total')} +{self.lmcache_hits} of "
                     f"{self.lmcache_requested} requested")
        return text


def _delta(before: Mapping[str, float], after: Mapping[str, float], name: str) -> int:
    return int(after.get(name, 0.0) - before.get(name, 0.0))


def served_by(before: Mapping[str, float], after: Mapping[str, float],
              tier_before: Mapping[str, float] | None = None,
              tier_after: Mapping[str, float] | None = None) -> ServedBy | None:
    """Which tier served the prefix of the one request between two scrapes of vLLM's ``/metrics``
    (and, when given, two of LMCache's); ``None`` when the page has no prefix-cache counters."""
    if LOCAL_HITS not in after or LMCACHE_TIER.external_hits not in after:
        return None
    local = _delta(before, after, LOCAL_HITS)
    external = _delta(before, after, LMCACHE_TIER.external_hits)
    queried = max(_delta(before, after, LOCAL_QUERIES), _delta(before, after, LMCACHE_TIER.external_queries))
    tier = "both" if local and external else "vllm" if local else "lmcache" if external else "none"
    hits = requested = None
    if tier_before is not None and tier_after is not None and LMCACHE_TIER.hit_tokens in tier_after:
        hits = _delta(tier_before, tier_after, LMCACHE_TIER.hit_tokens)
        requested = _delta(tier_before, tier_after, LMCACHE_TIER.requested_tokens)
    return ServedBy(tier, local, external, queried, hits, requested)

def lmcache_port(argv: Sequence[str], http_port: int) -> int | None:
    """The LMCache server port (``lmcache.mp.port`` of ``--kv-transfer-config``) of the ``vllm serve``
    listening on ``http_port``: with several LMCache servers on one machine, the one this vLLM uses."""
    argv = list(script_argv(argv))
    if program_name(argv) != "vllm" or argv[1:2] != ["serve"]:
        return None
    port = flag_value(argv, "--port") or "8000"
    config = flag_value(argv, "--kv-transfer-config")
    if port != str(http_port) or config is None:
        return None
    try:
        extra = strict_json(config).get("kv_connector_extra_config", {})
    except (ValueError, AttributeError):
        return None
    linked = extra.get("lmcache.mp.port") if isinstance(extra, dict) else None
    return positive_int(linked)


def _split(before: Mapping[str, float], after: Mapping[str, float], tier_before: Mapping[str, float] | None,
           tier_after: Mapping[str, float] | None, before_text: str | None, after_text: str | None,
           settings: lmcache.Settings | None) -> lmcache.TierSplit | None:
    """One request's prompt by tier: vLLM's own cache, LMCache L1 / L2 (per adapter), computed."""
    loads = lmcache.load_deltas(before_text, after_text)
    chunk = settings.chunk_size if settings is not None else None
    return lmcache.tier_split(before, after, tier_before, tier_after, loads, chunk)


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
        live_events=True,  # measured on 0.32.0: only a periodic engine line, no per-request one
        markers=("vllm:prefix_cache",),
        counters=(
            CacheCounter("vllm:prefix_cache_hits_total", "vllm:prefix_cache_queries_total", 70),
            CacheCounter("vllm:prefix_cache_hits", "vllm:prefix_cache_queries", 70),
            CacheCounter("vllm:gpu_prefix_cache_hits_total", "vllm:gpu_prefix_cache_queries_total", 95),
        ),
    ),
    client_needs=(CLAUDE_TOOL_CHOICE,),
    cache_tiers=(LMCACHE_TIER,),
    routers=(VLLM_ROUTER,),
    served_by=lambda *pages: served_by(*pages),
    advice=Advice(
        miss=("vLLM did not reuse the prefix: check that prefix caching is on "
              "(no --no-enable-prefix-caching)."),
        partial="vLLM reuses whole blocks only; a low share means the cache was evicted or blocks are large.",
        unknown="start vLLM with --enable-prompt-tokens-details, or expose /metrics, to get cache numbers.",
    ),
)
