"""The record's page parse: a real server's page in place, a page only a broken or hostile server sends on
a worker thread, with the same values either way, and the event loop free meanwhile."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from kvswitch.core.prometheus import parse_samples
from kvswitch.gateway.truth import pages
from kvswitch.gateway.truth.pages import INLINE_PARSE_CHARS, page_values
from kvswitch.gateway.truth.tier_record import MAX_PAGE_BYTES

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
REAL = FIXTURES / "lmcache-0.5.6" / "cold-vllm-after.txt"  # the largest real page captured (59 KB)


def test_the_largest_real_page_is_parsed_in_place() -> None:
    text = REAL.read_text(encoding="utf-8")
    assert len(text) < INLINE_PARSE_CHARS < MAX_PAGE_BYTES
    assert asyncio.run(page_values(text)) == parse_samples(text)


def test_a_page_at_the_readers_bound_is_parsed_off_the_loop(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    real = REAL.read_text(encoding="utf-8")
    big = (real * (MAX_PAGE_BYTES // len(real) + 1))[: MAX_PAGE_BYTES - 1]
    big = big[: big.rindex("\n") + 1]
    threads: list[bool] = []

    def slow_parse(text: str, names: object = None) -> dict[str, float]:
        threads.append(True)
        time.sleep(0.3)  # a parse as slow as a much slower machine's: the loop must not wait for it
        return parse_samples(text, names)  # type: ignore[arg-type]

    async def scenario() -> tuple[dict[str, float], int]:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        running = asyncio.create_task(ticker())
        values = await page_values(big)
        running.cancel()
        return values, ticks

    monkeypatch.setattr(pages, "parse_samples", slow_parse)
    values, ticks = asyncio.run(scenario())
    assert threads == [True]
    assert values == parse_samples(big)
    assert ticks >= 5, ticks  # the loop ran on while the page was parsed
