"""The gateway's HTTP server: one aiohttp application on one loopback address, in the foreground
(``kvswitch gateway run``) or on a background thread with its own event loop (the recorder, the
window, tests).

Whatever a mode does with a request (route and fail over, or record and pass through) is its
``Handler``; this module only listens, keeps idle clients from holding sockets, and stops cleanly:
stop listening first, then give the requests in flight a bounded time to finish.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable

import aiohttp
from aiohttp import web

from kvswitch.core.addresses import is_loopback_host
from kvswitch.core.errors import UsageError
from kvswitch.gateway.relay.forward import LIMITS_KEY, Limits, client_session

# a malformed request (a folded header, a broken chunk) is answered 400 by the parser; its traceback
# is not the user's business, and the gateway's own outcome is in the usage rows
logging.getLogger("aiohttp").addHandler(logging.NullHandler())
logging.getLogger("aiohttp").propagate = False


def parse_listen(text: str, allow_remote: bool = False, what: str = "the gateway") -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6); refuses a non-loopback host unless allowed."""
    host, sep, port_text = text.rpartition(":")
    digits = port_text.isascii() and port_text.isdigit()
    if not sep or not digits or not 0 <= int(port_text) <= 65535:
        raise UsageError(f"--listen {text!r}: expected HOST:PORT, e.g. 127.0.0.1:8089")
    host = host.strip("[]") or "127.0.0.1"
    if not allow_remote and not is_loopback_host(host):
        raise UsageError(
            f"--listen {text!r}: {what} forwards your credentials, so it listens on loopback "
            "only; pass --allow-remote to listen on another address"
        )
    return host, int(port_text)


class Handler(ABC):
    """What a mode does with each request. ``session`` is the pooled upstream client (set at start)."""

    limits: Limits
    session: aiohttp.ClientSession

    @abstractmethod
    async def handle(self, request: web.Request) -> web.StreamResponse:
        """Answer one request (every method, every path)."""

    async def startup(self) -> None:  # noqa: B027 - optional hook
        """Called on the server's loop before the first request."""

    async def cleanup(self) -> None:  # noqa: B027 - optional hook
        """Called on the server's loop after the last request."""


class GatewayServer:
    """Listens on ``host:port`` (0: any free port) and hands every request to ``handler``."""

    def __init__(self, handler: Handler, *, host: str = "127.0.0.1", port: int = 0,
                 allow_remote: bool = False, drain_seconds: float = 5.0):
        if not allow_remote and not is_loopback_host(host):
            raise UsageError(f"refusing to listen on {host}: not a loopback address (use allow_remote)")
        self.handler = handler
        self.host, self.requested_port = host, port
        self.drain_seconds = drain_seconds
        self._runner: web.AppRunner | None = None
        self._port: int | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stopped: asyncio.Event | None = None

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("gateway not started")
        return self._port

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    # -- on the loop ------------------------------------------------------------------------------
    async def start_async(self) -> None:
        app = web.Application(client_max_size=self.handler.limits.max_request_body + 1,
                              handler_args={"max_field_size": 65536, "max_line_size": 65536})
        app[LIMITS_KEY] = self.handler.limits  # read_body's pause bound
        app.router.add_route("*", "/{tail:.*}", self._dispatch)
        self.handler.session = client_session(self.handler.limits)
        await self.handler.startup()
        runner = web.AppRunner(app, access_log=None, handle_signals=False,
                               keepalive_timeout=self.handler.limits.client_idle,
                               shutdown_timeout=self.drain_seconds, lingering_time=0)
        await runner.setup()
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        try:
            sock = socket.socket(family, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((self.host, self.requested_port))
            sock.listen(1024)
            sock.setblocking(False)
        except OSError as exc:
            sock.close()
            await runner.cleanup()
            await self.handler.session.close()
            why = exc.strerror or exc
            raise UsageError(f"cannot listen on {self.host}:{self.requested_port}: {why}") from None
        site = web.SockSite(runner, sock, backlog=1024)
        await site.start()
        self._port = int(sock.getsockname()[1])
        self._runner = runner

    async def stop_async(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()  # stops listening, then waits up to drain_seconds
            self._runner = None
        await self.handler.cleanup()
        if not self.handler.session.closed:
            await self.handler.session.close()

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        return await self.handler.handle(request)

    async def serve_until(self, stop: Callable[[], Awaitable[None]]) -> None:
        """Start, wait for ``stop()`` to return, then stop (the foreground ``gateway run``)."""
        await self.start_async()
        try:
            await stop()
        finally:
            await self.stop_async()

    # -- from another thread ----------------------------------------------------------------------
    def start(self) -> GatewayServer:
        """Serve on a background thread; returns once listening (or raises why it cannot)."""
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            self._stopped = asyncio.Event()
            try:
                loop.run_until_complete(self.start_async())
            except BaseException as exc:  # handed to the caller's thread
                failure.append(exc)
                ready.set()
                loop.close()
                return
            ready.set()
            stopped = self._stopped
            loop.run_until_complete(stopped.wait())
            loop.run_until_complete(self.stop_async())
            loop.close()

        self._thread = threading.Thread(target=run, name="kvswitch-gateway", daemon=True)
        self._thread.start()
        ready.wait()
        if failure:
            self._thread.join()
            raise failure[0]
        return self

    def stop(self) -> None:
        """Stop listening, then give requests in flight up to ``drain_seconds`` to finish."""
        loop, stopped, thread = self._loop, self._stopped, self._thread
        if loop is not None and stopped is not None and not loop.is_closed():
            loop.call_soon_threadsafe(stopped.set)
        if thread is not None:
            thread.join(timeout=self.drain_seconds + 10)
        self._thread = None
        self._loop = None

    def __enter__(self) -> GatewayServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
