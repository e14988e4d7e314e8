"""Token counts from an answer's own numbers, validated once, and what they cost.

Every shape KV Switch reads is understood: a local server's ``timings`` (``prompt_n``, ``cache_n``,
``predicted_n``: the server's own count, preferred), the Messages API's ``usage`` (``input_tokens`` without
the cached part, ``cache_read_input_tokens``), OpenAI Chat's ``prompt_tokens_details.cached_tokens``
and Responses' ``input_tokens_details.cached_tokens``, in a whole body or in a stream's events.
``input_tokens`` here is the whole prompt (cached part included), so a hit rate is cached / input
whatever the vendor's convention.

An upstream is untrusted: it may report ``1e300`` tokens, ``2**63``, ``-5`` or ``"12"``. Each count
goes through ``sane_count`` exactly once, here: a count that is not a non-negative integer below
``MAX_TOKENS`` becomes ``None`` and its raw value is noted (``Tokens.notes``, stored in the row's
``notes`` column), so no later sum, cost or SQLite bind can overflow or go negative.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kvswitch.core.strictparse import loads as strict_json
from kvswitch.servers.answers import answer_events

#: more tokens than any model's context holds in one request (the largest are ~10M): above it, a count is
#: a broken or hostile upstream's, not a measurement
MAX_TOKENS = 10**9
#: a generation speed above this is not a measurement either
MAX_TOKENS_PER_S = 10**7
#: USD per million tokens (input, cached input, output) by model-id fragment, most specific first;
#: a local server costs nothing. Override or extend in ``prices.json`` in KV Switch's config dir:
#: ``{"model-id-fragment": [input, cached, output], ...}``.
DEFAULT_PRICES: dict[str, tuple[float, float, float]] = {
    "claude-opus-4": (15.0, 1.5, 75.0),
    "claude-sonnet-4": (3.0, 0.3, 15.0),
    "claude-haiku-4": (1.0, 0.1, 5.0),
    "claude-3-5-haiku": (0.8, 0.08, 4.0),
    "gpt-5": (1.25, 0.125, 10.0),
    "deepseek": (0.28, 0.028, 0.42),
}


@dataclass
class Tokens:
    input_tokens: int | None = None
    cached_tokens: int | None = None
    output_tokens: int | None = None
    tokens_per_s: float | None = None
    #: the counts the upstream reported that were not sane (``"output_tokens=-5 ignored"``)
    notes: list[str] = field(default_factory=list)


def sane_count(value: Any, name: str, notes: list[str]) -> int | None:
    """``value`` as a token count, or ``None`` (noted in ``notes``) when it is not one.

    JSON integers and integral floats within ``0..MAX_TOKENS`` are counts; ``None`` (absent) is just
    absent; anything else (negative, huge, fractional, a string, ``true``) is noted and dropped.
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        notes.append(f"{name}={_shown(value)} ignored (not a number)")
        return None
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        notes.append(f"{name}={_shown(value)} ignored (not a whole number)")
        return None
    if not 0 <= value <= MAX_TOKENS:
        notes.append(f"{name}={_shown(value)} ignored (outside 0..{MAX_TOKENS})")
        return None
    return int(value)


def sane_speed(value: Any, notes: list[str]) -> float | None:
    """A tokens/s figure, finite and within ``0..MAX_TOKENS_PER_S``, or ``None`` (noted)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) \
            or not 0 <= value <= MAX_TOKENS_PER_S:
        notes.append(f"tokens_per_s={_shown(value)} ignored")
        return None
    return float(value)


def _shown(value: Any) -> str:
    """The raw value, short (a 10,000-digit integer must not fill the notes)."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def tokens_from_events(events: Iterable[Mapping[str, Any]]) -> Tokens:
    """The answer's token counts; a server's ``timings`` win over ``usage`` (the server counted them)."""
    found = Tokens()
    timings: Tokens | None = None
    for event in events:
        for obj in _objects(event):
            t = obj.get("timings")
            if isinstance(t, Mapping) and "prompt_n" in t:
                notes: list[str] = []
                prompt_n = sane_count(t.get("prompt_n"), "timings.prompt_n", notes)
                cache_n = sane_count(t.get("cache_n"), "timings.cache_n", notes)
                predicted = sane_count(t.get("predicted_n"), "timings.predicted_n", notes)
                speed = sane_speed(t.get("predicted_per_second"), notes)
                found.notes.extend(notes)
                if prompt_n is not None:
                    timings = Tokens(prompt_n + (cache_n or 0), cache_n or 0, predicted, speed)
            usage = obj.get("usage")
            if isinstance(usage, Mapping):
                _merge_usage(found, usage)
    if timings is not None:
        timings.notes = found.notes
        return timings
    return found


#: the keys an answer's token counts hang under; a stream event without either is not parsed
_COUNT_KEYS = (b'"usage"', b'"timings"')
#: how a stream's bytes begin (a JSON body, even pretty-printed, begins with ``{``)
_SSE_FIELDS = (b"data:", b"event:", b"id:", b"retry:", b":")


def tokens_from_answer(sample: bytes) -> Tokens:
    """The token counts in an answer's kept bytes (a JSON body, or a stream's head and tail).

    Of a stream only the events that can carry counts are parsed: a long answer's kept 128 KB are
    hundreds of text deltas, and parsing each of them took the event loop about 6 ms per request.
    """
    if sample.lstrip().startswith(_SSE_FIELDS):
        sample = b"\n".join(sample[start:end] for start, end in _lines_with(sample, _COUNT_KEYS))
    return tokens_from_events(answer_events(sample))


def _lines_with(data: bytes, keys: tuple[bytes, ...]) -> list[tuple[int, int]]:
    """The (start, end) of each line of ``data`` holding one of ``keys``, in order (found with
    ``bytes.find``, so the cost grows with the matches, not with the lines)."""
    spans: set[tuple[int, int]] = set()
    for key in keys:
        at = data.find(key)
        while at != -1:
            start = data.rfind(b"\n", 0, at) + 1
            end = data.find(b"\n", at)
            end = len(data) if end == -1 else end
            spans.add((start, end))
            at = data.find(key, end)
    return sorted(spans)


def _objects(event: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    found = [event]
    for wrapper in ("message", "response"):
        inner = event.get(wrapper)
        if isinstance(inner, Mapping):
            found.append(inner)
    return found


def _merge_usage(found: Tokens, usage: Mapping[str, Any]) -> None:
    def count(key: str, source: Mapping[str, Any] = usage) -> int | None:
        return sane_count(source.get(key), key, found.notes)

    if "prompt_tokens" in usage or "completion_tokens" in usage:  # OpenAI Chat
        details = usage.get("prompt_tokens_details")
        found.input_tokens = count("prompt_tokens") or found.input_tokens
        if isinstance(details, Mapping) and "cached_tokens" in details:
            cached = count("cached_tokens", details)
            found.cached_tokens = cached if cached is not None else found.cached_tokens
        found.output_tokens = count("completion_tokens") or found.output_tokens
        return
    details = usage.get("input_tokens_details")
    if isinstance(details, Mapping):  # OpenAI Responses: input includes the cached part
        found.input_tokens = count("input_tokens") or found.input_tokens
        found.cached_tokens = count("cached_tokens", details)
        found.output_tokens = count("output_tokens") or found.output_tokens
        return
    # Messages API: input_tokens excludes cache reads and writes; a message_delta repeats or omits them
    fresh = count("input_tokens")
    read = count("cache_read_input_tokens")
    written = count("cache_creation_input_tokens") or 0
    if fresh is not None or read is not None:
        total = (fresh or 0) + (read or 0) + written
        if total or found.input_tokens is None:
            found.input_tokens = total
            found.cached_tokens = read if read is not None else found.cached_tokens
    output = count("output_tokens")
    if output is not None:
        found.output_tokens = output


def load_prices(config_dir: Path) -> dict[str, tuple[float, float, float]]:
    """The default prices with the user's ``prices.json`` on top (a broken file is ignored, never fatal)."""
    prices = dict(DEFAULT_PRICES)
    with contextlib.suppress(OSError, ValueError, TypeError, AttributeError):
        data = strict_json((config_dir / "prices.json").read_text(encoding="utf-8"))
        for name, value in data.items():
            if isinstance(value, list) and len(value) == 3 and all(
                    isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) and v >= 0
                    for v in value):
                prices[str(name)] = (float(value[0]), float(value[1]), float(value[2]))
    return prices


def cost_of(model: str | None, tokens: Tokens, prices: Mapping[str, tuple[float, float, float]],
            local: bool) -> float | None:
    if local:
        return 0.0
    if not model:
        return None
    match = max((name for name in prices if name in model.lower()), key=len, default=None)
    if match is None:
        return None
    price_in, price_cached, price_out = prices[match]
    cached = tokens.cached_tokens or 0
    fresh = max(0, (tokens.input_tokens or 0) - cached)
    return (fresh * price_in + cached * price_cached + (tokens.output_tokens or 0) * price_out) / 1e6
