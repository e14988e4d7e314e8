"""llama.cpp's ``llama-server``: the reference local server (LM Studio and Ollama embed its engine)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvswitch.core.models import ProfileKind
from kvswitch.servers.base import (
    Advice,
    CacheCounter,
    CacheSource,
    Get,
    Metrics,
    PortFacts,
    PortSignature,
    ProcessSignature,
    PromptRendering,
    Reading,
    Server,
    as_int,
    model_ids,
    positive_int,
)
from kvswitch.servers.llama_cpp_messages import chat_body

#: llama-server's own prompt API (its answers carry ``timings`` too)
COMPLETION_API = "llamacpp-completion"
#: the server command a settings sweep starts, as the window shows it for an example
SWEEP_EXAMPLE = "llama-server -m model.gguf --port 8080 --metrics"


def _props_shape(status: int, props: Any) -> bool:
    return status == 200 and isinstance(props, dict) and (
        "default_generation_settings" in props or "total_slots" in props or "build_info" in props)


def _props_facts(get: Get, props: Any) -> PortFacts:
    settings = props.get("default_generation_settings") or {}
    context = positive_int(settings.get("n_ctx")) if isinstance(settings, dict) else None
    _, models = get("/v1/models")
    version = props.get("build_info")
    return PortFacts(str(version) if version else None, model_ids(models), context,
                     positive_int(props.get("total_slots")))


def _loading(get: Get, status: int) -> PortFacts | None:
    """A 503 on ``/props`` with ``/health`` saying 'Loading model': up, not ready yet."""
    if status != 503:
        return None
    _, health = get("/health")
    error = health.get("error") if isinstance(health, dict) else None
    if isinstance(error, dict) and "loading" in str(error.get("message", "")).lower():
        return PortFacts(loading=True)
    return None


def read_timings(obj: Mapping[str, Any]) -> list[Reading]:
    """``timings.cache_n`` (reused) and ``timings.prompt_n`` (processed) of an answer or last event."""
    timings = obj.get("timings")
    if not isinstance(timings, Mapping):
        return []
    cache_n, prompt_n = as_int(timings.get("cache_n")), as_int(timings.get("prompt_n"))
    if cache_n is None:
        return []
    return [Reading("timings.cache_n", cache_n, cache_n + (prompt_n or 0))]


SERVER = Server(
    kind=ProfileKind.LLAMA_CPP,
    label="llama.cpp (llama-server)",
    short_label="llama.cpp",
    badge="Ll",
    base_url="http://127.0.0.1:8080",
    description="llama-server; run it with --log-file to let KV Switch follow its log.",
    local=True,
    aliases=("llama-cpp", "llamacpp"),
    log_formats=("llama.cpp",),
    process=ProcessSignature(
        programs=("llama-server",),
        model_flags=(("-a", "--alias"), ("-m", "--model"), ("-hf", "--hf-repo")),
        context_flags=("-c", "--ctx-size"),
        parallel_flags=("-np", "--parallel"),
        log_file_flags=("--log-file",),
        log_file_env="LLAMA_LOG_FILE",
        private_under=(ProfileKind.OLLAMA,),
    ),
    port_answer=PortSignature("/props", _props_shape, _props_facts, _loading),
    owned_by=("llamacpp",),
    routes=((COMPLETION_API, "/completion"),),
    # its chat stream ends with timings.cache_n reliably; its Anthropic stream can drop message_start
    preferred_apis=("openai-chat",),
    fallback_apis=(COMPLETION_API,),
    answer_sources=(CacheSource("timings.cache_n", 10),),
    answer_reader=read_timings,
    rendering=PromptRendering(
        "/apply-template",
        "/tokenize",
        {"messages": "/v1/messages/count_tokens", "chat": "/v1/chat/completions/input_tokens"},
        chat_body,
    ),
    metrics=Metrics(
        markers=("llamacpp:prompt_tokens_cached",),
        counters=(CacheCounter("llamacpp:prompt_tokens_cached_total", "llamacpp:prompt_tokens_total", 95,
                               total_excludes_cached=True),),
        # b11434: both are gauges of tools/server (slots processing, tasks waiting for a slot). They let
        # the gateway take an answer's counts from these counters when the answer has none: b11434
        # sends a streamed Messages answer's message_start (the prompt's counts) with the first token's
        # chunk (server-task.cpp, to_json_anthropic) and holds that chunk back when the token is an
        # incomplete UTF-8 sequence, so that answer never carries them (measured with a bias on a lead
        # byte, tests/gateway/test_gateway_counts_fallback.py)
        in_flight=("llamacpp:requests_processing", "llamacpp:requests_deferred"),
    ),
    advice=Advice(
        miss=("llama-server did not keep the prefix: prompt caching may be off (--no-cache-prompt, or a "
              "client sending cache_prompt:false), the warm request may have gone to another slot (-np > 1), "
              "or the model's memory (SWA/hybrid/recurrent) forces full re-processing."),
        forced_reprocess=("Start llama-server with --swa-full (SWA models) or keep more context checkpoints "
                          "(--ctx-checkpoints), or use a model without SWA."),
    ),
)
