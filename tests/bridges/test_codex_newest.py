"""The Responses → Chat bridge on the newest Codex's real requests (fixtures ``codex-0.171.0``, recorded by
``scripts/capture_bridge_sessions.py --codex``), beside the pinned 0.169.0's, and what changed between them.

Measured: 0.171.0 sends the same request shape as 0.169.0 (the same keys, input items and tool names);
only two tool descriptions changed (``exec_command``'s ``login`` parameter, ``multi_agent_v1``'s list of
model overrides). So the bridge's conversion and its prefix property hold unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bridges.sessions import FIXTURES, body, first_difference, prefix_through_last_message
from kvswitch.gateway.bridges import dump_body
from kvswitch.gateway.bridges.responses_chat import convert_request

PINNED, NEWEST = FIXTURES / "codex-0.169.0", FIXTURES / "codex-0.171.0"


def _turns(folder: Path) -> list[dict[str, Any]]:
    turns = [body(p) for p in sorted(folder.glob("resume_*.json"))]
    assert len(turns) == 2, folder
    return turns


@pytest.mark.parametrize("folder", [PINNED, NEWEST], ids=lambda folder: folder.name)
def test_the_resumed_turn_extends_the_first_turns_bytes(folder: Path) -> None:
    first, second = (convert_request(turn) for turn in _turns(folder))
    assert [m["role"] for m in first["messages"]] == ["system", "user", "user"]
    prefix, raw = prefix_through_last_message(first), dump_body(second)
    assert raw.startswith(prefix), first_difference(prefix, raw)
    assert second["messages"][-2:] == [
        {"role": "assistant", "content": "hello"},
        {"role": "user", "content": "say more"},
    ]


def test_the_newest_codex_sends_the_same_shape_and_only_two_tool_descriptions_changed() -> None:
    for old, new in zip(_turns(PINNED), _turns(NEWEST), strict=True):
        assert sorted(old) == sorted(new)
        shape = [(item["type"], item["role"]) for item in old["input"]]
        assert shape == [(item["type"], item["role"]) for item in new["input"]]
        assert old["input"][0]["content"] == new["input"][0]["content"]  # the system prompt, byte for byte
        assert sorted(json.loads(old["client_metadata"]["x-codex-turn-metadata"])) == sorted(
            json.loads(new["client_metadata"]["x-codex-turn-metadata"]))
        names = [tool.get("name") for tool in old["tools"]]
        assert names == [tool.get("name") for tool in new["tools"]]
        changed = [tool.get("name") for tool, other in zip(old["tools"], new["tools"], strict=True)
                   if tool != other]
        assert changed == ["exec_command", "multi_agent_v1"]
        assert convert_request(new)["tools"] != convert_request(old)["tools"]  # descriptions pass through
