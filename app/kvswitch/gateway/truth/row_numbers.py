"""A finished attempt's numbers, read into its usage row: time to first byte, tokens, cost, the bounds
that ended it, and the live cache record's verdict (``truth.live_record``).

Kept apart from the handler so that a bug in reading an answer costs the row its numbers, never the
client its answer: ``RowNumbers.record`` catches everything, logs the first failure and counts the rest.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path

from kvswitch.core.models import Profile
from kvswitch.core.redact import mask_text
from kvswitch.gateway.bridges import inline_system
from kvswitch.gateway.bridges.chat_stream import error_message
from kvswitch.gateway.relay.attempt import Attempt
from kvswitch.gateway.truth.live_record import CacheTruth
from kvswitch.usage.answer import cost_of, load_prices, tokens_from_answer
from kvswitch.usage.schema import UsageRow

log = logging.getLogger("kvswitch.gateway.usage")


class RowNumbers:
    """Fills rows from their answers; ``failures`` counts the rows whose answer could not be read."""

    def __init__(self, config_dir: Path, cache_truth: CacheTruth):
        self.prices = load_prices(config_dir)
        self.cache_truth = cache_truth
        self.failures = 0

    def record(self, row: UsageRow, attempt: Attempt | None, reasons: list[str], started: float,
               chain: list[Profile]) -> Callable[[], None] | None:
        """``fill``, guarded (logged once, counted with the store's errors). Returns what judges the row
        once counts the answer lacked are filled in (``CacheTruth.finish``), or None."""
        try:
            return self.fill(row, attempt, reasons, started, chain)
        except Exception as exc:  # noqa: BLE001 - bookkeeping must never reach the client
            self.failures += 1
            if self.failures == 1:
                log.warning("usage row incomplete: reading the answer's numbers failed (%s: %s)",
                            type(exc).__name__, exc)
            row.notes = f"numbers not read: {type(exc).__name__}"
            return None

    def fill(self, row: UsageRow, attempt: Attempt | None, reasons: list[str], started: float,
             chain: list[Profile]) -> Callable[[], None] | None:
        row.duration_ms = (time.monotonic() - started) * 1000
        if reasons and len(chain) > 1:
            row.failover = "; ".join(reasons)
        if attempt is None:
            return None
        row.ttft_ms = attempt.first_byte_ms
        if attempt.cut:
            row.error = attempt.cut
        elif row.status is not None and row.status >= 400 and not row.error:
            # the server's own words, masked and short: why it refused is what the user needs to see
            row.error = mask_text(_cause_first(error_message(attempt.error_body or attempt.sample())))[:300]
        tokens = tokens_from_answer(attempt.sample())
        row.input_tokens, row.cached_tokens, row.output_tokens = (
            tokens.input_tokens, tokens.cached_tokens, tokens.output_tokens)
        row.tokens_per_s = tokens.tokens_per_s
        # the bounds that ended an attempt (``forward.Limits``), then what the answer's numbers lacked
        lapsed = [r for r in reasons if r.endswith("(first-byte deadline)")] + (
            [attempt.cut] if attempt.idle and attempt.cut else [])
        row.notes = "; ".join([*lapsed, *tokens.notes])[:2000] or None
        if row.tokens_per_s is None and tokens.output_tokens and attempt.elapsed_ms and attempt.first_byte_ms:
            generating = (attempt.elapsed_ms - attempt.first_byte_ms) / 1000
            if generating > 0:
                row.tokens_per_s = tokens.output_tokens / generating
        served = next((p for p in chain if p.name == row.profile), None)
        local = bool(served and served.is_local)
        if served is not None and row.error and inline_system.remedies(served, row.error):
            fix = (f"the server's chat template takes a system message only first: `kvswitch profile edit "
                   f"{served.name} --inline-system-as-user` hands Claude Code's on as user messages in place")
            row.notes = "; ".join(filter(None, [row.notes, fix]))[:2000]
        row.cost = cost_of(row.model, tokens, self.prices, local)
        return self.cache_truth.finish(row, local=local)


def _cause_first(message: str) -> str:
    """A multi-line error on one line, its last line first: a template engine's or a runtime's trace
    ends with the cause (a server's chat template: "...in source: ... Error: Jinja Exception: System
    message must be at the beginning.")."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    if len(lines) <= 1:
        return lines[0] if lines else message.strip()
    return " | ".join([lines[-1], *lines[:-1]])
