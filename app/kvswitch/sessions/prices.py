"""What a session's calls cost at list prices.

The user's ``prices.json`` in KV Switch's config dir (``usage.answer.load_prices``: ``{"model-fragment":
[input, cached, output]}`` USD per million tokens) wins; otherwise ``genai-prices`` (pydantic's offline
price table: input, cache read, cache write 5 m and 1 h, output, per provider and model, at the call's
date). A model neither knows is a local server's (``tiny``, ``qwen2.5-coder:7b``): it costs nothing, and
the session names it among its unpriced models.
"""

from __future__ import annotations

import warnings
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from kvswitch.sessions.model import Call


class Prices:
    """Prices for one pass (the user's file read once); ``cost(call)`` is None for an unpriced model."""

    def __init__(self, config_dir: Path | None) -> None:
        self.config_dir = config_dir
        self._user: dict[str, tuple[float, float, float]] | None = None

    @property
    def user(self) -> dict[str, tuple[float, float, float]]:
        """Only what the user wrote in ``prices.json`` (the built-in six lines are the gateway's fallback,
        not a list price); read on the first price asked for (it loads the server registry)."""
        if self._user is None:
            from kvswitch.usage.answer import DEFAULT_PRICES, load_prices  # noqa: PLC0415

            found = load_prices(self.config_dir) if self.config_dir is not None else dict(DEFAULT_PRICES)
            self._user = {
                name.lower(): value for name, value in found.items() if DEFAULT_PRICES.get(name) != value
            }
        return self._user

    def cost(self, call: Call) -> float | None:
        return self.cost_of(
            call.model,
            call.fresh,
            call.cache_read,
            call.cache_write_5m,
            call.cache_write_1h,
            call.output,
            call.time,
        )

    def cost_of(
        self, model: str, fresh: int, read: int, write_5m: int, write_1h: int, output: int, when: float = 0.0
    ) -> float | None:
        if not model:
            return None
        name = model.lower()
        match = max((fragment for fragment in self.user if fragment in name), key=len, default=None)
        if match is not None:
            price_in, price_cached, price_out = self.user[match]
            return ((fresh + write_5m + write_1h) * price_in + read * price_cached + output * price_out) / 1e6
        if not _known(name):
            return None
        return _list_price(name, fresh, read, write_5m, write_1h, output, _day(when))


def _day(when: float) -> str:
    return datetime.fromtimestamp(when, UTC).date().isoformat() if when > 0 else ""


@lru_cache(maxsize=512)
def _known(model: str) -> bool:
    """Whether genai-prices has a price for ``model`` (looked up once per name)."""
    return _calc(model, {"input_tokens": 1}, "") is not None


#: above this many prompt tokens a call is priced on its own (long-context tiers); below, by per-token rates
_TIER_FREE = 100_000
_UNIT = 1000


def _list_price(
    model: str, fresh: int, read: int, write_5m: int, write_1h: int, output: int, day: str
) -> float | None:
    if fresh + read + write_5m + write_1h > _TIER_FREE:
        usage = {
            "input_tokens": fresh + read + write_5m + write_1h,
            "cache_read_tokens": read,
            "cache_write_tokens": write_5m + write_1h,
            "output_tokens": output,
        }
        if write_1h:
            usage["cache_write_1h_tokens"] = write_1h
        return _calc(model, usage, day)
    rates = _rates(model, day)
    if rates is None:
        return None
    return fresh * rates[0] + read * rates[1] + write_5m * rates[2] + write_1h * rates[3] + output * rates[4]


@lru_cache(maxsize=4096)
def _rates(model: str, day: str) -> tuple[float, float, float, float, float] | None:
    """USD per token for new input, cache read, 5 m write, 1 h write and output (one lookup per model and
    day: a price lookup takes ~150 µs, too slow for every call of a large history)."""
    fresh = _calc(model, {"input_tokens": _UNIT}, day)
    if fresh is None:
        return None
    read = _calc(model, {"input_tokens": _UNIT, "cache_read_tokens": _UNIT}, day)
    write = _calc(model, {"input_tokens": _UNIT, "cache_write_tokens": _UNIT}, day)
    hour = _calc(
        model, {"input_tokens": _UNIT, "cache_write_tokens": _UNIT, "cache_write_1h_tokens": _UNIT}, day
    )
    out = _calc(model, {"output_tokens": _UNIT}, day)
    return (
        fresh / _UNIT,
        (read if read is not None else fresh) / _UNIT,
        (write if write is not None else fresh) / _UNIT,
        (hour if hour is not None else fresh) / _UNIT,
        (out or 0.0) / _UNIT,
    )


def _calc(model: str, usage: dict[str, int], day: str) -> float | None:
    from genai_prices import Usage, calc_price  # noqa: PLC0415 - its price table loads only when asked

    when = datetime.fromisoformat(day).replace(tzinfo=UTC) if day else None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            found: Any = calc_price(Usage(**usage), model, genai_request_timestamp=when)
    except (LookupError, ValueError, TypeError, ArithmeticError):
        return None
    return float(found.total_price)
