"""Every cache number a server gives, read from its answers, its ``/metrics`` and its errors.

Servers disagree on where they report prompt-cache reuse, and some omit a field when it is zero;
each server module in :mod:`kvswitch.servers` declares its fields, readers and counters. Each source
becomes a ``Reading`` that keeps its name, so the verdict can say exactly which number decided it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from kvswitch import servers
from kvswitch.core.prometheus import parse_samples
from kvswitch.core.strictparse import loads as strict_json
from kvswitch.servers.answers import (
    SOURCE_PRIORITY,
    best_reading,
    merge_stream_readings,
    order_readings,
    readings_from_payload,
)
from kvswitch.servers.base import Reading, as_int

#: counter of cached tokens -> counter of tokens processed (to get the prompt size)
CACHE_METRICS: dict[str, str] = {counter.cached: counter.total for counter in servers.cache_counters()}

_int = as_int

__all__ = ["CACHE_METRICS", "SOURCE_PRIORITY", "Reading", "best_reading", "context_limit", "error_message",
           "merge_stream_readings", "metrics_reading", "order_readings", "parse_metrics",
           "readings_from_payload"]


def parse_metrics(text: str) -> dict[str, float]:
    """Prometheus text exposition → name → value (labelled series of one name are summed)."""
    return parse_samples(text)


def metrics_reading(before: Mapping[str, float], after: Mapping[str, float]) -> Reading | None:
    """The cached-token delta between two scrapes, when the server exposes a cache counter."""
    for counter in servers.cache_counters():
        if counter.cached in before and counter.cached in after:
            cached = int(after[counter.cached] - before[counter.cached])
            total_delta = int(after.get(counter.total, 0.0) - before.get(counter.total, 0.0))
            label = counter.cached.removesuffix("_total")
            prompt = cached + total_delta if counter.total_excludes_cached else total_delta
            return Reading(f"metrics {label}", cached, prompt or None)
    return None


def error_message(status: int, body: bytes, content_type: str | None) -> str:
    """The server's own words for a failed request, whatever shape it used."""
    text = body.decode("utf-8", errors="replace").strip()
    try:
        data = strict_json(text)
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
    """``(prompt tokens, context size)`` from an 'exceeds the available context size' error body."""
    try:
        data = strict_json(body)
    except ValueError:
        return None
    err = data.get("error") if isinstance(data, Mapping) else None
    if isinstance(err, Mapping):
        n_prompt, n_ctx = _int(err.get("n_prompt_tokens")), _int(err.get("n_ctx"))
        if n_prompt and n_ctx:
            return n_prompt, n_ctx
    return None
