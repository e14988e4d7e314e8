"""vLLM: periodic engine stats (cumulative prefix-cache hit rates) and request lines.

The hit rates are cumulative over the server's life ("This cannot be reset"), so they colour the line
but never become per-request events: a rate says nothing about the request that just ran.
"""

from __future__ import annotations

import re

from kvswitch.logs.model import LineKind
from kvswitch.logs.parsers.base import Parsed, bounded, status_kind

SERVER = "vllm"
ANCHORS: tuple[str, ...] = ()
#: text only the general path understands: the engine stats' hit-rate line
GENERAL_ONLY = (rb"Prefix cache hit rate",)

_LEVEL = re.compile(r"\b(INFO|WARNING|ERROR|CRITICAL|DEBUG) \d\d-\d\d \d\d:\d\d:\d\d\b")
_RATE = re.compile(
    bounded(
        r"(External prefix cache hit rate|Prefix cache hit rate): (?:GPU: )?(\d+(?:\.\d+)?)%"
        r"(?:, CPU: (\d+(?:\.\d+)?)%)?"
    )
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
