"""A loopback aiohttp server on its own thread (``LoopbackServer``; ``HostileServer`` serves what a test
tells it per path), and a ticker that measures from inside how long an event loop was held: for the
tests that put the gateway in front of servers that misbehave (``tests/hostile/``)."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections.abc import Awaitable, Callable

from aiohttp import web

#: the most the gateway's event loop may be held by this bookkeeping
MAX_GAP_S = 0.05
#: the longest wall gap but one may not pass this, whatever the machine's load
NOISE_CAP_S = 0.5

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def measured(figure: str) -> None:
    """A figure for the docs (shown with ``pytest -s``)."""
    sys.stdout.write(figure + "\n")


class LoopbackServer:
    """A real aiohttp server on 127.0.0.1 (a free port), on its own thread and event loop, answering
    every path and method with ``_handle``; started by the constructor, stopped by ``close``."""

    #: the largest request body aiohttp reads (its own default: 1 MiB)
    client_max_size = 1024**2

    def __init__(self) -> None:
        self.port = 0
        self._loop = asyncio.new_event_loop()
        ready = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(ready,), daemon=True)
        self._thread.start()
        assert ready.wait(10)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        raise NotImplementedError

    def _run(self, ready: threading.Event) -> None:
        asyncio.set_event_loop(self._loop)
        app = web.Application(client_max_size=self.client_max_size)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        runner = web.AppRunner(app, access_log=None)
        self._loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", 0)
        self._loop.run_until_complete(site.start())
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        ready.set()
        self._loop.run_forever()
        self._loop.run_until_complete(runner.cleanup())

    def close(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


class HostileServer(LoopbackServer):
    """A loopback server where ``routes`` maps a path to its handler (others: 404); the bodies of the
    requests it answered are kept in ``seen``."""

    client_max_size = 1 << 24

    def __init__(self, routes: dict[str, Handler]):
        self.routes = routes
        self.seen: list[bytes] = []
        super().__init__()

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        handler = self.routes.get(request.path)
        if handler is None:
            return web.Response(status=404)
        if request.method == "POST":
            self.seen.append(await request.read())
        return await handler(request)


class Ticker:
    """Measures an event loop from inside: for each 5 ms sleep, how much longer it took (wall) and how
    much CPU the loop's own thread used meanwhile (``time.thread_time``).

    Bookkeeping that runs on the loop shows as CPU on its thread; ``held()`` is the most of it between
    two ticks. Wall time alone also counts the scheduler of a loaded machine: beside other suites on 2
    cores (load 7-11) a thread waits 50-430 ms for a CPU now and then with nothing of KV Switch's
    running, measured with and without the hostile input. So the wall gaps only catch a loop that
    waits (a lock, a blocking call): the longest but one must stay under ``NOISE_CAP_S``."""

    def __init__(self, loop: asyncio.AbstractEventLoop):
        self.gaps: list[float] = []
        self.busy: list[float] = []
        self._running = True
        self._future = asyncio.run_coroutine_threadsafe(self._tick(), loop)

    async def _tick(self) -> None:
        loop = asyncio.get_running_loop()
        while self._running:
            before, cpu = loop.time(), time.thread_time()
            await asyncio.sleep(0.005)
            self.gaps.append(loop.time() - before - 0.005)
            self.busy.append(time.thread_time() - cpu)

    def held(self) -> float:
        """Stop; the most CPU the loop's thread spent between two ticks (asserting that the wall gaps,
        but the longest, stayed under ``NOISE_CAP_S``)."""
        self._running = False
        self._future.result(5)
        gaps = sorted(self.gaps, reverse=True)
        assert len(gaps) < 2 or gaps[1] < NOISE_CAP_S, gaps[:5]
        return max(self.busy)
