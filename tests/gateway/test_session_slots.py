"""Session-affine slots (``slot_affinity``): which slot each session's requests get, how the request
bytes carry it, which profiles it applies to, and the CLI. The real server's side (b11434 honouring
``id_slot`` on chat completions, the next turn a HIT) is ``tests/e2e/test_e2e_session_slots.py``."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass

import aiohttp
import pytest

from kvswitch.cli import main
from kvswitch.core.models import ModelMap, Profile
from kvswitch.gateway.truth.slots import (
    MAX_SESSIONS,
    SessionSlots,
    SlotTable,
    lane_of,
    props_url,
    system_hash,
    with_slot,
)
from kvswitch.servers.protocols import bridged, upstream_protocol
from kvswitch.usage.schema import UsageRow
from support.net import free_port

TOOLS = {"model": "tiny", "tools": [{"name": "Read"}], "messages": []}


def test_each_main_conversation_keeps_its_own_slot_while_there_are_enough() -> None:
    table = SlotTable(2)
    assert table.assign("a", "main") == 0
    assert table.assign("b", "main") == 1
    assert [table.assign(s, "main") for s in ("a", "b", "a", "a", "b")] == [0, 1, 0, 0, 1]


def test_side_requests_go_where_no_main_conversation_is() -> None:
    table = SlotTable(3)
    assert table.assign("a", "main") == 0
    assert table.assign("a", "side") == 1
    assert table.assign("a", "side") == 1  # the side lane keeps its slot too
    assert table.assign("b", "main") == 2  # not the side slot while another is free
    assert table.assign("a", "main") == 0


def test_a_new_main_conversation_takes_the_side_slot_before_displacing_another_main() -> None:
    table = SlotTable(2)
    assert table.assign("a", "main") == 0
    assert table.assign("a", "side") == 1
    assert table.assign("b", "main") == 1
    # now every slot holds a main conversation: a side request never goes to its own session's slot
    assert table.assign("a", "side") == 1
    assert table.assign("b", "side") == 0


def test_more_sessions_than_slots_the_one_idle_longest_gives_its_slot_up() -> None:
    table = SlotTable(2)
    table.assign("a", "main")
    table.assign("b", "main")
    table.assign("a", "main")  # b is now the one idle longest
    assert table.assign("c", "main") == 1
    assert ("b", "") not in table.mains
    assert table.assign("a", "main") == 0
    assert table.assign("b", "main") == 1  # back: c's slot is the least recently used now


def test_a_subagent_with_its_own_system_prompt_gets_its_own_slot() -> None:
    """Claude Code 2.1.332 runs a ``context: fork`` skill as a subagent that sends only the session's id:
    its own system prompt is what tells it from the main conversation."""
    table = SlotTable(2)
    main, fork = system_hash({"system": [{"type": "text", "text": "main"}]}), system_hash({"system": "fork"})
    assert main != fork
    assert table.assign("a", "main", main) == 0
    assert table.assign("a", "main", fork) == 1  # the fork: the free slot, not the conversation's
    assert [table.assign("a", "main", h) for h in (fork, main, fork, main)] == [1, 0, 1, 0]
    # every slot held: another session's side request takes the one idle longest; this session's own,
    # with no slot but its own conversations', too
    assert table.assign("b", "side") == 1
    assert table.assign("a", "side") == 0


def test_the_system_hash_reads_the_text_only() -> None:
    marked = {"system": [{"type": "text", "text": "you", "cache_control": {"type": "ephemeral"}}]}
    assert system_hash(marked) == system_hash({"system": [{"type": "text", "text": "you"}]})
    assert system_hash({"messages": []}) == system_hash("not an object") == ""
    deep: list[object] = []
    for _ in range(5000):  # deeper than any text reader recurses
        deep = [deep]
    assert system_hash({"system": deep}) == "deep"


def test_one_slot_names_none_and_the_table_stays_bounded() -> None:
    assert SlotTable(1).assign("a", "main") is None
    table = SlotTable(4)
    for n in range(MAX_SESSIONS + 50):
        table.assign(f"s{n}", "main")
        table.assign(f"s{n}", "side")
    assert len(table.mains) <= MAX_SESSIONS
    assert len(table.sides) <= MAX_SESSIONS


def test_lanes() -> None:
    profile = Profile(name="l", kind="llama.cpp", base_url="http://127.0.0.1:8080", model="big",
                      models=ModelMap(small_fast="small"))
    assert lane_of(None, TOOLS, profile) == "main"
    assert lane_of("agent-1", TOOLS, profile) == "side"  # a subagent: Claude Code's agent id header
    assert lane_of(None, {"model": "big", "messages": []}, profile) == "side"  # no tools: a title, a summary
    assert lane_of(None, {**TOOLS, "model": "small"}, profile) == "side"
    same = profile.model_copy(update={"models": ModelMap(small_fast="big")})
    assert lane_of(None, {**TOOLS, "model": "big"}, same) == "main"  # one model for both: tools decide
    assert lane_of(None, "not an object", profile) == "main"


def test_the_slot_is_added_after_every_byte_of_the_request() -> None:
    data = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]},
                      separators=(",", ":")).encode()
    placed = with_slot(data, 1)
    assert placed.startswith(data[:-1])
    assert json.loads(placed) == {**json.loads(data), "id_slot": 1}
    assert json.loads(with_slot(b"{ }\n", 0)) == {"id_slot": 0}
    assert with_slot(b'{"id_slot":3}', 0) == b'{"id_slot":3}'  # the client's own choice stands
    assert with_slot(b"[1]", 0) == b"[1]"


def test_only_llama_cpp_profiles_go_through_the_chat_bridge() -> None:
    local = Profile(name="l", kind="llama.cpp", base_url="http://127.0.0.1:8080/v1", slot_affinity=True)
    assert upstream_protocol(local, "claude") == upstream_protocol(local, "anthropic") == "openai_chat"
    assert bridged(local, "claude")
    assert upstream_protocol(local, "openai_responses") == "openai_responses"  # Codex: its own route
    assert props_url(local) == "http://127.0.0.1:8080/props"
    assert not bridged(local.model_copy(update={"slot_affinity": False}), "claude")
    vllm = Profile(name="v", kind="vllm", base_url="http://127.0.0.1:8000", slot_affinity=True)
    assert upstream_protocol(vllm, "claude") == "anthropic"
    pinned = local.model_copy(update={"protocol": "anthropic"})
    assert upstream_protocol(pinned, "claude") == "anthropic"  # --protocol wins


@dataclass
class _Planned:
    profile: Profile
    protocol: str
    url: str
    body: bytes


def test_a_server_that_does_not_say_its_slots_gets_the_request_unchanged() -> None:
    """No ``/props`` (nothing listens): no ``id_slot``, no error, and the server is not asked again at
    once."""
    dead = f"http://127.0.0.1:{free_port()}"
    profile = Profile(name="l", kind="llama.cpp", base_url=dead, slot_affinity=True)
    planned = _Planned(profile, "openai_chat", dead + "/v1/chat/completions", b'{"model":"m"}')
    row = UsageRow(0.0, "claude", "l", None, "m", None)
    row.session = "s"
    slots = SessionSlots()

    async def run() -> list[bytes]:
        async with aiohttp.ClientSession() as http:
            return [await slots.place(http, planned, row, TOOLS) for _ in range(2)]

    assert asyncio.run(run()) == [b'{"model":"m"}'] * 2
    assert slots.tables == {}


def test_requests_the_option_does_not_cover_are_not_touched() -> None:
    profile = Profile(name="l", kind="llama.cpp", base_url="http://127.0.0.1:9", slot_affinity=True)
    row = UsageRow(0.0, "claude", "l", None, "m", None)
    slots = SessionSlots()

    async def run(planned: _Planned, session: str | None) -> bytes:
        row.session = session
        async with aiohttp.ClientSession() as http:
            return await slots.place(http, planned, row, TOOLS)

    off = profile.model_copy(update={"slot_affinity": False})
    chat, root = "http://127.0.0.1:9/v1/chat/completions", "http://127.0.0.1:9/v1"
    assert asyncio.run(run(_Planned(off, "openai_chat", chat, b"{}"), "s")) == b"{}"
    assert asyncio.run(run(_Planned(profile, "anthropic", root + "/messages", b"{}"), "s")) == b"{}"
    assert asyncio.run(run(_Planned(profile, "openai_chat", root + "/models", b"{}"), "s")) == b"{}"
    assert asyncio.run(run(_Planned(profile, "openai_chat", chat, b"{}"), None)) == b"{}"


def test_cli_session_slots(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["profile", "add", "loc", "--kind", "llama.cpp", "--session-slots"]) == 0
    capsys.readouterr()
    assert main(["profile", "show", "loc"]) == 0
    shown = capsys.readouterr().out
    assert "session slots: on" in shown
    assert "bridged anthropic -> openai_chat through the gateway (for --session-slots: id_slot)" in shown
    assert main(["profile", "edit", "loc", "--no-session-slots"]) == 0
    capsys.readouterr()
    assert main(["profile", "show", "loc"]) == 0
    shown = capsys.readouterr().out
    assert "session slots" not in shown
    assert "Claude Code: anthropic (no bridge)" in shown
    assert main(["profile", "add", "vl", "--kind", "vllm", "--session-slots"]) == 0
    capsys.readouterr()
    assert main(["profile", "show", "vl"]) == 0
    assert "session slots: set, but off: this kind of server has no slots to pin" in capsys.readouterr().out
