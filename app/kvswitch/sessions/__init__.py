"""Every past conversation of every client, read from the client's own files (issue 35).

Read-only and incremental: Claude Code's transcripts (``$CLAUDE_CONFIG_DIR/projects``), Codex's rollouts
(``$CODEX_HOME/sessions``) and OpenCode's database (``$XDG_DATA_HOME/opencode/opencode.db``) are read
into an index in KV Switch's data directory (``sessions.db``, 0600), which can always be rebuilt from
them; each pass reads only what was appended since the last. Nothing here imports Qt, the gateway or
another sibling: the CLI (``kvswitch sessions``, ``kvswitch session show|resume``) and a window's
worker thread call the same four functions.

Public API (everything else in the package is internal)::

    index_sessions(paths, homes=None, progress=None, should_stop=None) -> IndexReport
        One pass. ``progress(done, total, path)`` after each file (call it from a worker thread; the
        window fills its list as ``IndexReport.sessions_changed`` says); ``should_stop()`` ends the
        pass between files, keeping what was read. Never raises for a bad client file: its trouble is
        in ``IndexReport.notes[path]``. Raises ``sqlite3.Error``/``OSError`` only for the index itself.
    list_sessions(paths, filters=SessionFilter()) -> list[SessionSummary]      newest first
    session_turns(paths, session_id) -> tuple[SessionSummary, list[Turn]]
        The turn table: each call's reused / written / new tokens, cost and ``Loss`` (causes, words,
        tokens and money lost). ``session_id`` may be a unique prefix; else ``SessionNotFound``.
    resume_command(client, session_id, project) -> str

Each call opens its own SQLite connection, so the GUI thread may list while a worker indexes (WAL).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from kvswitch.core.gateway_config import usage_db
from kvswitch.core.paths import AppPaths
from kvswitch.sessions import indexer, queries
from kvswitch.sessions.gateway_reasons import with_gateway_reasons
from kvswitch.sessions.losses import session_turns as _turns
from kvswitch.sessions.model import (
    CLIENTS,
    Call,
    ClientHomes,
    GatewayReason,
    IndexReport,
    Loss,
    SessionFilter,
    SessionSummary,
    Turn,
    resume_command,
)
from kvswitch.sessions.prices import Prices
from kvswitch.sessions.queries import SessionNotFound
from kvswitch.sessions.store import INDEX_NAME, open_index

__all__ = [
    "CLIENTS",
    "Call",
    "ClientHomes",
    "GatewayReason",
    "IndexReport",
    "Loss",
    "SessionFilter",
    "SessionNotFound",
    "SessionSummary",
    "Turn",
    "index_path",
    "index_sessions",
    "list_sessions",
    "resume_command",
    "session_turns",
]


def index_path(paths: AppPaths) -> Path:
    """Where the index lives: ``<data dir>/sessions.db``."""
    return paths.data_dir / INDEX_NAME


@contextmanager
def _index(paths: AppPaths) -> Iterator[sqlite3.Connection]:
    db = open_index(index_path(paths))
    try:
        yield db
    finally:
        db.close()


def index_sessions(
    paths: AppPaths,
    homes: ClientHomes | None = None,
    progress: Callable[[int, int, str], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> IndexReport:
    """Read what every client wrote since the last pass into the index (see the module docstring)."""
    with _index(paths) as db:
        return indexer.index_all(db, homes or ClientHomes.from_env(), progress, should_stop)


def list_sessions(paths: AppPaths, filters: SessionFilter | None = None) -> list[SessionSummary]:
    """The indexed sessions that match ``filters``, newest first, with tokens, hit rate and cost."""
    with _index(paths) as db:
        return queries.list_sessions(db, filters or SessionFilter(), Prices(paths.config_dir))


def session_turns(paths: AppPaths, session_id: str) -> tuple[SessionSummary, list[Turn]]:
    """One session (by id or unique prefix) and its turn table with losses; a call the gateway also
    recorded (same session id) carries the gateway's verdict and byte-level reason (``Turn.gateway``)."""
    prices = Prices(paths.config_dir)
    with _index(paths) as db:
        client, found = queries.find_session(db, session_id)
        calls = queries.session_calls(db, client, found)
        shapes = queries.shapes_of(db, {call.shape for call in calls if call.shape})
        summary, turns = queries.summary_of(db, client, found, prices), _turns(calls, prices, shapes)
    return summary, with_gateway_reasons(turns, usage_db(paths), found)
