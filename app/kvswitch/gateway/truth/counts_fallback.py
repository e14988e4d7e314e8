"""The server's own numbers for an answer that carried none, from its ``/metrics`` counters (issue 25).

A local server can stream an answer without the event that holds the prompt's counts (the server
modules say which, and when, beside their idle gauges). Such an answer says nothing of its prompt, but the
server's counters counted it. So, for every conversation request to a local profile whose server has a
counter pair and idle gauges (``servers.request_meters``), the gateway reads the page once as it
forwards the request (not awaited: the request goes out at once): the *before* reading. When the answer
had no counts, it reads the page again once the answer ended, until the counters moved: the *after*
reading; the row waits for it (at most ``AFTER_WAIT_S``) and is stored then.

A difference of counters is one request's numbers only when nothing else ran: both readings show the
server idle (every in-flight gauge at 0), the before reading came back before the answer's first byte
(so it was taken before the request was processed), and no other gateway request to that server was in
flight with this one. A client often sends its next request the moment an answer ends, before the after
reading is asked for: that request's own before reading, taken before it ran, is then this one's after
reading. Otherwise the row keeps no numbers and its note says why; a difference shared by two requests
is no one request's. A request another program sent to the same server in between cannot be told
apart: the note on every row so filled says where its numbers came from.

A page that does not answer, or is no counters page (a server started without its metrics switch
answers 501), is not asked again for ``RETRY_AFTER_S``; the rows meanwhile say why they have no
numbers. A failure here leaves the row as it was; it never touches the answer.

The page is input (issue 39): a counter that is not a finite number from 0 to ``MAX_COUNTER`` makes the
page no counters page (one log line, the page left alone as above), and a difference outside the bounds
an answer's own counts have (``usage.answer.MAX_TOKENS``) fills nothing; the row's note gives the
numbers. A jump of 4e18 once stored ``in 4000000000000000000``, which every later sum overflowed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import aiohttp

from kvswitch import servers
from kvswitch.core.models import Profile
from kvswitch.core.prometheus import metrics_url
from kvswitch.core.redact import mask_url
from kvswitch.gateway.relay.upstream import describe_error
from kvswitch.gateway.truth.pages import BackgroundWork, PageReader, page_values
from kvswitch.usage.answer import MAX_TOKENS
from kvswitch.usage.schema import UsageRow

log = logging.getLogger("kvswitch.gateway.truth.counts_fallback")

#: a page larger than this is not a server's counters and is not read whole
MAX_PAGE_BYTES = 1 << 20
#: one reading's deadline (a page is answered between two batches of the server's work)
READ_TIMEOUT_S = 5.0
#: how long a row without counts waits for the after reading before it is stored as it is
AFTER_WAIT_S = 5.0
#: how long forwarding waits for the before reading's request to be sent (a new connection on loopback
#: takes about a millisecond; the request is not held longer than this)
SENT_WAIT_S = 0.005
#: between two after readings while the counters have not moved yet
POLL_S = 0.05
#: a page that did not answer is asked again after this long
RETRY_AFTER_S = 600.0
#: the largest counter or gauge value taken as a count (a float counts whole numbers exactly up to here)
MAX_COUNTER = float(2**53)
ALONGSIDE = "another request ran on the server at the same time"
FILLED_NOTE = "prompt counts from the server's /metrics (the answer carried none)"


@dataclass(slots=True)
class Reading:
    """One read of the page: the counters, whether the server was idle, and when it came back."""

    values: dict[str, float]
    idle: bool
    at: float


@dataclass(slots=True, eq=False)
class Ticket:
    """One forwarded request's part in its server's bookkeeping."""

    server: _Server
    before: asyncio.Task[Reading | None] | None
    #: the next request's before reading, when it was forwarded before this one's after reading was
    #: asked for: taken before that request ran, it is this one's after reading
    after: asyncio.Task[Reading | None] | None = None
    #: why a difference of the counters cannot be this request's alone (first reason found), or None
    spoiled: str | None = None

    def end(self) -> None:
        """The answer is over (whatever happened to it)."""
        self.server.in_flight.discard(self)


@dataclass(eq=False)
class _Server:
    url: str
    in_flight: set[Ticket] = field(default_factory=set)
    #: ended requests whose rows wait for an after reading
    awaiting: set[Ticket] = field(default_factory=set)
    unavailable_until: float = 0.0
    #: why its page did not answer last time
    why: str = ""
    key: str = field(default="", repr=False)


def _meter(page: dict[str, float]) -> tuple[int, int] | None:
    """(prompt tokens, cached tokens) so far on a page, by the first counter pair it has."""
    for counter, _gauges in servers.request_meters():
        if counter.cached in page and counter.total in page:
            cached, total = page[counter.cached], page[counter.total]
            return round(total + cached if counter.total_excludes_cached else total), round(cached)
    return None


def _gauges() -> tuple[str, ...]:
    return tuple(dict.fromkeys(g for _counter, gauges in servers.request_meters() for g in gauges))


class CountsFallback:
    """The gateway's readings of its local servers' pages, and the rows waiting for them."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self._pages = PageReader(READ_TIMEOUT_S, MAX_PAGE_BYTES)  # says when a reading was sent
        self._clock = clock
        self._servers: dict[str, _Server] = {}
        self._names = {name for counter, gauges in servers.request_meters()
                       for name in (counter.cached, counter.total, *gauges)}
        self._gauges = _gauges()
        self._tickets: dict[int, Ticket] = {}
        #: steps that failed (a bug: logged the first time; the rows keep no numbers from here)
        self.failures = 0
        self._work = BackgroundWork()

    # -- guarded: a bug here costs the row its numbers, never the client its answer ------------------
    def _failed(self, step: str, exc: Exception) -> None:
        self.failures += 1
        if self.failures == 1:
            log.warning("the server's counters not read (%s failed: %s: %s)", step, type(exc).__name__, exc)

    async def forwarding(self, profile: Profile, row: UsageRow) -> None:
        """``_forwarding``, guarded."""
        try:
            await self._forwarding(profile, row)
        except Exception as exc:  # noqa: BLE001 - bookkeeping must never break a request
            self.ended(row)  # a ticket left in flight would spoil every later request's numbers
            self._failed("the reading as a request was forwarded", exc)

    def ended(self, row: UsageRow) -> None:
        """``row``'s answer is over: its upstream's answer ended (the row is being stored), or the
        handler is done whatever happened (its last step)."""
        try:
            ticket = self._tickets.pop(id(row), None)
            if ticket is not None:
                ticket.end()
        except Exception as exc:  # noqa: BLE001 - bookkeeping must never break a request
            self._failed("the end of a request", exc)

    def hold(self, row: UsageRow, first_byte_at: float | None, then: Callable[[UsageRow], None]) -> bool:
        """``_hold``, guarded: False (the row is stored as it is) when it fails."""
        try:
            return self._hold(row, first_byte_at, then)
        except Exception as exc:  # noqa: BLE001 - bookkeeping must never break a request
            self._failed("the reading after an answer without counts", exc)
            return False

    # -- as the request is forwarded ---------------------------------------------------------------
    async def _forwarding(self, profile: Profile, row: UsageRow) -> None:
        """Take the before reading for ``row``'s conversation request to ``profile`` (local profiles
        only); a request failing over to another profile ends its earlier attempt's part.

        Returns once the reading's request is on the wire (at most ``SENT_WAIT_S``, about 0.1 ms on a
        kept-alive connection), so that it reaches the server before the request it precedes."""
        self.ended(row)
        if not profile.is_local or not profile.base_url or not self._names:
            return
        url = metrics_url(profile.base_url)
        server = self._servers.get(url)
        if server is None:
            server = self._servers[url] = _Server(url)
        resting = self._clock() < server.unavailable_until  # it did not answer lately: not asked now
        server.key = profile.key or ""  # a server started with a key asks for it on /metrics too
        sent = asyncio.Event()
        before = None if resting else self._work.keep(self._read(server, sent))
        ticket = Ticket(server, before)
        for waiting in server.awaiting:
            waiting.after = waiting.after or before
        for other in server.in_flight:
            other.spoiled = other.spoiled or ALONGSIDE
            ticket.spoiled = ticket.spoiled or ALONGSIDE
        server.in_flight.add(ticket)
        self._tickets[id(row)] = ticket
        if before is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(sent.wait(), SENT_WAIT_S)

    # -- a row whose answer had no counts ----------------------------------------------------------
    def _hold(self, row: UsageRow, first_byte_at: float | None, then: Callable[[UsageRow], None]) -> bool:
        """The upstream's answer to ``row`` ended (its row is being stored): when it lacked the prompt's
        counts and its server can be read, fill it in the background and hand it to ``then`` (always,
        filled or not); True when it was taken."""
        ticket = self._tickets.pop(id(row), None)
        if ticket is None:
            return False
        ticket.end()  # the upstream's answer ended: what the server runs next is another request
        if row.input_tokens is not None or row.status != 200:
            return False
        self._work.keep(self._fill(row, ticket, first_byte_at, then))  # runs only after this returns
        ticket.server.awaiting.add(ticket)
        return True

    async def drain(self) -> None:
        """Let the rows waiting for their numbers finish, then close the readers' connections (the
        gateway is stopping)."""
        await self._work.drain(AFTER_WAIT_S + READ_TIMEOUT_S)
        await self._pages.close()

    async def _fill(self, row: UsageRow, ticket: Ticket, first_byte_at: float | None,
                    then: Callable[[UsageRow], None]) -> None:
        try:
            why = await self._numbers(row, ticket, first_byte_at)
            if why is not None:
                row.notes = "; ".join(filter(None, [row.notes, f"prompt counts not known: {why}"]))[:2000]
        except Exception as exc:  # noqa: BLE001 - bookkeeping must never break a request
            self._failed("filling a row from the server's counters", exc)  # one line, not one per row
        finally:
            ticket.server.awaiting.discard(ticket)
            then(row)

    async def _numbers(self, row: UsageRow, ticket: Ticket, first_byte_at: float | None) -> str | None:
        """Fill ``row`` from the two readings, or say why not."""
        before = await ticket.before if ticket.before is not None else None
        if before is None:
            return f"{mask_url(ticket.server.url)} did not answer ({ticket.server.why})"
        if ticket.spoiled is not None:
            return ticket.spoiled
        if not before.idle:
            return "the server was busy when the request was forwarded"
        if first_byte_at is not None and before.at > first_byte_at:
            return "the server's counters came back after the answer began"
        start = _meter(before.values)
        assert start is not None  # ``_read`` returns no reading without them
        deadline = self._clock() + AFTER_WAIT_S
        while True:
            if ticket.spoiled is not None:
                return ticket.spoiled
            adopted = ticket.after is not None
            after = await (ticket.after if ticket.after is not None else self._read(ticket.server))
            if after is None:
                return f"{mask_url(ticket.server.url)} did not answer ({ticket.server.why})"
            end = _meter(after.values)
            if end is not None and after.idle and end != start:
                prompt, cached = end[0] - start[0], end[1] - start[1]
                if not 0 < prompt <= MAX_TOKENS or not 0 <= cached <= prompt:
                    log.info("%s: the counters moved by %d prompt and %d cached tokens; not a request's "
                             "numbers (0..%d)", mask_url(ticket.server.url), prompt, cached, MAX_TOKENS)
                    return f"the server's counters moved by {prompt} prompt and {cached} cached tokens"
                row.input_tokens, row.cached_tokens = prompt, cached
                row.notes = "; ".join(filter(None, [row.notes, FILLED_NOTE]))[:2000]
                return None
            if adopted:  # the next request's reading found the server busy: the two cannot be told apart
                return "the next request reached the server before its counters were read"
            if self._clock() >= deadline:
                return f"the server's counters did not move within {AFTER_WAIT_S:.0f} s of the answer's end"
            await asyncio.sleep(POLL_S)

    # -- the page ----------------------------------------------------------------------------------
    async def _read(self, server: _Server, sent: asyncio.Event | None = None) -> Reading | None:
        """One reading, or None (and the page is left alone for a while) when it does not answer;
        ``sent`` is set once its request is on the wire (or it failed)."""
        try:
            text = await self._pages.get(server.url, server.key, sent)
        except (aiohttp.ClientError, OSError, TimeoutError, ValueError) as exc:
            if sent is not None:
                sent.set()
            server.unavailable_until = self._clock() + RETRY_AFTER_S
            server.why = describe_error(exc) if not isinstance(exc, ValueError) else str(exc)
            log.info("%s not read (%s); asked again in %.0f min", mask_url(server.url), server.why,
                     RETRY_AFTER_S / 60)
            return None
        values = await page_values(text, self._names)
        present = [name for name in self._gauges if name in values]
        odd = next((name for name, value in values.items()
                    if not (math.isfinite(value) and 0 <= value <= MAX_COUNTER)), None)
        if odd is not None or _meter(values) is None or not present:
            server.unavailable_until = self._clock() + RETRY_AFTER_S
            server.why = (f"{odd} is {values[odd]!r}, not a count" if odd is not None
                          else "the page has no prompt counters and no in-flight gauges")
            if odd is not None:
                log.info("%s not read (%s); asked again in %.0f min", mask_url(server.url), server.why,
                         RETRY_AFTER_S / 60)
            return None
        return Reading(values, all(values[name] == 0 for name in present), self._clock())
