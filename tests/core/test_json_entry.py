"""Every JSON KV Switch reads goes through ``kvswitch.core.strictparse`` (size cap, depth cap, no NaN), so a
100,000-deep answer or file is a clear refusal everywhere, never ``RecursionError``. The few direct
``json.loads`` left read only what KV Switch itself wrote or ships, each named here with its reason."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kvswitch.core.strictparse import JSONRefused, loads
from kvswitch.logs.parsers.llama_cpp import _parse_json
from kvswitch.verify.connection import server_message

APP = Path(__file__).resolve().parents[2] / "app" / "kvswitch"
DIRECT = re.compile(r"\bjson\.loads?\(")
#: file -> why it may parse JSON itself
ALLOWED = {
    "core/strictparse.py": "the entry itself",
    "targets/jsonsplice.py": "re-reads settings text strictparse already accepted, and its own edit",
    "logs/jsonl.py": "its own output lines",
    "logs/follow.py": "the log source it serialised itself for its worker process",
    "verify/claude_replay.py": "a request template shipped in the package",
    "core/client_settings.py": "data shipped in the package",
    "core/catalog.py": "the vendor catalog shipped in the package",
    # the clients' own transcripts, read line by line over thousands of files (the sessions index): each
    # line is capped (8 MB) before it is parsed and RecursionError is caught beside ValueError, since
    # strictparse's depth walk is several times slower than json.loads over a gigabyte of lines
    "sessions/lines.py": "the clients' transcript lines, capped, RecursionError caught",
    "sessions/opencode.py": "OpenCode's part and message rows, RecursionError caught",
    # KV Switch's own sessions index (sessions.db) and the usage rows' evidence it wrote itself
    "sessions/store.py": "its own index",
    "sessions/indexer.py": "its own index",
    "sessions/queries.py": "its own index",
    "sessions/gateway_reasons.py": "the gateway's reason_detail, written by KV Switch",
    "ui/control/session_index_run.py": "the JSON lines its own index child process prints",
    # MCP entries KV Switch canonicalised itself, and ~/.claude.json, which can be 50 MB: parsed with
    # json.loads (NaN refused) for speed, strictparse run only to locate an error; RecursionError caught
    "targets/mcp_docs.py": "entries it serialised itself",
    "targets/mcp_files.py": "its own entries; ~/.claude.json at 50 MB, NaN refused, depth caught",
}
DEEP = "[" * 100_000 + "]" * 100_000


def test_no_json_read_bypasses_the_strict_entry() -> None:
    found = sorted(
        str(path.relative_to(APP))
        for path in APP.rglob("*.py")
        if DIRECT.search(path.read_text(encoding="utf-8"))
    )
    assert set(found) <= set(ALLOWED), sorted(set(found) - set(ALLOWED))


def test_strict_loads_refuses_as_value_error() -> None:
    for bad in (DEEP, "NaN", "[1,]", "9" * 5000):
        with pytest.raises(JSONRefused):
            loads(bad)
    assert isinstance(JSONRefused("x"), ValueError)
    assert loads(b'{"a": [1, 2]}') == {"a": [1, 2]}


def test_readers_of_server_and_log_text_survive_deep_nesting() -> None:
    assert _parse_json(DEEP) is None  # a log line
    assert server_message(DEEP.encode())[:5] == "[[[[["  # an error body: shown as text, not a crash
