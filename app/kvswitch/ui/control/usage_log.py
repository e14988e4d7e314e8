"""The gateway's per-request cache record, read for the Usage tab: one page of requests, a summary per
session, the hit-rate trend over the whole period and its KPI figures.

Run on a worker (``AppController.load_usage_log``). The rows of ``usage.queries.query`` are filtered
and summed here, with the names and meanings of the store's paged SQL queries (``SessionSummary``,
``TrendPoint`` in ``usage.queries``, on its own branch), so switching to those is replacing
``read_usage_log``'s body; the view reads only ``UsageLog``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kvswitch.core.strictparse import loads as strict_json

if TYPE_CHECKING:
    from kvswitch.core.paths import AppPaths

#: the newest requests the log shows (a page; the filters narrow it)
PAGE = 500
#: the chart's bars over a period: an hour for a day, six hours for a week, a day beyond
_BUCKETS = ((1, 3600.0), (7, 6 * 3600.0))
DAY_S = 86400.0


@dataclass(frozen=True)
class LogFilter:
    """Which requests: ``None`` is any (client is the client's own name or the gateway's route)."""

    since: float | None = None
    client: str | None = None
    profile: str | None = None
    session: str | None = None
    verdict: str | None = None


@dataclass
class SessionLine:
    """One session as the Usage tab's summary shows it (the fields of the store's ``SessionSummary``)."""

    session: str | None
    client: str | None
    profiles: list[str] = field(default_factory=list)
    requests: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    reprocessed_tokens: int = 0
    time_lost_ms: float = 0.0
    last_reason: str | None = None

    @property
    def hit_rate(self) -> float:
        return self.cached_tokens / self.prompt_tokens if self.prompt_tokens else 0.0


@dataclass
class TrendBar:
    """One bar of the trend: a slice of the period, its requests and cached/prompt tokens."""

    start: float
    requests: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    ttft_ms_sum: float = 0.0
    ttft_n: int = 0

    @property
    def hit_rate(self) -> float:
        return self.cached_tokens / self.prompt_tokens if self.prompt_tokens else 0.0

    # what the strip chart reads (``reuse_chart.StripPoint``)
    @property
    def reuse_ratio(self) -> float:
        return self.hit_rate

    @property
    def verdict(self) -> str:
        if not self.requests:
            return "empty"  # the chart leaves the slice blank
        if not self.prompt_tokens:
            return "unknown"
        return "hit" if self.hit_rate >= 0.8 else "partial" if self.hit_rate >= 0.3 else "miss"

    @property
    def prompt_ms(self) -> float | None:
        """The slice's mean time to first token (the chart's line)."""
        return self.ttft_ms_sum / self.ttft_n if self.ttft_n else None


@dataclass
class UsageLog:
    """What one read brings: the page of requests (newest first), sessions, trend, and the choices the
    filters offer (every client, profile and session of the period)."""

    requests: list[Any]
    sessions: list[SessionLine]
    trend: list[TrendBar]
    bucket_s: float
    clients: list[str]
    profiles: list[str]
    session_ids: list[str]


def bucket_for(days: int) -> float:
    return next((size for limit, size in _BUCKETS if days and days <= limit), DAY_S)


def _bars(points: Iterable[Any], since: float, until: float, bucket_s: float) -> list[TrendBar]:
    """Bars over the whole period from ``since`` to ``until``, empty slices included (a quiet day shows),
    filled from the store's per-slice sums."""
    first = int(since // bucket_s)
    bars = [TrendBar(n * bucket_s) for n in range(first, int(until // bucket_s) + 1)]
    for point in points:
        index = int(point.start // bucket_s) - first
        if 0 <= index < len(bars):
            bars[index] = TrendBar(bars[index].start, point.requests, point.prompt_tokens,
                                   point.cached_tokens, point.ttft_ms_sum, point.ttft_n)
    return bars


def read_usage_log(paths: AppPaths, wanted: LogFilter, days: int) -> UsageLog:
    """On the worker: the period's requests through the gateway, filtered, summed per session and slice
    by SQLite (``usage.queries``): a page of rows and the sums, never every row of the period."""
    from kvswitch.gateway import control  # noqa: PLC0415 - aiohttp and httpx load on a worker
    from kvswitch.usage.queries import (  # noqa: PLC0415
        UsageFilter,
        filter_choices,
        hit_rate_trend,
        requests_page,
        session_summaries,
    )

    db = control.usage_db_path(paths)
    filters = UsageFilter(since=wanted.since, client=wanted.client, profile=wanted.profile,
                          session=wanted.session, verdict=wanted.verdict)
    choices = filter_choices(db, wanted.since)
    now = time.time()
    since = wanted.since if wanted.since is not None else (choices.oldest or now)
    bucket_s = bucket_for(days)
    sessions = [SessionLine(s.session, s.client, s.profiles, s.requests, s.prompt_tokens, s.cached_tokens,
                            s.reprocessed_tokens, s.time_lost_ms, s.last_reason)
                for s in session_summaries(db, filters)]
    return UsageLog(
        requests=list(reversed(requests_page(db, filters, limit=PAGE))), sessions=sessions,
        trend=_bars(hit_rate_trend(db, bucket_s, filters), since, now, bucket_s), bucket_s=bucket_s,
        clients=choices.clients, profiles=choices.profiles, session_ids=choices.sessions)


def detail_of(row: Any) -> dict[str, Any]:
    """A request's recorded evidence (``reason_detail`` JSON) as a dict; ``{}`` when it has none or it
    does not parse (``reason_lines`` shows such a record as it is)."""
    try:
        data = strict_json(row.reason_detail) if row.reason_detail else {}
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def reason_lines(row: Any) -> list[tuple[str, str]]:
    """A request's reason and its evidence (``reason_detail`` JSON) as label/value pairs; the differing
    bytes as the record has them (a JSON that does not parse is shown as it is)."""
    lines: list[tuple[str, str]] = []
    if row.reason:
        lines.append(("reason", str(row.reason)))
    detail = row.reason_detail
    if not detail:
        return lines
    try:
        data = strict_json(detail)
    except ValueError:
        return [*lines, ("detail", str(detail))]
    if not isinstance(data, dict):
        return [*lines, ("detail", json.dumps(data, ensure_ascii=False))]
    for key, value in data.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        lines.append((str(key), text))
    return lines
