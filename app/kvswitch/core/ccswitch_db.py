"""CC Switch's database (``~/.cc-switch/cc-switch.db``), opened read-only: KV Switch never writes it.

Its providers (``platform.importers``), MCP servers (``platform.mcp_ccswitch``), prompts and skills
(``core.ccswitch_library``) are all read through ``read_only_db``, so a database that cannot be opened
or read is refused with the same clear error (naming the file) wherever the import starts.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kvswitch.core.errors import ConfigParseError, FileAccessError


@contextmanager
def read_only_db(db: Path) -> Iterator[sqlite3.Connection]:
    """A ``mode=ro`` connection, closed on exit (``sqlite3.Connection``'s own context manager only
    commits). Not openable: ``FileAccessError``; a database error while reading: ``ConfigParseError``."""
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    except sqlite3.Error as exc:
        raise FileAccessError(db, f"cannot open the database: {exc}") from None
    try:
        yield conn
    except sqlite3.DatabaseError as exc:
        raise ConfigParseError(db, f"not a readable SQLite database: {exc}") from None
    finally:
        conn.close()
