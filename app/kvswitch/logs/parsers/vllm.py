"""vLLM: periodic engine stats (prefix-cache hit rates) and request lines.

Measured on vLLM 0.32.0 (``tests/fixtures/vllm-0.32.0``): at default verbosity vLLM prints no
per-request cache line. Every ``VLLM_LOG_STATS_INTERVAL`` (10 s) after activity -- an idle engine logs it
at DEBUG only -- the API server prints ``Engine 000: Avg prompt throughput: ... Prefix cache hit rate:
48.6%`` (``External prefix cache hit rate`` too with a KV connector such as LMCache's), and uvicorn one
access line per HTTP request (``INFO:     127.0.0.1:P - "POST /v1/messages HTTP/1.1" 200 OK``). The
rates cover vLLM's most recent 1000 requests (``CachingMetrics``), not the server's life as read from the
source before, and not the request that just ran: they colour the line and summarise a log, but never
become per-request events. Per-request numbers come from ``/metrics`` deltas (``servers.vllm``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from kvswitch.logs.model import LineKind
from kvswitch.logs.parsers.base import Parsed, bounded, status_kind

SERVER = "vllm"
ANCHORS: tuple[str, ...] = ()
#: text only the general path understands: the engine stats' hit-rate line
GENERAL_ONLY = (rb"Prefix cache hit rate",)

_LEVEL = re.compile(r"\b(INFO|WARNING|ERROR|CRITICAL|DEBUG) \d\d-\d\d \d\d:\d\d:\d\d\b")
_RATE = re.compile(
    bounded(r"(External prefix cache hit rate|Prefix cache hit rate): (?:GPU: )?(\d+(?:\.\d+)?)%"
    r"(?:, CPU: (\d+(?:\.\d+)?)%)?")
)
_STATS = re.compile(r"Avg prompt throughput: [\d.]+ tokens/s")
_REQUEST = re.compile(r"\"(GET|POST|PUT|DELETE) (\S+) HTTP/[\d.]+\" (\d{3})|\b(?:Received|Added) request \S+")


def _rate_kind(percent: float) -> LineKind:
    if percent >= 90.0:
        return LineKind.HIT
    if percent >= 10.0:
        return LineKind.PARTIAL
    return LineKind.MISS


def parse(text: str) -> Parsed | None:
    parsed = _level_only(text)
    if "rate:" not in text and "request" not in text and "HTTP/" not in text and "throughput" not in text:
        return parsed
    parsed = parsed or Parsed()
    rates = list(_RATE.finditer(text))
    for m in rates:
        parsed.spans.append((*m.span(), _rate_kind(float(m.group(2)))))
    stats = _STATS.search(text)
    if stats:
        parsed.spans.append((*stats.span(), LineKind.TIMING))
    if rates or stats:
        parsed.raise_kind(LineKind.TIMING)
    elif request := _REQUEST.search(text):
        parsed.mark(request, status_kind(int(request.group(3)) if request.group(3) else 200))
    return parsed if parsed.spans else None


def _level_only(text: str) -> Parsed | None:
    m = _LEVEL.search(text[:200])
    if not m or m.group(1) in ("INFO", "DEBUG"):
        return None
    parsed = Parsed()
    parsed.mark(m, LineKind.WARNING if m.group(1) == "WARNING" else LineKind.ERROR, 1)
    return parsed


_ENGINE = re.compile(
    r"Avg prompt throughput: ([\d.]+) tokens/s, Avg generation throughput: ([\d.]+) tokens/s, "
    r"Running: (\d+) reqs, Waiting: (\d+) reqs.*?KV cache usage: ([\d.]+)%"
    r"(?:, Prefix cache hit rate: ([\d.]+)%)?.*?(?:External prefix cache hit rate: ([\d.]+)%)?$"
)


@dataclass(frozen=True)
class EngineStats:
    """One periodic engine line: throughputs over the interval, queue, KV use, and the hit rates over
    vLLM's most recent requests (``None`` when the line has none: no request queried the cache yet)."""

    prompt_tps: float
    generation_tps: float
    running: int
    waiting: int
    kv_usage: float
    prefix_hit_rate: float | None
    external_hit_rate: float | None


def engine_stats(text: str) -> EngineStats | None:
    """The engine line's numbers, or ``None`` for any other line."""
    if "Avg prompt throughput" not in text:
        return None
    m = _ENGINE.search(text.rstrip())
    if not m:
        return None
    rate = float(m.group(6)) if m.group(6) else None
    external = float(m.group(7)) if m.group(7) else None
    return EngineStats(float(m.group(1)), float(m.group(2)), int(m.group(3)), int(m.group(4)),
                       float(m.group(5)), rate, external)


def periodic_summary(lines: Iterable[str]) -> str | None:
    """What a log without per-request lines still says: its engine lines, summarised in one sentence."""
    stats = [found for line in lines if (found := engine_stats(line)) is not None]
    if not stats:
        return None
    busy = [s for s in stats if s.prompt_tps > 0]
    last_rate = next((s.prefix_hit_rate for s in reversed(stats) if s.prefix_hit_rate is not None), None)
    last_external = next((s.external_hit_rate for s in reversed(stats) if s.external_hit_rate is not None),
                         None)
    text = (f"vLLM prints no per-request cache line at default verbosity; {len(stats)} engine stats lines "
            f"({len(busy)} with prompt processing)")
    if last_rate is not None:
        text += f", last prefix cache hit rate {last_rate:.1f}% (over its most recent requests)"
    if last_external is not None:
        text += f", external (LMCache) {last_external:.1f}%"
    return text + ". Per-request numbers: kvswitch verify, or vLLM's /metrics."
