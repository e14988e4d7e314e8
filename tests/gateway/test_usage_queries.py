"""The usage queries the CLI and the window read (summed by SQLite), and retention that keeps totals.

Rows are written through the real store into a real file in the temporary HOME; the expected figures
are worked out by hand from the rows each test writes.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest

from kvswitch.core.paths import AppPaths
from kvswitch.core.quickread import read_settings
from kvswitch.core.settings import load_settings, settings_file
from kvswitch.usage.queries import (
    UsageFilter,
    hit_rate_trend,
    query,
    requests_page,
    session_summaries,
    summarize,
    summary,
)
from kvswitch.usage.retention import Retention, apply_retention, retention_from_settings
from kvswitch.usage.schema import UsageRow, connect
from kvswitch.usage.store import UsageStore

DAY = 86400.0


def _write(db: Path, rows: list[UsageRow]) -> None:
    store = UsageStore(db, retention=Retention(3650, 3650))  # keeps every row the test writes
    try:
        for row in rows:
            assert store.add(row)
    finally:
        store.close()


def _row(at: float, profile: str = "local", prompt: int = 100, cached: int = 50, output: int = 5,
         **extra: object) -> UsageRow:
    row = UsageRow(at, "claude", profile, "http://127.0.0.1:1/v1/messages", "m", 200, prompt, cached, output,
                   cost=0.01)
    for name, value in extra.items():
        setattr(row, name, value)
    return row


def test_summary_in_sql_equals_the_rows_summed_by_hand(tmp_path: Path) -> None:
    db = tmp_path / "usage.sqlite3"
    now = time.time()
    rows = [_row(now - 10, "a", 100, 90, 1), _row(now - 9, "a", 200, 0, 2), _row(now - 8, "b", 50, 25, 3),
            _row(now - 3 * DAY, "a", 1000, 1000, 4)]
    rows[1].status = 503
    _write(db, rows)
    totals = summary(db, UsageFilter(since=now - DAY))
    assert totals["a"]["requests"] == 2
    assert totals["a"]["errors"] == 1
    a = totals["a"]
    assert (a["input_tokens"], a["cached_tokens"], a["output_tokens"]) == (300, 90, 3)
    assert totals["a"]["hit_rate"] == pytest.approx(0.3)
    assert totals["b"]["cost"] == pytest.approx(0.01)
    # the window's older API gives the same per-profile figures
    by_hand = summarize(query(db, since=now - DAY))
    for profile in ("a", "b"):
        for key in ("requests", "input_tokens", "cached_tokens", "output_tokens", "cost", "hit_rate"):
            assert totals[profile][key] == pytest.approx(by_hand[profile][key])
    assert summary(db, UsageFilter())["a"]["requests"] == 3
    assert summary(tmp_path / "none.sqlite3") == {}


def test_retention_rolls_old_rows_into_daily_summaries_and_keeps_the_totals(tmp_path: Path) -> None:
    db = tmp_path / "usage.sqlite3"
    now = time.time()
    ages = [400, 200, 120, 100, 100, 10, 0]
    _write(db, [_row(now - age * DAY - 60, "p" if age % 200 else "q", 100 + age, age // 2, 1)
                for age in ages])
    before = summary(db, UsageFilter(since=now - 365 * DAY))
    connection = connect(db)
    try:
        moved = apply_retention(connection, Retention(keep_requests_days=90, keep_daily_days=365), now)
    finally:
        connection.close()
    assert moved == 5  # 400, 200, 120, 100, 100 days old
    left = [round((now - row.time) / DAY) for row in query(db)]
    assert left == [10, 0]
    after = summary(db, UsageFilter(since=now - 365 * DAY))
    assert after == before  # the year's totals survive the pruning
    # the 400-day-old row was past a year: summed, then dropped with the daily summaries of its day
    assert summary(db, UsageFilter())["p"]["requests"] == before["p"]["requests"]
    reader = sqlite3.connect(db)
    try:
        days = [row[0] for row in reader.execute("SELECT day FROM daily ORDER BY day")]
    finally:
        reader.close()
    assert all(day % DAY == 0 for day in days)
    assert min(days) >= (now // DAY - 365) * DAY


def test_the_store_applies_the_retention_in_the_settings(paths_home: AppPaths) -> None:
    path = settings_file(paths_home)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"schema_version": 1, "usage_keep_requests_days": 7,
                                "usage_keep_daily_days": 30}))
    retention = retention_from_settings(paths_home)
    assert retention == Retention(7, 30)
    assert read_settings(path)["usage_keep_requests_days"] == 7  # the start-up reader agrees
    assert load_settings(paths_home).usage_keep_daily_days == 30
    db = paths_home.data_dir / "usage.sqlite3"
    now = time.time()
    _write(db, [_row(now - 20 * DAY), _row(now - 1)])
    store = UsageStore(db, retention=retention)  # retention runs once as the writer starts
    try:
        deadline = time.monotonic() + 10
        while len(query(db)) != 1:
            assert time.monotonic() < deadline
            time.sleep(0.05)  # the writer thread applies it on its own schedule
    finally:
        store.close()
    assert summary(db, UsageFilter(since=now - 25 * DAY))["local"]["requests"] == 2


def test_settings_refuse_a_retention_out_of_bounds(paths_home: AppPaths) -> None:
    path = settings_file(paths_home)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"schema_version": 1, "usage_keep_requests_days": 0}))
    assert load_settings(paths_home).usage_keep_requests_days == 90  # the bad value falls back


def test_session_summaries_count_hits_reprocessing_and_time_lost(tmp_path: Path) -> None:
    db = tmp_path / "usage.sqlite3"
    now = time.time()
    _write(db, [
        _row(now - 30, "local", 1000, 0, session="s-a", verdict="COLD", reason="cold", ttft_ms=500.0,
             client_name="claude-code"),
        _row(now - 20, "local", 1100, 1000, session="s-a", verdict="HIT", reusable_tokens=1000, ttft_ms=50.0,
             client_name="claude-code"),
        _row(now - 15, "other", 500, 400, session="s-b", verdict="PARTIAL", reusable_tokens=480,
             ttft_ms=100.0, reason="prefix_changed"),
        _row(now - 10, "cloud", 1200, 0, session="s-a", verdict="MISS", reusable_tokens=1100, ttft_ms=600.0,
             reason="evicted", client_name="claude-code"),
    ])
    found = {item.session: item for item in session_summaries(db)}
    a = found["s-a"]
    assert (a.client, a.profiles, a.requests) == ("claude-code", ["cloud", "local"], 3)
    assert (a.prompt_tokens, a.cached_tokens) == (3300, 1000)
    assert a.hit_rate == pytest.approx(1000 / 3300)
    assert a.reprocessed_tokens == (1100 - 1000) + 1200  # the COLD request's prompt is not re-processing
    assert a.time_lost_ms == pytest.approx(600.0 * 1100 / 1200)  # only the MISS had reusable tokens redone
    assert a.last_reason == "evicted"
    b = found["s-b"]
    assert (b.client, b.reprocessed_tokens, b.last_reason) == ("claude", 100, "prefix_changed")
    assert b.time_lost_ms == pytest.approx(100.0 * 80 / 100)
    assert [item.session for item in session_summaries(db)] == ["s-b", "s-a"]  # most recently active last
    assert [item.session for item in session_summaries(db, UsageFilter(profile="other"))] == ["s-b"]
    data = a.to_json()
    assert data["hit_rate"] == round(1000 / 3300, 4)
    assert "T" in data["first_seen"]


def test_requests_page_and_filters(tmp_path: Path) -> None:
    db = tmp_path / "usage.sqlite3"
    now = time.time()
    _write(db, [_row(now - 100 + i, "local", 100 + i, session="s1" if i % 2 else "s2",
                     verdict="HIT" if i % 3 else "MISS") for i in range(10)])
    assert [row.input_tokens for row in requests_page(db, limit=3)] == [107, 108, 109]
    assert [row.input_tokens for row in requests_page(db, limit=3, offset=3)] == [104, 105, 106]
    assert [row.input_tokens for row in requests_page(db, UsageFilter(session="s1"), limit=2)] == [107, 109]
    assert [row.input_tokens for row in requests_page(db, UsageFilter(verdict="miss"), limit=10)] == [
        100, 103, 106, 109]
    assert requests_page(db, UsageFilter(client="codex")) == []
    assert len(requests_page(db, UsageFilter(client="claude"), limit=100)) == 10


def test_hit_rate_trend_buckets(tmp_path: Path) -> None:
    db = tmp_path / "usage.sqlite3"
    base = (time.time() // 3600 - 5) * 3600
    _write(db, [_row(base + 10, prompt=100, cached=100), _row(base + 20, prompt=100, cached=0),
                _row(base + 3600 + 5, prompt=200, cached=150)])
    trend = hit_rate_trend(db, 3600)
    assert [(point.start, point.requests, point.prompt_tokens, point.cached_tokens) for point in trend] == [
        (base, 2, 200, 100), (base + 3600, 1, 200, 150)]
    assert [point.hit_rate for point in trend] == [0.5, 0.75]
    with pytest.raises(ValueError, match="positive"):
        hit_rate_trend(db, 0)


@pytest.fixture
def paths_home(fake_home: Path) -> AppPaths:
    return AppPaths.default()


def test_the_summary_reads_the_totals_index_in_profile_order(tmp_path: Path) -> None:
    """The structure the million-row figures rest on (docs/gateway.md): the writer builds the covering
    index, and the totals query SQLite plans reads it grouped, with no sort of the rows."""
    db = tmp_path / "usage.sqlite3"
    _write(db, [_row(time.time() - 5, "a"), _row(time.time() - 1, "b")])
    reader = sqlite3.connect(db)
    try:
        plan = " ".join(str(row[-1]) for row in reader.execute(
            "EXPLAIN QUERY PLAN SELECT profile, COUNT(*), SUM(CASE WHEN (error IS NOT NULL OR status IS NULL "
            "OR status >= 400) THEN 1 ELSE 0 END), SUM(input_tokens), SUM(cached_tokens), "
            "SUM(output_tokens), SUM(cost) FROM requests WHERE 1 GROUP BY profile"))
    finally:
        reader.close()
    assert "COVERING INDEX requests_totals" in plan
    assert "TEMP B-TREE" not in plan


def test_the_windows_filter_choices_and_trend_come_from_sql(tmp_path: Path) -> None:
    """What the Usage tab's combo boxes offer and its chart's TTFT line, summed by SQLite."""
    from kvswitch.usage.queries import filter_choices, hit_rate_trend  # noqa: PLC0415

    db = tmp_path / "usage.sqlite3"
    base = 1_800_000_000.0
    _write(db, [
        UsageRow(base, "claude", "local", None, "m", 200, input_tokens=100, cached_tokens=90, ttft_ms=10.0,
                 client_name="Claude Code", session="older"),
        UsageRow(base + 1, "codex", "cloud", None, "m", 200, input_tokens=50, cached_tokens=0, ttft_ms=30.0,
                 session="newer"),
        UsageRow(base + 2, "claude", "local", None, "m", 200, input_tokens=10, cached_tokens=0),
    ])
    choices = filter_choices(db)
    assert choices.oldest == base
    assert choices.clients == ["Claude Code", "claude", "codex"]  # the route where no name was told
    assert choices.profiles == ["cloud", "local"]
    assert choices.sessions == ["newer", "older"]  # the most recently active first
    assert filter_choices(db, since=base + 1).sessions == ["newer"]
    (point,) = hit_rate_trend(db, 3600.0)
    assert (point.requests, point.prompt_tokens, point.cached_tokens) == (3, 160, 90)
    assert (point.ttft_ms_sum, point.ttft_n) == (40.0, 2)
    assert filter_choices(tmp_path / "none.sqlite3").clients == []
