"""The hourly rollup the summary reads: its numbers equal a scan of the rows, whatever the window.

Rows are written through the real store (its writer thread keeps the rollup) into a real file; the
expected figures are a plain SQL scan of the ``requests`` table of that same file. Costs are multiples
of 1/64 so that their sums are exact in any order (the rollup adds them in another order than a scan).
"""

from __future__ import annotations

import random
import sqlite3
import time
from pathlib import Path

import pytest

from kvswitch.usage import rollup as usage_rollup
from kvswitch.usage.queries import UsageFilter, summary
from kvswitch.usage.retention import Retention, apply_retention
from kvswitch.usage.schema import UsageRow
from kvswitch.usage.store import UsageStore

HOUR = 3600
PROFILES = ("local", "deepseek", "gpt", None)


def _rows(now: float, count: int, seed: int) -> list[UsageRow]:
    rng = random.Random(seed)
    base = usage_rollup.bucket(now)
    rows = []
    for _ in range(count):
        kind = rng.random()
        if kind < 0.15:  # exactly on an hour boundary, or a hair either side
            at = base - rng.randint(0, 30) * HOUR + rng.choice((0.0, -0.001, 0.001))
        else:
            at = now - rng.uniform(0, 30 * HOUR)
        status = rng.choice((200, 200, 200, 429, 500, None))
        error = "upstream refused" if rng.random() < 0.1 else None
        prompt = rng.choice((None, rng.randint(0, 50_000)))
        rows.append(UsageRow(at, rng.choice(("claude", "codex")), rng.choice(PROFILES), "http://u/v1", "m",
                             status, prompt, rng.choice((None, rng.randint(0, 40_000))),
                             rng.choice((None, rng.randint(0, 2_000))),
                             cost=rng.choice((None, rng.randint(0, 640) / 64)),
                             error=error))
    return rows


def _write(db: Path, rows: list[UsageRow]) -> None:
    store = UsageStore(db, retention=Retention(3650, 3650))
    try:
        futures = [store.submit(row) for row in rows]
    finally:
        store.close()
    assert all(f is not None and f.result(timeout=30) for f in futures)


def _scan(db: Path, filters: UsageFilter) -> dict[str, dict[str, float]]:
    """The reference: the rows summed by SQLite, directly (no rollup, no index choice)."""
    where, args = filters.where()
    connection = sqlite3.connect(db)
    try:
        found = connection.execute(
            "SELECT profile, COUNT(*), SUM(CASE WHEN error IS NOT NULL OR status IS NULL OR status >= 400 "
            "THEN 1 ELSE 0 END), COALESCE(SUM(input_tokens), 0), COALESCE(SUM(cached_tokens), 0), "
            f"COALESCE(SUM(output_tokens), 0), COALESCE(SUM(cost), 0.0) FROM requests WHERE {where} "
            "GROUP BY profile", args).fetchall()
    finally:
        connection.close()
    totals: dict[str, dict[str, float]] = {}
    for profile, *sums in found:
        entry = totals.setdefault(profile or "?", dict.fromkeys(
            ("requests", "errors", "input_tokens", "cached_tokens", "output_tokens", "cost"), 0))
        for key, value in zip(entry, sums, strict=True):
            entry[key] += value
    for entry in totals.values():
        entry["hit_rate"] = entry["cached_tokens"] / entry["input_tokens"] if entry["input_tokens"] else 0.0
    return totals


def _rollup_current(db: Path) -> bool:
    connection = sqlite3.connect(db)
    try:
        return usage_rollup.current(connection)
    finally:
        connection.close()


def _windows(now: float) -> list[UsageFilter]:
    base = usage_rollup.bucket(now)
    windows = []
    for since in (None, now - 86400, now - 5 * HOUR - 17.25, base - 3 * HOUR, base - 29 * HOUR + 0.001,
                  now - 600, now + 10):
        for until in (None, base - HOUR, now - 2 * HOUR + 1.5, base - 12 * HOUR + 0.0005):
            for profile in (None, "local", "gpt", "absent"):
                windows.append(UsageFilter(since=since, until=until, profile=profile))
    return windows


def test_the_summary_from_the_rollup_equals_a_scan_of_the_rows(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "usage.sqlite3"
    now = time.time()
    rebuilt: list[int] = []
    rebuild = usage_rollup.rebuild
    monkeypatch.setattr(usage_rollup, "rebuild", lambda connection: rebuilt.append(1) or rebuild(connection))
    _write(db, _rows(now, 3000, seed=1))
    assert _rollup_current(db)  # the writer kept it: the summary below reads it
    assert rebuilt == [1]  # built once when the new file was opened, then added to batch by batch
    for filters in _windows(now):
        assert summary(db, filters) == _scan(db, filters), filters
    # the window's other filters go to the rows and agree too
    assert summary(db, UsageFilter(since=now - 86400, client="codex")) == _scan(
        db, UsageFilter(since=now - 86400, client="codex"))


def test_a_file_from_before_the_rollup_is_summed_into_it_when_the_gateway_opens_it(tmp_path: Path) -> None:
    db = tmp_path / "usage.sqlite3"
    now = time.time()
    old = sqlite3.connect(db)  # the first release's schema, as an older KV Switch created it
    old.executescript("""
        CREATE TABLE requests (id INTEGER PRIMARY KEY AUTOINCREMENT, time REAL NOT NULL, client TEXT,
          profile TEXT, upstream TEXT, model TEXT, status INTEGER, input_tokens INTEGER,
          cached_tokens INTEGER, output_tokens INTEGER, ttft_ms REAL, tokens_per_s REAL, duration_ms REAL,
          failover TEXT, cost REAL, error TEXT);
        CREATE INDEX requests_time ON requests(time);""")
    rng = random.Random(2)
    old.executemany("INSERT INTO requests (time, client, profile, status, input_tokens, cached_tokens, "
                    "output_tokens, cost, error) VALUES (?, 'claude', ?, ?, ?, ?, ?, ?, ?)",
                    [(now - rng.uniform(0, 30 * HOUR), rng.choice(PROFILES), rng.choice((200, 500, None)),
                      rng.randint(0, 9_000), rng.randint(0, 9_000), rng.randint(0, 99),
                      rng.randint(0, 64) / 64,
                      rng.choice((None, "boom"))) for _ in range(1500)])
    old.commit()
    old.close()
    assert summary(db, UsageFilter(since=now - 86400)) == _scan(db, UsageFilter(since=now - 86400))  # rows
    _write(db, _rows(now, 500, seed=3))
    assert _rollup_current(db)
    for filters in _windows(now):
        assert summary(db, filters) == _scan(db, filters), filters


def test_rows_an_older_version_added_are_read_from_the_rows_then_rolled_up_again(tmp_path: Path) -> None:
    db = tmp_path / "usage.sqlite3"
    now = time.time()
    _write(db, _rows(now, 800, seed=4))
    other = sqlite3.connect(db)  # an older gateway appends without knowing the rollup
    other.execute("INSERT INTO requests (time, client, profile, status, input_tokens, cached_tokens, "
                  "output_tokens, cost) VALUES (?, 'claude', 'local', 200, 1000, 900, 10, 0.5)",
                  (now - 7200,))
    other.commit()
    other.close()
    assert not _rollup_current(db)
    for filters in _windows(now)[::7]:
        assert summary(db, filters) == _scan(db, filters), filters
    _write(db, _rows(now, 300, seed=5))  # the writer rebuilds it when it opens the file
    assert _rollup_current(db)
    for filters in _windows(now):
        assert summary(db, filters) == _scan(db, filters), filters


def test_retention_drops_the_hours_it_rolls_into_daily(tmp_path: Path) -> None:
    db = tmp_path / "usage.sqlite3"
    now = time.time()
    rows = _rows(now, 1000, seed=6)
    for index, row in enumerate(rows[:400]):
        row.time = now - (3 + index % 20) * 86400 - index * 7.5
    _write(db, rows)
    before = summary(db, UsageFilter())
    connection = sqlite3.connect(db)
    try:
        moved = apply_retention(connection, Retention(keep_requests_days=2, keep_daily_days=3650), now)
        cutoff = (int(now) // 86400 - 2) * 86400
        oldest_hour = connection.execute("SELECT MIN(hour) FROM hourly").fetchone()[0]
        assert usage_rollup.current(connection)
    finally:
        connection.close()
    assert moved >= 400
    assert oldest_hour >= cutoff
    after = summary(db, UsageFilter())
    assert after == before  # every total survives: rollup for the rows kept, daily for the rest
    since = now - 86400
    assert summary(db, UsageFilter(since=since)) == _scan(db, UsageFilter(since=since))


@pytest.mark.parametrize("epoch", [0.0, 3599.999, 3600.0, -0.5, -3600.0, -3600.5, 1.7e9 + 0.25, 7199.9999999])
def test_the_hour_of_a_time_is_the_same_in_python_and_sql(epoch: float) -> None:
    connection = sqlite3.connect(":memory:")
    try:
        in_sql = connection.execute(f"SELECT {usage_rollup._BUCKET_SQL} FROM (SELECT ? AS time)",
                                    (epoch,)).fetchone()[0]
    finally:
        connection.close()
    assert usage_rollup.bucket(epoch) == in_sql
    assert usage_rollup.bucket(epoch) <= epoch < usage_rollup.bucket(epoch) + HOUR
