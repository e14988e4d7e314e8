"""The ``tiers`` column (issue 37: a request's prompt by cache tier): a usage file from before it still
reads (as unknown) and, once the gateway's store opens it, takes rows with it; the readers show it."""

from __future__ import annotations

import json
import sqlite3
import time

import pytest

from kvswitch.cli import main
from kvswitch.core.gateway_config import usage_db
from kvswitch.core.paths import AppPaths
from kvswitch.servers.tier_words import parsed, tiers_line
from kvswitch.usage.queries import query
from kvswitch.usage.schema import COLUMNS, UsageRow
from kvswitch.usage.store import UsageStore

#: the file as the release before this column wrote it: every column up to ``notes``
_OLDER = """
CREATE TABLE requests (id INTEGER PRIMARY KEY AUTOINCREMENT, time REAL NOT NULL, client TEXT, profile TEXT,
  upstream TEXT, model TEXT, status INTEGER, input_tokens INTEGER, cached_tokens INTEGER,
  output_tokens INTEGER, ttft_ms REAL, tokens_per_s REAL, duration_ms REAL, failover TEXT, cost REAL,
  error TEXT, client_name TEXT, client_version TEXT, session TEXT, agent TEXT, session_source TEXT,
  reusable_tokens INTEGER, verdict TEXT, reason TEXT, reason_detail TEXT, notes TEXT);
"""
SPLIT = {"vllm_prefix_cache": 0, "lmcache_l1": 1024, "lmcache_l2": 256, "computed": 57,
         "lmcache_l2_adapters": {"fs": 1}, "chunk_size": 128}


def _older_file() -> sqlite3.Connection:
    db = usage_db(AppPaths.default())
    db.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(db)
    connection.executescript(_OLDER)
    connection.execute("INSERT INTO requests (time, profile, status, input_tokens, cached_tokens, verdict) "
                       "VALUES (?, 'old', 200, 1337, 1280, 'HIT')", (time.time() - 60,))
    connection.commit()
    return connection


def test_an_older_file_reads_then_takes_the_column(capsys: pytest.CaptureFixture[str]) -> None:
    _older_file().close()
    db = usage_db(AppPaths.default())
    before = db.read_bytes()
    [old] = query(db)
    assert (old.profile, old.input_tokens, old.tiers) == ("old", 1337, None)
    assert main(["usage", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["tiers"] is None
    assert db.read_bytes() == before  # a reader never migrates

    store = UsageStore(db)
    try:
        row = UsageRow(time.time(), "pinned", "lm", None, "tiny", 200, 1337, 1280,
                       tiers=json.dumps(SPLIT))
        assert store.add(row)
    finally:
        store.close()
    columns = [r[1] for r in sqlite3.connect(db).execute("PRAGMA table_info(requests)")]
    assert columns[-1] == "tiers"
    assert set(COLUMNS) <= set(columns)
    old, new = query(db)
    assert (old.tiers, old.verdict) == (None, "HIT")
    assert json.loads(new.tiers or "") == SPLIT
    assert main(["usage", "--requests"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "tiers" not in lines[0]
    assert lines[1].endswith("tiers vLLM 0 · L1 1024 · L2 256 (disk fs 1 load) · computed 57"), lines
    assert main(["usage", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [r["tiers"] for r in listed] == [None, SPLIT]


def test_a_first_release_file_takes_every_later_column() -> None:
    db = usage_db(AppPaths.default())
    db.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(db)
    connection.executescript(_OLDER.split(", client_name")[0] + ");")
    connection.close()
    store = UsageStore(db)
    try:
        assert store.add(UsageRow(time.time(), "pinned", "lm", None, "tiny", 200, tiers=json.dumps(SPLIT)))
    finally:
        store.close()
    [row] = query(db)
    assert json.loads(row.tiers or "") == SPLIT


_REST = '"lmcache_l2": 0, "computed": 1}'


@pytest.mark.parametrize("text", [None, "", "not json", "[1, 2]", '{"lmcache_l1": 5}',
                                  '{"vllm_prefix_cache": 0, "lmcache_l1": "5", ' + _REST,
                                  '{"vllm_prefix_cache": -1, "lmcache_l1": 5, ' + _REST,
                                  '{"vllm_prefix_cache": true, "lmcache_l1": 5, ' + _REST])
def test_text_that_is_not_a_split_reads_as_unknown(text: str | None) -> None:
    """The column is text another program may have changed: shown as unknown, never an error."""
    assert parsed(text) is None
    assert tiers_line(text) is None


def test_an_odd_split_written_to_the_file_is_shown_as_unknown(capsys: pytest.CaptureFixture[str]) -> None:
    connection = _older_file()
    connection.execute("ALTER TABLE requests ADD COLUMN tiers TEXT")
    connection.execute("INSERT INTO requests (time, profile, status, tiers) VALUES (?, 'odd', 200, ?)",
                       (time.time(), '{"lmcache_l1": [1]}'))
    connection.commit()
    connection.close()
    assert main(["usage", "--requests"]) == 0
    assert "tiers" not in capsys.readouterr().out
    assert main(["usage", "--json"]) == 0
    assert [r["tiers"] for r in json.loads(capsys.readouterr().out)] == [None, None]


def test_a_row_keeps_the_split_text_it_is_given_and_cuts_an_absurd_one() -> None:
    db = usage_db(AppPaths.default())
    store = UsageStore(db)
    try:
        assert store.add(UsageRow(time.time(), "pinned", "lm", None, "tiny", 200, tiers=json.dumps(SPLIT)))
        assert store.add(UsageRow(time.time(), "pinned", "lm", None, "tiny", 200, tiers="x" * 10_000))
        assert store.add(UsageRow(time.time(), "pinned", "lm", None, "tiny", 200, tiers=12345))  # type: ignore[arg-type]
    finally:
        store.close()
    first, long, number = query(db)
    assert first.tiers == json.dumps(SPLIT)
    assert len(long.tiers or "") == 2000
    assert number.tiers is None
    assert first.to_json()["tiers"] == json.dumps(SPLIT)
