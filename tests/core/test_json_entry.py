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
