"""Session-affine slots (``slot_affinity``, opt-in per profile): an ``id_slot`` per session.

Which servers have slots to pin, and on which route, is ``servers.protocols``' knowledge
(``session_slots``, ``upstream_protocol``). A server started with N slots keeps one cached prompt
per slot and, left to itself, gives a new request the slot whose cached prompt looks most like it.
Claude Code's conversations all start with the same long system prompt and tools, so a second
session (or a subagent) lands on the slot that holds the first one's conversation and overwrites
it; the first one's next turn then re-processes its prompt. With the option on, the gateway names
the slot: each conversation keeps one slot (never two on one slot while there are slots for each),
side requests (a request without tools, the small/fast model's, a subagent that names itself) go to a
slot no conversation holds when there is one. A conversation is a session's requests with one system
prompt: Claude Code 2.1.332 runs a ``context: fork`` skill as a subagent that sends no agent id of its
own, only the session's id, but has its own system prompt and so gets its own slot (measured,
``tests/e2e/test_e2e_session_slots.py``); keyed by session alone it took the main conversation's slot
and evicted it. The measured server
honours ``id_slot`` on ``/v1/chat/completions`` only (``docs/gateway.md``), so such a profile's
Claude Code requests go through the chat bridge.

The slot count is read from the server's ``/props`` (``total_slots``) and kept for a minute; a server
that does not answer gets no ``id_slot`` (the request goes on unchanged: bookkeeping never breaks one).
"""

from __future__ import annotations

import contextlib
import hashlib
import time
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Literal, Protocol

import aiohttp

from kvswitch.core.models import Profile
from kvswitch.gateway.truth.sessions import text_of
from kvswitch.servers.protocols import session_slots

if TYPE_CHECKING:
    from kvswitch.usage.schema import UsageRow


class Planned(Protocol):
    """What ``place`` reads of the gateway's planned request (``service._Planned``)."""

    profile: Profile
    protocol: str
    url: str
    body: bytes

Lane = Literal["main", "side"]
#: how long a server's slot count is trusted (a restart with another ``-np`` is seen within this)
COUNT_TTL_S = 60.0
#: how long a server that did not say its slot count is left alone before it is asked again
FAILED_TTL_S = 5.0
PROPS_TIMEOUT_S = 2.0
#: sessions remembered per server (the least recently seen are forgotten first)
MAX_SESSIONS = 512


#: a conversation: its session, and a hash of its system prompt ("" when the request has none)
Conversation = tuple[str, str]


class SlotTable:
    """The slots of one server and who holds them. Pure: no clock, no I/O (``use`` counts requests)."""

    def __init__(self, total: int):
        self.total = total
        #: conversation → its slot, least recently used first
        self.mains: OrderedDict[Conversation, int] = OrderedDict()
        #: session → slot its side requests last went to
        self.sides: OrderedDict[str, int] = OrderedDict()
        self._used = [0] * total
        self._clock = 0

    def assign(self, session: str, lane: Lane, system: str = "") -> int | None:
        """The slot for ``session``'s request on ``lane`` (``system``: its conversation's system-prompt
        hash); ``None`` with fewer than two slots (nothing to choose: the server's own choice is as good)."""
        if self.total < 2:
            return None
        slot = self._main((session, system)) if lane == "main" else self._side(session)
        self._clock += 1
        self._used[slot] = self._clock
        return slot

    def _least_used(self, slots: list[int]) -> int:
        return min(slots, key=lambda slot: self._used[slot])

    def _main(self, conversation: Conversation) -> int:
        slot = self.mains.get(conversation)
        if slot is not None:
            self.mains.move_to_end(conversation)
            return slot
        held = set(self.mains.values())
        free = [s for s in range(self.total) if s not in held]
        if free:
            # a slot no side request used lately first: the side slot keeps its own cache
            sides = set(self.sides.values())
            slot = self._least_used([s for s in free if s not in sides] or free)
        else:  # every slot holds a conversation: the one idle longest gives its slot up
            _, slot = self.mains.popitem(last=False)
        self.mains[conversation] = slot
        self._forget_oldest()
        return slot

    def _side(self, session: str) -> int:
        held = set(self.mains.values())
        free = [s for s in range(self.total) if s not in held]
        if free:
            kept = self.sides.get(session)
            slot = kept if kept in free else self._least_used(free)
        else:  # every slot holds a conversation: never one of the session's own
            own = {slot for (holder, _), slot in self.mains.items() if holder == session}
            slot = self._least_used([s for s in range(self.total) if s not in own] or list(range(self.total)))
        self.sides[session] = slot
        self.sides.move_to_end(session)
        self._forget_oldest()
        return slot

    def _forget_oldest(self) -> None:
        for kept in (self.mains, self.sides):
            while len(kept) > MAX_SESSIONS:
                kept.popitem(last=False)


def lane_of(agent: str | None, body: Any, profile: Profile) -> Lane:
    """``side`` for a subagent (its own agent id), a request without tools (Claude Code's titles and
    summaries) or one for the small/fast model when the profile names it apart from the main model."""
    if agent:
        return "side"
    if not isinstance(body, dict):
        return "main"
    if not body.get("tools"):
        return "side"
    small = {profile.models.small_fast, profile.models.haiku} - {None, profile.model}
    return "side" if body.get("model") in small else "main"


def system_hash(body: Any) -> str:
    """A short hash of a request's system prompt (Messages ``system``; its text only, so a moved
    ``cache_control`` marker does not make another conversation): what tells a session's conversations
    apart."""
    system = body.get("system") if isinstance(body, dict) else None
    if system is None:
        return ""
    try:
        text = text_of(system)
    except RecursionError:  # a hostile body nested as deep as the JSON reader allows: one conversation
        return "deep"
    return hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=8).hexdigest()


def with_slot(data: bytes, slot: int) -> bytes:
    """``data`` (a JSON object's bytes) with ``"id_slot"`` added as its last member; every earlier byte
    kept. Unchanged when it already names one or is not an object."""
    end = data.rstrip()
    if not end.endswith(b"}") or b'"id_slot"' in data:
        return data
    empty = end[:-1].rstrip().endswith(b"{")
    return end[:-1] + (b"" if empty else b",") + b'"id_slot":' + str(slot).encode() + b"}"


def props_url(profile: Profile) -> str:
    root = profile.base_url.rstrip("/")
    return (root[: -len("/v1")] if root.endswith("/v1") else root) + "/props"


class SessionSlots:
    """The gateway's slot tables, one per server (base URL), and its cached slot counts."""

    def __init__(self) -> None:
        self.tables: dict[str, SlotTable] = {}
        self._checked: dict[str, tuple[float, int | None]] = {}

    async def place(self, http: aiohttp.ClientSession, planned: Planned, row: UsageRow, body: Any) -> bytes:
        """``planned``'s request bytes, with the session's ``id_slot`` when its profile asks for it and the
        request is a chat completion of a known session; unchanged otherwise."""
        profile, data = planned.profile, planned.body
        if not (session_slots(profile) and planned.protocol == "openai_chat"
                and planned.url.endswith("/chat/completions") and row.session):
            return data
        total = await self._total(http, profile)
        if total is None:
            return data
        table = self.tables.get(profile.base_url)
        if table is None or table.total != total:
            table = self.tables[profile.base_url] = SlotTable(total)
        slot = table.assign(row.session, lane_of(row.agent, body, profile), system_hash(body))
        if slot is None:
            return data
        return with_slot(data, slot)

    async def _total(self, http: aiohttp.ClientSession, profile: Profile) -> int | None:
        now = time.monotonic()
        checked = self._checked.get(profile.base_url)
        if checked is not None and now - checked[0] < (COUNT_TTL_S if checked[1] else FAILED_TTL_S):
            return checked[1]
        total: int | None = None
        headers = {"Authorization": f"Bearer {profile.key}"} if profile.key else {}
        with contextlib.suppress(Exception):  # bookkeeping never breaks a request
            async with http.get(props_url(profile), headers=headers,
                                timeout=aiohttp.ClientTimeout(total=PROPS_TIMEOUT_S)) as answer:
                found = (await answer.json(content_type=None)).get("total_slots") if answer.ok else None
                total = found if isinstance(found, int) and found > 0 else None
        self._checked[profile.base_url] = (now, total)
        return total


__all__ = ["SessionSlots", "SlotTable", "lane_of", "system_hash", "with_slot"]
