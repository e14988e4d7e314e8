"""Helpers for the per-server tests: answers served from a table, as each server's routes give them."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kvswitch.servers.base import Get

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
LLAMA_RESPONSES = FIXTURES / "llama.cpp-b11434" / "responses"


def table_get(answers: Mapping[str, tuple[int, Any]]) -> Get:
    """A ``get`` over recorded answers (404 for routes the server does not serve), and what was asked."""
    asked: list[str] = []

    def get(path: str) -> tuple[int, Any]:
        asked.append(path)
        return answers.get(path, (404, None))

    get.asked = asked  # type: ignore[attr-defined]
    return get


def recorded(name: str) -> Any:
    """A real llama-server b11434 answer from ``tests/fixtures`` (see its README)."""
    return json.loads((LLAMA_RESPONSES / name).read_text(encoding="utf-8"))
