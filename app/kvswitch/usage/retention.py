"""How long usage is kept: raw request rows for a bounded time, then daily summaries, then nothing.

Without it the file only grows (issue 28: a million rows made ``kvswitch usage`` take 31 s). Rows older
than ``keep_requests_days`` are first summed into the ``daily`` table (per UTC day, client, profile and
model: requests, errors, tokens, cost) and only then deleted, with their hours of the hourly rollup
(``usage.rollup``), in one transaction, so every total the
summary reads survives the pruning; daily summaries older than ``keep_daily_days`` are dropped. The
figures come from KV Switch's settings (``usage_keep_requests_days``, ``usage_keep_daily_days``).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from kvswitch.core.paths import AppPaths
from kvswitch.usage import rollup

DAY = 86400
DEFAULT_KEEP_REQUESTS_DAYS = 90
DEFAULT_KEEP_DAILY_DAYS = 365

_ROLL_UP = """
INSERT INTO daily (day, client, profile, model, requests, errors, input_tokens, cached_tokens,
                   output_tokens, cost)
SELECT CAST(time / 86400 AS INTEGER) * 86400, client, profile, model, COUNT(*),
       SUM(CASE WHEN error IS NOT NULL OR status IS NULL OR status >= 400 THEN 1 ELSE 0 END),
       COALESCE(SUM(input_tokens), 0), COALESCE(SUM(cached_tokens), 0), COALESCE(SUM(output_tokens), 0),
       COALESCE(SUM(cost), 0.0)
FROM requests WHERE time < ? GROUP BY 1, 2, 3, 4
"""


@dataclass(frozen=True)
class Retention:
    keep_requests_days: int = DEFAULT_KEEP_REQUESTS_DAYS
    keep_daily_days: int = DEFAULT_KEEP_DAILY_DAYS


def retention_from_settings(paths: AppPaths) -> Retention:
    """The user's retention settings (defaults when the settings cannot be read)."""
    from kvswitch.core.settings import load_settings  # noqa: PLC0415 - pydantic only when the gateway starts

    settings = load_settings(paths)
    return Retention(settings.usage_keep_requests_days, settings.usage_keep_daily_days)


def apply_retention(connection: sqlite3.Connection, retention: Retention, now: float) -> int:
    """Roll request rows past ``keep_requests_days`` into ``daily``, delete them, drop old daily rows.

    The cut-off is a UTC midnight, so a day is summed once, whole. Returns the request rows moved.
    """
    cutoff = (int(now) // DAY - retention.keep_requests_days) * DAY
    oldest_daily = (int(now) // DAY - retention.keep_daily_days) * DAY
    stale = connection.execute("SELECT EXISTS (SELECT 1 FROM requests WHERE time < ?) OR "
                               "EXISTS (SELECT 1 FROM daily WHERE day < ?)",
                               (cutoff, oldest_daily)).fetchone()
    if not stale[0]:
        return 0  # nothing to do: no write, so no lock taken (the file may be another program's to lock)
    with connection:
        connection.execute(_ROLL_UP, (cutoff,))
        moved = connection.execute("DELETE FROM requests WHERE time < ?", (cutoff,)).rowcount
        connection.execute("DELETE FROM daily WHERE day < ?", (oldest_daily,))
        rollup.prune(connection, cutoff)
    return moved
