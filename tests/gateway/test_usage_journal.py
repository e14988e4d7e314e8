"""The usage database's journal: a commit per request must not wait for fsync, and the files stay 0600."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

from kvswitch.usage.queries import query
from kvswitch.usage.schema import UsageRow, connect
from kvswitch.usage.store import UsageStore


def test_usage_db_uses_a_write_ahead_log_readable_by_another_connection(tmp_path: Path) -> None:
    db = tmp_path / "data" / "usage.sqlite3"
    store = UsageStore(db)
    try:
        store.add(UsageRow(time.time(), "claude", "bench", "http://127.0.0.1:1/v1/messages", "m", 200))
        reader = connect(db)
        try:
            assert reader.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        finally:
            reader.close()
        rows = query(db)
        assert [(r.profile, r.status) for r in rows] == [("bench", 200)]
        for path in (db, Path(str(db) + "-wal"), Path(str(db) + "-shm")):
            assert path.exists(), path
            assert stat.S_IMODE(os.stat(path).st_mode) == 0o600, path
    finally:
        store.close()
