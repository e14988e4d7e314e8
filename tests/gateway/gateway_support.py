"""A scripted upstream on loopback (aiohttp on its own thread): answers what a test tells it to and
records what reached it. Used only where a real server cannot produce the case (a 503, a stream that
stops, a refused connection) and as the fast upstream of the concurrency test."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from kvswitch.core.gateway_config import Routes, write_routes
from kvswitch.core.models import Profile
from kvswitch.core.paths import AppPaths
from kvswitch.core.store import ProfileStore

Responder = Callable[[web.Request, bytes], Awaitable[web.StreamResponse]]


@dataclass
class Seen:
    method: str
    path: str
    headers: list[tuple[str, str]]
    body: bytes


@dataclass
class ScriptedUpstream:
    responder: Responder
    seen: list[Seen] = field(default_factory=list)
    port: int = 0
    metrics_reads: int = 0

    def __post_init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        self._ready.wait(10)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)

        async def handle(request: web.Request) -> web.StreamResponse:
            body = await request.read()
            if request.method == "GET" and request.path == "/metrics":
                # the gateway's own reads of a local server's counters (``gateway.counts_fallback``):
                # answered as a server without a counters page answers, and not listed in ``seen``
                self.metrics_reads += 1
                return web.Response(status=404, text="no counters here")
            self.seen.append(Seen(request.method, request.path_qs, list(request.headers.items()), body))
            return await self.responder(request, body)

        app = web.Application(client_max_size=1 << 26)
        app.router.add_route("*", "/{tail:.*}", handle)
        self._runner = web.AppRunner(app, access_log=None)
        self._loop.run_until_complete(self._runner.setup())
        site = web.TCPSite(self._runner, "127.0.0.1", 0, backlog=2048)
        self._loop.run_until_complete(site.start())
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._ready.set()
        self._loop.run_forever()
        self._loop.run_until_complete(self._runner.cleanup())
        self._loop.close()

    def close(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


def json_answer(data: bytes, status: int = 200) -> Responder:
    async def respond(request: web.Request, body: bytes) -> web.StreamResponse:
        return web.Response(status=status, body=data, content_type="application/json")

    return respond


def sse_answer(events: list[bytes], pause: float = 0.0) -> Responder:
    async def respond(request: web.Request, body: bytes) -> web.StreamResponse:
        out = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await out.prepare(request)
        for event in events:
            await out.write(event)
            if pause:
                await asyncio.sleep(pause)
        await out.write_eof()
        return out

    return respond


def add_profiles(paths: AppPaths, *profiles: Profile, route: str | None = None) -> None:
    store = ProfileStore(paths)
    for profile in profiles:
        store.add(profile)
    if route:
        write_routes(paths, Routes(clients={"claude": route, "codex": route}))


def stored_rows(paths: Any, count: int = 1, timeout: float = 20.0) -> list[Any]:
    """The usage rows once at least ``count`` are stored: the writer thread stores a row on its own
    schedule, and a client whose answer was cut sees the cut before the gateway hands the row over."""
    import time  # noqa: PLC0415

    from kvswitch.core.gateway_config import usage_db  # noqa: PLC0415
    from kvswitch.usage.queries import query  # noqa: PLC0415

    deadline = time.monotonic() + timeout
    while True:
        rows = query(usage_db(paths))
        if len(rows) >= count or time.monotonic() > deadline:
            return rows
        time.sleep(0.05)
