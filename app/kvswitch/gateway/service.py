"""The gateway mode: check the local token, pick the profile the routing state (or the URL) names,
forward, fail over before the first byte, and record usage.

The routing state and the profiles are re-read when their files change (one ``stat`` each per
request), so ``kvswitch use OTHER`` reaches the next request of a running session without a restart.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from functools import partial
from typing import Any

from aiohttp import web

from kvswitch.core.errors import KvSwitchError
from kvswitch.core.gateway_config import (
    IDENTITY_PATH,
    Routes,
    RoutesError,
    read_routes,
    routes_file,
    token_matches,
    usage_db,
)
from kvswitch.core.models import Profile, WireProtocol
from kvswitch.core.paths import AppPaths
from kvswitch.core.redact import mask_text, mask_url
from kvswitch.core.store import ProfileStore
from kvswitch.gateway.bridges import (
    Bridge,
    BridgeRequestError,
    ResponseConverter,
)
from kvswitch.gateway.relay import model_routes
from kvswitch.gateway.relay.failover import CircuitBreaker, retryable
from kvswitch.gateway.relay.forward import (
    Attempt,
    BodyRefused,
    Limits,
    deadline_message,
    limits_from_settings,
    open_upstream,
    parse_json_body,
    read_body,
    read_error_body,
    refuse,
    relay,
    upstream_headers,
)
from kvswitch.gateway.relay.identity import INSTANCE, LocalToken, identity_answer, offered_token
from kvswitch.gateway.relay.plan import Planned, plan_request
from kvswitch.gateway.relay.routing import (
    Route,
    key_headers,
    parse_route,
    upstream_protocol,
)
from kvswitch.gateway.relay.server import Handler
from kvswitch.gateway.relay.stream_end import ending_for
from kvswitch.gateway.truth import slots
from kvswitch.gateway.truth.counts_fallback import CountsFallback
from kvswitch.gateway.truth.live_record import CacheTruth
from kvswitch.gateway.truth.row_numbers import RowNumbers
from kvswitch.gateway.truth.server_notes import ServerNotes
from kvswitch.gateway.truth.tier_record import TierRecord
from kvswitch.usage.retention import retention_from_settings
from kvswitch.usage.schema import UsageRow
from kvswitch.usage.store import UsageStore

log = logging.getLogger("kvswitch.gateway.usage")

#: the client credentials the gateway consumes (the local token) and never forwards
CLIENT_AUTH_HEADERS = ("x-api-key", "authorization")
STATUS_PATH = "/_kvswitch/status"
#: how long an answer's end may wait for its usage row while the writer keeps up (a write is tens of µs)
ROW_WAIT_S = 0.25
#: a request body at least this long is parsed on a worker thread (850 KB took 74 ms on the loop)
THREAD_PARSE = 128 << 10


class GatewayHandler(Handler):
    """Routes every request of ``/claude``, ``/codex/v1`` and ``/p/NAME`` (``relay.routing``)."""

    def __init__(self, paths: AppPaths, limits: Limits | None = None, breaker: CircuitBreaker | None = None,
                 notes: ServerNotes | None = None):
        self.paths = paths
        self.limits = limits or limits_from_settings(paths)
        self.breaker = breaker or CircuitBreaker()
        self.token = LocalToken(paths)
        self.store = ProfileStore(paths)
        self._profiles: dict[str, Profile] | None = None
        #: (profile, client protocol) → protocol spoken upstream, for the current copy of the profiles
        self._protocols: dict[tuple[str, str], WireProtocol] = {}
        self._routes = Routes()
        self._routes_signature: tuple[int, int] | None = None
        #: never raises: a broken file is set aside (``usage.notice`` says so), a failing one is counted
        self.usage = UsageStore(usage_db(paths), retention=retention_from_settings(paths))
        #: the live cache record (client, session, verdict, reason) of every request
        self.notes = notes  # what the servers said in the logs their profiles follow (control closes them)
        self.cache_truth = CacheTruth(notes=notes)
        self.numbers = RowNumbers(paths.config_dir, self.cache_truth)
        #: the prompt's counts from the server's /metrics when its answer carried none
        self.counts = CountsFallback()
        #: the prompt by cache tier (the server's own prefix cache, the tier's levels, computed), from the
        #: counters
        self.tiers = TierRecord()
        #: the profile that served each client's last request (status, tray)
        self.serving: dict[str, str] = {}
        self.slots = slots.SessionSlots()  # ``id_slot`` per session, where a profile asks (``slot_affinity``)

    async def cleanup(self) -> None:
        await self.counts.drain()  # rows waiting for the server's counters
        await self.tiers.drain()  # rows waiting for the tiers' counters
        await self.cache_truth.remeasure.drain()  # new conversations being measured
        await asyncio.to_thread(self.usage.close)  # writes the rows handed over, off the event loop

    # -- state --------------------------------------------------------------------------------------
    def routes(self) -> Routes:
        """The routing state, re-read when its file changed (a bad file keeps the last good one)."""
        try:
            info = os.stat(routes_file(self.paths))
            signature: tuple[int, int] | None = (info.st_mtime_ns, info.st_size)
        except OSError:
            signature = None
        if signature != self._routes_signature:
            with contextlib.suppress(RoutesError):
                self._routes = read_routes(self.paths)
                self._routes_signature = signature
        return self._routes

    def profiles(self) -> dict[str, Profile]:
        """The profiles by name, in the user's order: copied from the store once per change of its
        files, not per request (a copy costs about 80 µs a profile, so 8 profiles cost a request
        0.3 ms of CPU). Read-only for the handler. Raises ``KvSwitchError`` for an unreadable file."""
        changed = self.store.refresh()
        if changed or self._profiles is None:
            self._profiles = {p.name: p for p in self.store.profiles()}
            self._protocols = {}
        return self._profiles

    def _profiles_or_empty(self) -> dict[str, Profile]:
        try:
            return self.profiles()
        except KvSwitchError:
            return {}  # ``candidates`` words the store's error

    def _upstream_protocol(self, profile: Profile, client: WireProtocol) -> WireProtocol:
        """``routing.upstream_protocol``, kept per profile until the profiles change (30 µs a lookup)."""
        key = (profile.name, client)
        found = self._protocols.get(key)
        if found is None:
            found = self._protocols[key] = upstream_protocol(profile, client)
        return found

    def candidates(self, route: Route, body: Any = None) -> tuple[list[Profile], str | None]:
        """The profile for ``route`` (or for the picker id ``body`` names: ``model_routes``) and its
        fallbacks, or ``([], why)``."""
        row = None if route.pinned else model_routes.picked(body, self._profiles_or_empty())
        name = route.pinned or (row.profile if row else None) or self.routes().clients.get(route.client or "")
        if not name:
            return [], f"no profile is routed to {route.client} (run 'kvswitch use PROFILE')"
        try:
            profiles = self.profiles()
            primary = profiles.get(name) or self.store.get(name)  # the store words a missing name
        except KvSwitchError as exc:
            return [], str(exc)
        chain = [primary]
        chain += [profiles[fallback] for fallback in primary.fallbacks if fallback in profiles]
        return chain, None

    # -- one request --------------------------------------------------------------------------------
    async def handle(self, request: web.Request) -> web.StreamResponse:
        if request.path == IDENTITY_PATH:
            return identity_answer(request, self.token)  # no token: it proves the gateway's, unasked
        route = parse_route(request.path)
        if route is None and request.path != STATUS_PATH:
            return refuse(404, f"gateway: no route {request.path!r}; clients use /claude, /codex/v1 or "
                               "/p/PROFILE", close=False)
        if not token_matches(self.token.value, offered_token(request)):
            return refuse(401, "gateway: missing or wrong local token (KV Switch writes it into the "
                               "client's settings when a gateway profile is applied)")
        if route is None:
            return web.json_response(self.status())
        try:
            raw = await read_body(request, self.limits.max_request_body)
            base_headers = upstream_headers(request.headers.items(), drop=CLIENT_AUTH_HEADERS)
        except BodyRefused as exc:
            return refuse(exc.status, f"gateway: {exc.message}")
        # a long body is parsed on a worker thread: 17 MB of tiny messages held the event loop about 1 s
        body = (await asyncio.to_thread(parse_json_body, raw) if len(raw) >= THREAD_PARSE
                else parse_json_body(raw))
        # the profiles are asked for only when the model is a picker id (most requests' is not); none
        # readable: ``candidates`` words the store's error
        picker = None if route.pinned else model_routes.picker_id(body)
        known = self._profiles_or_empty() if picker is not None else {}
        stale = model_routes.stale_picker_id(body, known) if known else None
        if stale is not None:
            return refuse(404, f"gateway: the model {stale[:200]!r} is a KV Switch picker row of a profile "
                               "that was removed, renamed or no longer goes through the gateway; choose a "
                               "model again (kvswitch use PROFILE rewrites the picker)", close=False)
        chain, why = self.candidates(route, body)
        if not chain:
            return refuse(503, f"gateway: {why}", close=False)
        started = time.monotonic()
        row = UsageRow(time.time(), route.client or "pinned", chain[0].name, None,
                       body.get("model") if isinstance(body, dict) else None, None)
        self.cache_truth.begin(row, request.headers, body, size=len(raw))
        reasons: list[str] = []
        answer: web.StreamResponse | None = None
        current: list[Attempt] = []
        stored = False

        async def store() -> None:
            """Hand the usage row to the writer before the answer's end reaches the client, and wait for
            it at most ``ROW_WAIT_S`` while the writer keeps up (a client that reads usage as its answer
            ends finds the row). Nothing here can fail, cut or hold the answer (issue 28)."""
            nonlocal stored
            if stored:
                return
            stored = True
            attempt = current[-1] if current else None
            first_byte = started + attempt.first_byte_ms / 1000 if attempt and attempt.first_byte_ms else None
            self.tiers.answered(row, first_byte)  # the tiers' after readings, in the background
            await self.cache_truth.prepare(row)  # a long body's digest, off the event loop
            judge_later = self.numbers.record(row, attempt, reasons, started, chain)
            served = next((p for p in chain if p.name == row.profile), None)
            if self.counts.hold(row, first_byte,
                                lambda filled: self._store_late(filled, judge_later, served)):
                return  # stored once the server's counters are read (within seconds)
            if self.cache_truth.remeasure.start(row, served, self._submit):
                return  # a new conversation, stored once the server measured what it could reuse
            done = self._submit(row)
            if done is not None and self.usage.healthy(ROW_WAIT_S):
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(done)), ROW_WAIT_S)

        try:
            try:
                async with asyncio.timeout(self.limits.max_response_seconds):
                    answer = await self._try_chain(request, route, chain, raw, body, base_headers,
                                                   started, row, reasons, current, store)
            except TimeoutError:
                message = deadline_message(self.limits, f"upstream of {row.profile}")
                if current and current[-1].committed:
                    current[-1].cut = message
                    if request.transport is not None:
                        request.transport.close()
                    answer = web.StreamResponse()
                else:
                    row.status, row.error = 504, message
                    answer = refuse(504, f"gateway: {message}")
            await store()
        finally:
            self.counts.ended(row)  # whatever happened: the server's bookkeeping must not wait for it
            self.tiers.ended(row)
            self.cache_truth.release(row)  # the parsed body, on every path (judged, refused, cut off)
        return answer

    def _store_late(self, row: UsageRow, judge: Callable[[], None] | None, served: Profile | None) -> None:
        if judge is not None and row.input_tokens is not None:
            judge()
        if not self.cache_truth.remeasure.start(row, served, self._submit):
            self._submit(row)

    def _submit(self, row: UsageRow) -> Future[bool] | None:
        """Hand the row to the writer, or to the tier record that hands it over once the tiers' counters
        are read (None then: the caller does not wait for it)."""
        if self.tiers.later(row, self.usage.submit):
            return None
        return self.usage.submit(row)

    async def _try_chain(
        self, request: web.Request, route: Route, chain: list[Profile], raw: bytes, body: Any,
        base_headers: Any, started: float, row: UsageRow, reasons: list[str], current: list[Attempt],
        store: Callable[[], Awaitable[None]],
    ) -> web.StreamResponse:
        last_error: tuple[int, bytes, Bridge | None] | None = None

        def others() -> list[Profile]:
            return chain[:1] + [p for p in (self._profiles or {}).values() if p.name != chain[0].name]

        def outcome_then_store(converter: ResponseConverter | None) -> Callable[[], Awaitable[None]]:
            """``store``, after the row took the bridge's outcome: a stream the bridge ended with an
            error event went out under the upstream's 200, but it failed, and the row says so."""

            async def finish() -> None:
                if converter is not None and converter.failure is not None:
                    row.status, row.error = 502, converter.failure[:300]
                if current[-1].idle:  # ended past the read-idle bound: a gateway timeout, not a 200
                    row.status = 504
                    self.breaker.failure(row.profile or "")
                await store()

            return finish

        for index, profile in enumerate(chain):
            more = index + 1 < len(chain)
            if more and not self.breaker.available(profile.name):
                reasons.append(f"{profile.name}: skipped (circuit open)")
                continue
            try:
                planned = self._plan(profile, route, raw, body, request.rel_url.raw_query_string, others)
            except BridgeRequestError as refused:  # the client's own mistake: no other profile helps
                row.status, row.error = refused.status, str(refused)
                return web.json_response(status=refused.status, body=refused.body)
            except (LookupError, ValueError) as exc:  # no bridge for this backend's protocol, or a
                reasons.append(f"{profile.name}: {exc}")  # conversion fault another profile may not have
                continue
            unslotted, planned.body = planned.body, await self.slots.place(self.session, planned, row, body)
            headers = base_headers.copy()
            headers.update(key_headers(profile, planned.protocol))  # type: ignore[arg-type]
            if planned.bridge is not None:
                headers["Content-Type"] = "application/json"
                headers["Accept-Encoding"] = "identity"
            attempt = Attempt(planned.url)
            current.append(attempt)
            if route.is_conversation:
                await self.counts.forwarding(profile, row)  # counters, for an answer that lacks them
                await self.tiers.forwarding(profile, row)  # both pages, for the split by tier
            # shown and stored masked (``redact.mask_url``): a base URL may carry ``user:password@``
            row.profile, row.model = profile.name, planned.model
            row.upstream = mask_url(planned.url.split("?")[0])
            response = await self.slots.send(planned, unslotted, attempt, partial(  # a 400: without id_slot
                open_upstream, self.session, request.method, planned.url, headers, attempt=attempt,
                first_byte=self.limits.first_byte, started=started))
            if response is None:
                self.breaker.failure(profile.name)
                reasons.append(f"{profile.name}: {attempt.error}")
                if more:
                    continue
                status = 504 if attempt.timed_out else 502  # a lapsed deadline is a gateway timeout
                row.status, row.error = status, attempt.error
                return refuse(status, f"gateway: upstream {row.upstream} failed: {attempt.error}")
            if retryable(response.status) and more:
                error_body = await read_error_body(response, attempt)
                self.breaker.failure(profile.name)
                reasons.append(f"{profile.name}: HTTP {response.status}")
                last_error = (response.status, error_body, planned.bridge)
                continue
            if retryable(response.status):
                self.breaker.failure(profile.name)
            else:
                self.breaker.success(profile.name)
            converter = None
            status_body = None
            if planned.bridge is not None:
                if response.status >= 400:
                    status_body = planned.bridge.convert_error(response.status, await read_error_body(
                        response, attempt))
                else:
                    streaming = isinstance(body, dict) and bool(body.get("stream"))
                    converter = planned.bridge.response_converter(body, streaming=streaming)
            if route.client is not None:
                self.serving[route.client] = profile.name
            row.status = response.status
            return await relay(request, response, attempt, self.limits, started, converter, status_body,
                               before_end=outcome_then_store(converter),
                               ending=ending_for(route.protocol, attempt.sample))
        if last_error is not None:
            status, error_body, bridge = last_error  # no later profile could even be tried
            row.status, row.error = status, mask_text(error_body[:300].decode("utf-8", "replace"))
            shown = bridge.convert_error(status, error_body) if bridge is not None else error_body
            return web.Response(status=status, body=shown, content_type="application/json")
        row.status, row.error = 503, "; ".join(reasons)
        return refuse(503, f"gateway: no upstream could serve: {'; '.join(reasons)}")

    def _plan(self, profile: Profile, route: Route, raw: bytes, body: Any, query: str,
              others: Callable[[], list[Profile]]) -> Planned:
        protocol = self._upstream_protocol(profile, route.protocol)
        return plan_request(profile, route, raw, body, query, protocol, self._profiles or {}, others)

    def status(self) -> dict[str, Any]:
        """What ``gateway status`` shows: where each client is routed, who served last, open circuits."""
        routes = self.routes()
        counters = self.usage.counters()
        # rows whose numbers could not be read
        failed = self.numbers.failures + self.counts.failures + self.tiers.failures
        counters["usage_errors"] = int(counters["usage_errors"] or 0) + failed
        return {"running": True, "pid": os.getpid(), "instance": INSTANCE, "routes": dict(routes.clients),
                "serving": dict(self.serving), "open_circuits": self.breaker.open_circuits(), **counters}

