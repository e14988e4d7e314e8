"""Every cache number a server gives, read from its answers, its ``/metrics`` and its errors.

Servers disagree on where they report prompt-cache reuse (llama.cpp ``timings``, OpenAI
``prompt_tokens_details``, Anthropic ``cache_read_input_tokens``, Ollama ``prompt_eval_*``, Prometheus
counters), and some omit a field when it is zero. Each source becomes a ``Reading`` that keeps its
name, so the verdict can say exactly which number decided it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

#: most trusted first: a per-request number from the server beats a shared counter or a log line
SOURCE_PRIORITY = (
    "timings.cache_n",
    "usage.prompt_tokens_details.cached_tokens",
    "usage.cache_read_input_tokens",
    "usage.input_tokens_details.cached_tokens",
    "prompt_eval_cached_count",
    "metrics llamacpp:prompt_tokens_cached_total",
    "metrics vllm:prefix_cache_hits",
    "log",
    "prompt_eval_count drop",
)

CACHE_METRICS = {
    # counter of cached tokens -> counter of tokens processed (to get the prompt size)
    "llamacpp:prompt_tokens_cached_total": "llamacpp:prompt_tokens_total",
    "vllm:prefix_cache_hits_total": "vllm:prefix_cache_queries_total",
    "vllm:prefix_cache_hits": "vllm:prefix_cache_queries",
    "vllm:gpu_prefix_cache_hits_total": "vllm:gpu_prefix_cache_queries_total",
}


@dataclass(frozen=True)
class Reading:
    """One source's view of one request: ``cached`` tokens reused out of ``prompt`` tokens in total."""

    source: str
    cached: int | None
    prompt: int | None

    def describe(self) -> str:
        if self.cached is None:
            return f"{self.source}: prompt {self.prompt} tokens, no cache count"
        if self.prompt:
            return f"{self.source} = {self.cached} of {self.prompt} prompt tokens"
        return f"{self.source} = {self.cached}"


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def readings_from_payload(payload: Mapping[str, Any]) -> list[Reading]:
    """Cache numbers in one JSON object (a full answer or one stream event), whatever the API."""
    found: list[Reading] = []
    obj: Mapping[str, Any] = payload
    # Anthropic stream: message_start carries {"message": {"usage": ...}}; Responses: {"response": {...}}
    for wrapper in ("message", "response"):
        inner = payload.get(wrapper)
        if isinstance(inner, Mapping) and ("usage" in inner or "timings" in inner):
            obj = inner
    timings = obj.get("timings")
    if isinstance(timings, Mapping):
        cache_n, prompt_n = _int(timings.get("cache_n")), _int(timings.get("prompt_n"))
        if cache_n is not None:
            found.append(Reading("timings.cache_n", cache_n, cache_n + (prompt_n or 0)))
    usage = obj.get("usage")
    if isinstance(usage, Mapping):
        found.extend(_usage_readings(usage))
    if "prompt_eval_count" in obj or "prompt_eval_cached_count" in obj:
        evaluated = _int(obj.get("prompt_eval_count"))
        cached = _int(obj.get("prompt_eval_cached_count"))
        if cached is not None:
            found.append(Reading("prompt_eval_cached_count", cached, evaluated))
        else:
            found.append(Reading("prompt_eval_count", None, evaluated))
    return found


def _usage_readings(usage: Mapping[str, Any]) -> list[Reading]:
    found: list[Reading] = []
    details = usage.get("prompt_tokens_details")
    if "prompt_tokens" in usage:
        prompt = _int(usage.get("prompt_tokens"))
        cached = _int(details.get("cached_tokens")) if isinstance(details, Mapping) else None
        name = "usage.prompt_tokens_details.cached_tokens" if cached is not None else "usage.prompt_tokens"
        found.append(Reading(name, cached, prompt))
    if "input_tokens" in usage or "cache_read_input_tokens" in usage:
        input_details = usage.get("input_tokens_details")
        if (
            isinstance(input_details, Mapping)
            or "total_tokens" in usage
            and "cache_read_input_tokens" not in usage
        ):
            # Responses API: input_tokens already includes the cached ones
            cached = _int(input_details.get("cached_tokens")) if isinstance(input_details, Mapping) else None
            name = "usage.input_tokens_details.cached_tokens" if cached is not None else "usage.input_tokens"
            found.append(Reading(name, cached, _int(usage.get("input_tokens"))))
        else:
            # Anthropic: input_tokens are the uncached ones; the prompt is their sum
            new = _int(usage.get("input_tokens")) or 0
            read = _int(usage.get("cache_read_input_tokens"))
            created = _int(usage.get("cache_creation_input_tokens")) or 0
            if read is not None:
                found.append(Reading("usage.cache_read_input_tokens", read, new + read + created))
            elif "input_tokens" in usage:
                found.append(Reading("usage.input_tokens", None, new + created))
    return found


def merge_stream_readings(events: Iterable[Mapping[str, Any]]) -> list[Reading]:
    """Fold the readings of a whole stream: the last value per source wins, except that a zero
    ``usage.cache_read_input_tokens`` in a later Anthropic ``message_delta`` never hides the start's."""
    latest: dict[str, Reading] = {}
    for event in events:
        for reading in readings_from_payload(event):
            old = latest.get(reading.source)
            if old is not None and reading.source == "usage.cache_read_input_tokens" and not reading.prompt:
                continue
            latest[reading.source] = reading
    return order_readings(latest.values())


def order_readings(readings: Iterable[Reading]) -> list[Reading]:
    def rank(r: Reading) -> int:
        for i, name in enumerate(SOURCE_PRIORITY):
            if r.source.startswith(name):
                return i
        return len(SOURCE_PRIORITY)

    return sorted(readings, key=rank)


def best_reading(readings: Iterable[Reading]) -> Reading | None:
    """The most trusted reading that actually counts cached tokens."""
    for reading in order_readings(readings):
        if reading.cached is not None:
            return reading
    return None


_METRIC_LINE = re.compile(r"^([A-Za-z_:][A-Za-z0-9_:]*)(\{[^}]*\})?\s+([-+0-9.eEinfNa]+)")


def parse_metrics(text: str) -> dict[str, float]:
    """Prometheus text exposition → name → value (labelled series of one name are summed)."""
    values: dict[str, float] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        match = _METRIC_LINE.match(line.strip())
        if not match:
            continue
        try:
            value = float(match.group(3))
        except ValueError:
            continue
        values[match.group(1)] = values.get(match.group(1), 0.0) + value
    return values


def metrics_reading(before: Mapping[str, float], after: Mapping[str, float]) -> Reading | None:
    """The cached-token delta between two scrapes, when the server exposes a cache counter."""
    for cached_name, total_name in CACHE_METRICS.items():
        if cached_name in before and cached_name in after:
            cached = int(after[cached_name] - before[cached_name])
            total_delta = int(after.get(total_name, 0.0) - before.get(total_name, 0.0))
            label = cached_name.removesuffix("_total")
            # llama.cpp's prompt_tokens_total excludes cached tokens; vLLM's queries count every one
            prompt = cached + total_delta if cached_name.startswith("llamacpp:") else total_delta
            return Reading(f"metrics {label}", cached, prompt or None)
    return None


def error_message(status: int, body: bytes, content_type: str | None) -> str:
    """The server's own words for a failed request, whatever shape it used."""
    text = body.decode("utf-8", errors="replace").strip()
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, Mapping):
        err = data.get("error")
        if isinstance(err, Mapping) and isinstance(err.get("message"), str):
            return err["message"]
        for key in ("error", "message", "detail"):
            if isinstance(data.get(key), str):
                return str(data[key])
        if isinstance(data.get("detail"), list):
            return json.dumps(data["detail"])[:300]
    if "html" in (content_type or "").lower() or text.lstrip().lower().startswith(("<!doctype", "<html")):
        title = re.search(r"<title>(.*?)</title>", text, re.I | re.S)
        shown = f" ({title.group(1).strip()[:120]})" if title else ""
        return f"the server answered with an HTML page{shown}, not an API response — is this the API's URL?"
    return text[:300] if text else f"HTTP {status} with an empty body"


def context_limit(body: bytes) -> tuple[int, int] | None:
    """``(prompt tokens, context size)`` from a llama.cpp 'exceeds the available context size' error."""
    try:
        data = json.loads(body)
    except ValueError:
        return None
    err = data.get("error") if isinstance(data, Mapping) else None
    if isinstance(err, Mapping):
        n_prompt, n_ctx = _int(err.get("n_prompt_tokens")), _int(err.get("n_ctx"))
        if n_prompt and n_ctx:
            return n_prompt, n_ctx
    return None
