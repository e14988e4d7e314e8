"""The real client sessions under ``tests/fixtures`` and the prefix property the bridges must keep."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kvswitch.gateway.bridges import dump_body

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CLAUDE_SESSIONS = FIXTURES / "claude-code-2.1.332" / "sessions"
CODEX_SESSIONS = FIXTURES / "codex-0.169.0"


def body(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))["body"]
    return data


def claude_turns(session: str) -> list[dict[str, Any]]:
    return [body(p) for p in sorted(CLAUDE_SESSIONS.glob(f"{session}_*.json"))]


def prefix_through_last_message(converted: dict[str, Any]) -> bytes:
    """Turn N's converted bytes up to the end of its last message (what turn N+1 must start with)."""
    raw = dump_body(converted)
    last = dump_body(converted["messages"][-1])
    end = raw.rindex(last) + len(last)
    return raw[:end]


def first_difference(a: bytes, b: bytes) -> str:
    i = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    return f"at byte {i}: {a[max(i - 80, 0) : i + 80]!r} vs {b[max(i - 80, 0) : i + 80]!r}"
