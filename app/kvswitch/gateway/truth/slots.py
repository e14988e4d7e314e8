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

``/props`` is the server's input to the gateway (issue 39): it is read streamed and at most
``MAX_PROPS_BYTES`` (a 1.5 GB page once peaked at 691 MB), a slot count above ``MAX_SLOTS`` is no count
(20,000,000 once cost 5.7-8.5 s of the event loop per request and 1.1 GB; 2^62 a MemoryError, aiohttp's
bare 500 on every request), and a table keeps memory for the slots it handed out only. A server that
answers 400 to a request given an ``id_slot`` gets it once more without, and no ``id_slot`` for
``REFUSED_TTL_S`` when the 400 named ``id_slot`` or the request went through without it.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal, Protocol

import aiohttp

from kvswitch.core.models import Profile
from kvswitch.core.redact import mask_text, mask_url
from kvswitch.core.strictparse import loads as strict_json
from kvswitch.gateway.relay.attempt import Attempt
from kvswitch.gateway.relay.upstream import read_error_body
from kvswitch.gateway.truth.sessions import text_of
from kvswitch.servers.protocols import session_slots

if TYPE_CHECKING:
    from kvswitch.usage.schema import UsageRow


class Planned(Protocol):
    """What ``place`` reads of the gateway's planned request (``relay.plan.Planned``)."""

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
#: the most slots taken from ``/props``: the server runs one sequence per slot, each with its own
#: share of the context; a larger count is no server's (it is taken as unknown, and no slot is named)
MAX_SLOTS = 1024
#: ``/props`` is a small JSON object (a few KB); a larger answer is not read on
MAX_PROPS_BYTES = 1 << 20
#: how long a server that refused an ``id_slot`` gets none
REFUSED_TTL_S = 600.0

log = logging.getLogger("kvswitch.gateway.truth.slots")


#: a conversation: its session, and a hash of its system prompt ("" when the request has none)
Conversation = tuple[str, str]


class SlotTable:
    """The slots of one server and who holds them. Pure: no clock, no I/O (``use`` counts requests).

    Its memory grows with the slots it handed out, never with ``total``: a slot never used counts as
    used longest ago, and the lowest-numbered such slot is found by looking past the ones in use."""

    def __init__(self, total: int):
        self.total = total
        #: conversation → its slot, least recently used first
        self.mains: OrderedDict[Conversation, int] = OrderedDict()
        #: session → slot its side requests last went to
        self.sides: OrderedDict[str, int] = OrderedDict()
        #: slot → when it was last handed out (by ``_clock``); a slot absent here was never used
        self._used: dict[int, int] = {}
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

    def _least_used(self, excluded: set[int]) -> int | None:
        """The slot used longest ago (a never-used one first, the lowest number) outside ``excluded``."""
        slot = 0
        while slot < self.total and (slot in excluded or slot in self._used):  # at most len of both
            slot += 1
        if slot < self.total:
            return slot
        used = [s for s in self._used if s not in excluded]
        return min(used, key=self._used.__getitem__) if used else None

    def _main(self, conversation: Conversation) -> int:
        slot = self.mains.get(conversation)
        if slot is not None:
            self.mains.move_to_end(conversation)
            return slot
        held = set(self.mains.values())
        # a free slot no side request used lately first: the side slot keeps its own cache
        free = self._least_used(held | set(self.sides.values()))
        if free is None:
            free = self._least_used(held)
        if free is None:  # every slot holds a conversation: the one idle longest gives its slot up
            _, free = self.mains.popitem(last=False)
        self.mains[conversation] = free
        self._forget_oldest()
        return free

    def _side(self, session: str) -> int:
        held = set(self.mains.values())
        kept = self.sides.get(session)
        slot = kept if kept is not None and kept not in held else self._least_used(held)
        if slot is None:  # every slot holds a conversation: never one of the session's own
            own = {slot for (holder, _), slot in self.mains.items() if holder == session}
            slot = self._least_used(own)
            if slot is None:
                slot = self._least_used(set())
        assert slot is not None  # total >= 2: some slot was used or is free
        self.sides[session] = slot
        self.sides.move_to_end(session)
        self._forget_oldest()
        return slot

    def _forget_oldest(self) -> None:
        for kept in (self.mains, self.sides):
            while len(kept) > MAX_SESSIONS:
                kept.popitem(last=False)
        if len(self._used) > 4 * MAX_SESSIONS:  # only past MAX_SLOTS: a slot no one holds is forgotten
            held = set(self.mains.values()) | set(self.sides.values())
            self._used = {slot: when for slot, when in self._used.items() if slot in held}


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
        #: base URL → until when it gets no ``id_slot`` (it refused one)
        self._refused: dict[str, float] = {}
        #: what was logged about each server (each thing once)
        self._said: dict[str, str] = {}

    def _say(self, base_url: str, what: str) -> None:
        if self._said.get(base_url) != what:
            self._said[base_url] = what
            log.warning("session slots for %s: %s", mask_url(base_url), what)

    async def place(self, http: aiohttp.ClientSession, planned: Planned, row: UsageRow, body: Any) -> bytes:
        """``planned``'s request bytes, with the session's ``id_slot`` when its profile asks for it and the
        request is a chat completion of a known session; unchanged otherwise (and on any fault here)."""
        try:
            return await self._place(http, planned, row, body)
        except Exception as exc:  # noqa: BLE001 - bookkeeping never breaks a request
            self._say(planned.profile.base_url, f"no id_slot ({type(exc).__name__}: {exc})")
            return planned.body

    async def _place(self, http: aiohttp.ClientSession, planned: Planned, row: UsageRow, body: Any) -> bytes:
        profile, data = planned.profile, planned.body
        if not (session_slots(profile) and planned.protocol == "openai_chat"
                and planned.url.endswith("/chat/completions") and row.session):
            return data
        if time.monotonic() < self._refused.get(profile.base_url, 0.0):
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

    async def send(self, planned: Planned, unslotted: bytes, attempt: Attempt,
                   send: Callable[[bytes], Awaitable[aiohttp.ClientResponse | None]],
                   ) -> aiohttp.ClientResponse | None:
        """``send(planned.body)``; when that body carries an ``id_slot`` KV Switch added and the server
        answers 400, once more with ``unslotted`` (the request as it was), and the server gets no
        ``id_slot`` for a while when its 400 named it or the request went through without it."""
        response = await send(planned.body)
        if response is None or response.status != 400 or planned.body == unslotted:
            return response
        refusal = await read_error_body(response, attempt)
        planned.body = unslotted
        attempt.status, attempt.error_body = None, b""
        response = await send(unslotted)
        if b"id_slot" in refusal or (response is not None and response.status < 400):
            base = planned.profile.base_url
            self._refused[base] = time.monotonic() + REFUSED_TTL_S
            self.tables.pop(base, None)
            words = mask_text(refusal[:200].decode("utf-8", "replace"))  # it may echo anything
            self._say(base, f"the server refused id_slot (HTTP 400: {words!r}); sent without it, and "
                            f"no id_slot for {REFUSED_TTL_S / 60:.0f} min")
        return response

    async def _total(self, http: aiohttp.ClientSession, profile: Profile) -> int | None:
        now = time.monotonic()
        checked = self._checked.get(profile.base_url)
        if checked is not None and now - checked[0] < (COUNT_TTL_S if checked[1] else FAILED_TTL_S):
            return checked[1]
        total: int | None = None
        headers = {"Authorization": f"Bearer {profile.key}"} if profile.key else {}
        with contextlib.suppress(Exception):  # bookkeeping never breaks a request
            found = await _props_slots(http, props_url(profile), headers)
            if isinstance(found, int) and not isinstance(found, bool) and found > 0:
                if found > MAX_SLOTS:
                    self._say(profile.base_url, f"/props says total_slots {found}, more than any server "
                                                f"runs (at most {MAX_SLOTS} taken): no id_slot")
                else:
                    total = found
        self._checked[profile.base_url] = (now, total)
        return total


async def _props_slots(http: aiohttp.ClientSession, url: str, headers: dict[str, str]) -> object:
    """``total_slots`` of the server's ``/props``, read streamed and at most ``MAX_PROPS_BYTES``
    (``ValueError`` beyond, or for an answer that is not a JSON object)."""
    async with http.get(url, headers=headers, timeout=aiohttp.ClientTimeout(total=PROPS_TIMEOUT_S)) as answer:
        if not answer.ok:
            return None
        data = bytearray()
        async for piece in answer.content.iter_chunked(64 << 10):
            data += piece
            if len(data) > MAX_PROPS_BYTES:
                raise ValueError(f"/props over {MAX_PROPS_BYTES} bytes")
    props = strict_json(bytes(data), max_bytes=MAX_PROPS_BYTES)
    if not isinstance(props, dict):
        raise ValueError("/props is not a JSON object")
    return props.get("total_slots")


__all__ = ["SessionSlots", "SlotTable", "lane_of", "system_hash", "with_slot"]
