"""Which cache tier served each request's prompt, in the gateway's record (issue 37): the server's own
prefix cache, the tier's first level (CPU), its second-level adapters (disk, Redis, ...), and what was
computed.

The numbers are the counters' own: the server's ``/metrics`` and the tier's own ``/metrics``, read right
before a request goes out and again once its answer ended, and split by the tier's own rule
(``CacheTier.split``, the same ``verify`` uses). Nothing is inferred.

Where the tier's page is, is found once per upstream (``servers.tier_sources``: the marker on the
server's page, then a scan of the machine's processes, on a worker thread) and kept; the first request
to an upstream starts that search and is not held for it, so its row has no split. A page that does not
answer is left alone for ``RETRY_AFTER_S`` and the tier is looked for again then (its process may have
moved to another port).

A difference of counters is one request's only when nothing else ran in between. The tier counts a
lookup as soon as the server schedules the request, well before any byte of the answer, so the tier's
*before* reading must have come back before the request is forwarded: forwarding waits for it, at most
``BEFORE_WAIT_S`` (one loopback read; measured in docs/gateway.md), and a request that went out without
it gets no split. The server counts a prompt only with its first output, so its before reading is only
sent as the request goes and must have come back before the answer's first byte. Any other gateway
request to the same upstream in flight with this one spoils both (the row's note says so). The *after*
readings are taken in the background once the answer ended, until the server's prompt counter moved;
when the next request is forwarded first, its own before readings are this one's after readings. The
row waits for them (``AFTER_WAIT_S`` at most), never the answer. A request another program sent to the
server in between cannot be told apart by the counters alone, so the server's prompt-token delta must
equal the prompt the answer itself reported; when it does not, the row keeps no split and says why. A
failure here costs the row its split, never the client its answer.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from kvswitch import servers
from kvswitch.core.models import Profile
from kvswitch.core.prometheus import metrics_url
from kvswitch.core.redact import mask_url
from kvswitch.core.strictparse import loads as strict_json
from kvswitch.gateway.truth.pages import BackgroundWork, Page, PageReader, page_values
from kvswitch.servers.base import CacheTier
from kvswitch.servers.tier_sources import TierSource, connected_tiers
from kvswitch.usage.answer import MAX_TOKENS
from kvswitch.usage.schema import UsageRow

log = logging.getLogger("kvswitch.gateway.truth.tier_record")

#: a page larger than this is not a counters page and is not read whole
MAX_PAGE_BYTES = 2 << 20
#: one page read's deadline; a page that does not answer within it is left alone for ``RETRY_AFTER_S``
READ_TIMEOUT_S = 2.0
#: how long forwarding waits for the tier's before reading (docs/gateway.md: milliseconds, measured)
BEFORE_WAIT_S = 0.25
#: how long a row waits for its after readings before it is stored without a split
AFTER_WAIT_S = 5.0
#: between two after readings while the server's counters have not moved yet
POLL_S = 0.1
#: a page that did not answer (or an upstream with no tier) is looked at again after this long
RETRY_AFTER_S = 60.0
#: rows whose split is being read, kept until their store claims them (a bound, never reached in use)
MAX_PENDING = 1024
ALONGSIDE = "another request to the same server ran at the same time"
NOTE = "prompt tokens by tier not known"


@dataclass(eq=False)
class _Upstream:
    url: str
    key: str = field(default="", repr=False)
    source: TierSource | None = None
    settings: Any = None
    #: when the tier was last looked for (monotonic), and the search under way
    checked_at: float | None = None
    search: asyncio.Task[None] | None = None
    unavailable_until: float = 0.0
    why: str = ""
    #: requests forwarded so far (an after reading is this request's only when no other went out meanwhile)
    forwarded: int = 0
    in_flight: set[_Ticket] = field(default_factory=set)
    awaiting: set[_Ticket] = field(default_factory=set)
    #: requests in flight without a ticket (sent while the tier was looked for, or its page was resting)
    untracked: set[int] = field(default_factory=set)


@dataclass(eq=False)
class _Ticket:
    upstream: _Upstream
    tier: CacheTier
    server: asyncio.Task[Page | None]
    tier_page: asyncio.Task[Page | None]
    #: the tier's page this ticket reads
    tier_url: str
    #: the tier's before reading had not come back when the request went out
    late: bool = False
    #: when the answer's first byte came (the server's before reading must have come back before it)
    first_byte: float | None = None
    spoiled: str | None = None
    #: the next request forwarded before this one's after reading: its before readings are this one's after
    next: _Ticket | None = None


class TierRecord:
    """The gateway's reads of its local upstreams' and their tiers' pages, and the rows waiting for them."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self._clock = clock
        self._pages = PageReader(READ_TIMEOUT_S, MAX_PAGE_BYTES)
        self._upstreams: dict[str, _Upstream] = {}
        self._tickets: dict[int, _Ticket] = {}
        self._untracked: dict[int, _Upstream] = {}
        self._pending: OrderedDict[int, asyncio.Task[None]] = OrderedDict()
        self._work = BackgroundWork()
        #: steps that failed (a bug: logged the first time)
        self.failures = 0

    # -- guarded: a bug here costs the row its split, never the client its answer -------------------
    def _failed(self, step: str, exc: Exception) -> None:
        self.failures += 1
        if self.failures == 1:
            log.warning("prompt tokens by tier not read (%s failed: %s: %s)", step, type(exc).__name__, exc)

    async def forwarding(self, profile: Profile, row: UsageRow) -> None:
        """Before ``row``'s conversation request goes to ``profile``: the before readings, when its
        server has a tier connected (waits at most ``BEFORE_WAIT_S``)."""
        try:
            await self._forwarding(profile, row)
        except Exception as exc:  # noqa: BLE001 - bookkeeping must never break a request
            self.ended(row)
            self._failed("the reading as a request was forwarded", exc)

    def answered(self, row: UsageRow, first_byte: float | None) -> None:
        """The upstream's answer to ``row`` ended (its first byte at ``first_byte``, ``time.monotonic``):
        read the pages again in the background (a 200 only)."""
        try:
            self._untrack(row)
            ticket = self._tickets.pop(id(row), None)
            if ticket is None:
                return
            ticket.first_byte = first_byte
            ticket.upstream.in_flight.discard(ticket)
            if row.status != 200:
                return
            ticket.upstream.awaiting.add(ticket)
            self._pending[id(row)] = self._work.keep(self._fill(row, ticket))
            while len(self._pending) > MAX_PENDING:
                self._pending.popitem(last=False)
        except Exception as exc:  # noqa: BLE001 - bookkeeping must never break a request
            self._failed("the end of an answer", exc)

    def later(self, row: UsageRow, then: Callable[[UsageRow], object]) -> bool:
        """Hand ``row`` to ``then`` once its split is read (True), or at once when none is being read
        (False: the caller stores it now)."""
        try:
            task = self._pending.pop(id(row), None)
            if task is None:
                return False
            task.add_done_callback(lambda _task: then(row))
            return True
        except Exception as exc:  # noqa: BLE001 - bookkeeping must never break a request
            self._failed("holding a row for its split", exc)
            return False

    def ended(self, row: UsageRow) -> None:
        """``row``'s request is over, whatever happened (the handler's last step, or a failover)."""
        try:
            self._untrack(row)
            ticket = self._tickets.pop(id(row), None)
            if ticket is not None:
                ticket.upstream.in_flight.discard(ticket)
        except Exception as exc:  # noqa: BLE001 - bookkeeping must never break a request
            self._failed("the end of a request", exc)

    def _untrack(self, row: UsageRow) -> None:
        upstream = self._untracked.pop(id(row), None)
        if upstream is not None:
            upstream.untracked.discard(id(row))

    def _track(self, upstream: _Upstream, row: UsageRow) -> None:
        """A request to ``upstream`` that gets no split still moves its counters: it spoils the requests
        in flight, and those whose after readings are not taken yet."""
        upstream.forwarded += 1
        for other in upstream.in_flight:
            other.spoiled = other.spoiled or ALONGSIDE
        for waiting in upstream.awaiting:
            if waiting.next is None:
                waiting.spoiled = waiting.spoiled or "the next request went out before its counters were read"
        upstream.untracked.add(id(row))
        self._untracked[id(row)] = upstream

    async def drain(self) -> None:
        """Let the rows waiting for their split finish, then close the readers' connections."""
        await self._work.drain(AFTER_WAIT_S + 2 * READ_TIMEOUT_S)
        await self._pages.close()

    # -- as the request is forwarded ---------------------------------------------------------------
    async def _forwarding(self, profile: Profile, row: UsageRow) -> None:
        self.ended(row)  # an earlier attempt of a request failing over
        if not profile.is_local or not profile.base_url:
            return
        server = servers.find(profile.kind.value)
        if server is None or not any(tier.split is not None for tier in server.cache_tiers):
            return
        url = metrics_url(profile.base_url)
        upstream = self._upstreams.get(url)
        if upstream is None:
            upstream = self._upstreams[url] = _Upstream(url)
        upstream.key = profile.key or ""
        now = self._clock()
        if now < upstream.unavailable_until:  # a page did not answer lately: left alone, not waited for
            self._track(upstream, row)
            return
        stale = upstream.checked_at is None or (upstream.source is None and now - upstream.checked_at
                                                > RETRY_AFTER_S)
        if stale and upstream.search is None:
            upstream.search = self._work.keep(self._look_for_tier(upstream, profile))
        source = upstream.source
        if source is None or source.tier.split is None:
            self._track(upstream, row)
            return
        upstream.forwarded += 1
        keep = self._work.keep
        ticket = _Ticket(upstream, source.tier, keep(self._read(upstream, upstream.url, upstream.key)),
                         keep(self._read(upstream, source.metrics_url)), source.metrics_url)
        for waiting in upstream.awaiting:
            waiting.next = waiting.next or ticket
        for other in upstream.in_flight:
            other.spoiled = other.spoiled or ALONGSIDE
            ticket.spoiled = ticket.spoiled or ALONGSIDE
        if upstream.untracked:
            ticket.spoiled = ticket.spoiled or ALONGSIDE
        upstream.in_flight.add(ticket)
        self._tickets[id(row)] = ticket
        # The tier counts the lookup as the server schedules the request: its reading must be back before the
        # request goes. The server counts the prompt only with the first output, so its reading need only be
        # back before the answer's first byte (checked after; it costs the request nothing)
        _done, waiting_for = await asyncio.wait([ticket.tier_page], timeout=BEFORE_WAIT_S)
        ticket.late = bool(waiting_for)

    async def _look_for_tier(self, upstream: _Upstream, profile: Profile) -> None:
        """Which tier the server has connected and where its page is (a process scan, on a thread)."""
        try:
            page = await self._read(upstream, upstream.url, upstream.key, remember=False)
            found = (await asyncio.to_thread(connected_tiers, profile.kind.value, page.values,
                                             profile.base_url or "")) if page is not None else []
            source = next((s for s in found if s.tier.split is not None), None)
            upstream.settings = await self._settings(source) if source is not None else None
            upstream.source = source
            if source is not None:
                log.info("%s: %s's counters at %s", mask_url(upstream.url), source.tier.label,
                         mask_url(source.metrics_url))
        except Exception as exc:  # noqa: BLE001 - bookkeeping must never break a request
            self._failed("looking for the server's cache tier", exc)
        finally:
            upstream.checked_at = self._clock()
            upstream.search = None

    async def _settings(self, source: TierSource) -> Any:
        """The tier's settings from its own pages (its chunk size), or None."""
        tier = source.tier
        if tier.settings is None or not tier.settings_routes:
            return None
        root = source.metrics_url.removesuffix("/metrics")
        pages = []
        for route in tier.settings_routes:
            try:  # a page it lacks leaves that setting unknown, never the tier unread
                pages.append(strict_json(await self._pages.get(root + route, "") or ""))
            except (aiohttp.ClientError, OSError, TimeoutError, ValueError):
                pages.append(None)
        return tier.settings(pages) if pages and pages[0] is not None else None

    # -- once the answer ended ---------------------------------------------------------------------
    async def _fill(self, row: UsageRow, ticket: _Ticket) -> None:
        try:
            why = await self._split(row, ticket)
            if why is not None:
                row.notes = "; ".join(filter(None, [row.notes, f"{NOTE}: {why}"]))[:2000]
        except Exception as exc:  # noqa: BLE001 - bookkeeping must never break a request
            self._failed("reading a request's split", exc)
        finally:
            ticket.upstream.awaiting.discard(ticket)

    async def _split(self, row: UsageRow, ticket: _Ticket) -> str | None:
        """Set ``row.tiers`` from the readings around its request, or say why not."""
        upstream = ticket.upstream
        before, tier_before = await ticket.server, await ticket.tier_page
        if ticket.late:
            return f"the counters were not read within {BEFORE_WAIT_S:g} s before the request went out"
        if before is None or tier_before is None:
            return upstream.why
        if ticket.first_byte is None or before.at > ticket.first_byte:
            return "the server's counters came back after the answer began"
        deadline = self._clock() + AFTER_WAIT_S
        while True:
            if ticket.spoiled is not None:
                return ticket.spoiled
            pages, adopted = await self._after(ticket)
            if pages is None:
                return upstream.why or "the next request went out before the counters were read"
            after, tier_after = pages
            counter = ticket.tier.server_prompt_tokens
            moved = after.values.get(counter, 0.0) - before.values.get(counter, 0.0)
            if moved > 0:
                return self._fill_row(row, ticket, before, after, tier_before, tier_after)
            if adopted:
                return "the next request reached the server before its counters moved"
            if self._clock() >= deadline:
                return f"the server's counters did not move within {AFTER_WAIT_S:g} s of the answer's end"
            await asyncio.sleep(POLL_S)

    async def _after(self, ticket: _Ticket) -> tuple[tuple[Page, Page] | None, bool]:
        """The after readings: the next request's before readings when it went out first, else a new
        pair (dropped for the next request's if one went out while they were read)."""
        upstream = ticket.upstream
        if ticket.next is None:
            count = upstream.forwarded
            server, tier = await asyncio.gather(self._read(upstream, upstream.url, upstream.key),
                                                self._read(upstream, ticket.tier_url))
            if upstream.forwarded == count:
                return ((server, tier) if server is not None and tier is not None else None), False
        following = ticket.next
        if following is None or following.late:
            return None, True
        server, tier = await following.server, await following.tier_page
        return ((server, tier) if server is not None and tier is not None else None), True

    def _fill_row(self, row: UsageRow, ticket: _Ticket, before: Page, after: Page, tier_before: Page,
                  tier_after: Page) -> str | None:
        counter = ticket.tier.server_prompt_tokens
        prompt = round(after.values.get(counter, 0.0) - before.values.get(counter, 0.0))
        if row.input_tokens is not None and prompt != row.input_tokens:
            return (f"the server counted {prompt} prompt tokens, the answer {row.input_tokens}: another "
                    "request ran on the server at the same time")
        if ticket.tier.split is None:
            return None
        split = ticket.tier.split(before.values, after.values, tier_before.values, tier_after.values,
                                  tier_before.text, tier_after.text, ticket.upstream.settings)
        if split is None:
            return f"{ticket.tier.label}'s page lacks its per-tier counters"
        data = split.to_json()
        counts = [v for v in data.values() if isinstance(v, int | float) and not isinstance(v, bool)]
        if any(not 0 <= v <= MAX_TOKENS for v in counts):
            return f"the counters moved by {data}, not one request's numbers"
        row.tiers = json.dumps(data, separators=(",", ":"))
        return None

    # -- the pages ---------------------------------------------------------------------------------
    async def _read(self, upstream: _Upstream, url: str, key: str = "", remember: bool = True) -> Page | None:
        """One page, or None (the upstream's tier is then left alone for a while and looked for again)."""
        try:
            text = await self._pages.get(url, key)
        except (aiohttp.ClientError, OSError, TimeoutError, ValueError) as exc:
            upstream.why = f"{mask_url(url)} did not answer ({type(exc).__name__}: {exc})"[:300]
            if remember:
                upstream.unavailable_until = self._clock() + RETRY_AFTER_S
                upstream.checked_at = None  # its process may have moved: look for it again
                upstream.source = None
            log.info("%s; asked again in %.0f s", upstream.why, RETRY_AFTER_S)
            return None
        values = await page_values(text)
        odd = next((name for name, value in values.items() if not math.isfinite(value)), None)
        if odd is not None:
            upstream.why = f"{mask_url(url)}: {odd} is {values[odd]!r}, not a count"
            return None
        return Page(values, text, self._clock())

