"""Usage per request, from the answer's own numbers, in SQLite (stdlib ``sqlite3``, 0600).

The pieces, by responsibility:

- ``usage_answer``: token counts from an answer (validated once: ``sane_count``), prices and cost;
- ``usage_schema``: the row, the tables, opening the file to write or read, setting a broken one aside;
- ``usage_store``: the gateway's writer thread behind a bounded queue (the answer never waits on it);
- ``usage_queries``: totals, requests, sessions and the hit-rate trend, aggregated in SQL, streamed;
- ``usage_retention``: raw rows for a bounded time, then daily summaries.

This module keeps the names the rest of KV Switch imported before the split.
"""

from __future__ import annotations

from kvswitch.gateway.usage_answer import (
    DEFAULT_PRICES,
    MAX_TOKENS,
    Tokens,
    cost_of,
    load_prices,
    sane_count,
    tokens_from_answer,
    tokens_from_events,
)
from kvswitch.gateway.usage_queries import (
    SessionSummary,
    TrendPoint,
    UsageFilter,
    hit_rate_trend,
    iter_rows,
    iter_values,
    query,
    requests_page,
    session_summaries,
    summarize,
    summary,
)
from kvswitch.gateway.usage_retention import Retention, apply_retention, retention_from_settings
from kvswitch.gateway.usage_schema import (
    CACHE_COLUMNS,
    COLUMNS,
    UsageFileError,
    UsageRow,
    connect,
    open_reader,
    set_aside,
)
from kvswitch.gateway.usage_store import UsageStore

__all__ = [
    "CACHE_COLUMNS", "COLUMNS", "DEFAULT_PRICES", "MAX_TOKENS", "Retention", "SessionSummary", "Tokens",
    "TrendPoint", "UsageFileError", "UsageFilter", "UsageRow", "UsageStore", "apply_retention", "connect",
    "cost_of", "hit_rate_trend", "iter_rows", "iter_values", "load_prices", "open_reader", "query",
    "requests_page", "retention_from_settings", "sane_count", "session_summaries", "set_aside",
    "summarize", "summary", "tokens_from_answer", "tokens_from_events",
]
