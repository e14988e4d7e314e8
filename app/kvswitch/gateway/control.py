"""What the CLI and the window call: run the gateway, start it in the background, ask a running one
for its status, read the usage database. One small API, so the window never touches the server."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from pathlib import Path
from typing import Any

from kvswitch.core.gateway_config import (
    RuntimeInfo,
    clear_runtime,
    read_routes,
    usage_db,
    write_routes,
    write_runtime,
)
from kvswitch.core.paths import AppPaths
from kvswitch.gateway.probe import probe_status as prove
from kvswitch.gateway.relay.forward import Limits
from kvswitch.gateway.relay.server import GatewayServer
from kvswitch.gateway.service import GatewayHandler
from kvswitch.gateway.truth.server_notes import ServerNotes
from kvswitch.usage.queries import UsageFilter, query, summary
from kvswitch.usage.schema import UsageRow


def make_server(paths: AppPaths, host: str, port: int, *, allow_remote: bool = False,
                limits: Limits | None = None, notes: ServerNotes | None = None) -> GatewayServer:
    """``notes``: where a reader of the profiles' server logs hands what the servers said
    (``kvswitch.commands.server_notes``; the gateway never reads a log itself)."""
    return GatewayServer(GatewayHandler(paths, limits, notes=notes), host=host, port=port,
                         allow_remote=allow_remote)


def remember_listen(paths: AppPaths, host: str, port: int) -> None:
    """Record the address in the routing state, so that profiles applied later point clients at it."""
    routes = read_routes(paths)
    if (routes.host, routes.port) != (host, port) and port:
        routes.host, routes.port = host, port
        write_routes(paths, routes)


def run_foreground(paths: AppPaths, host: str, port: int, *, allow_remote: bool = False,
                   on_ready: Any = None, notes: ServerNotes | None = None) -> None:
    """Serve until SIGINT/SIGTERM (``kvswitch gateway run``); ``notes`` are closed when it ends."""
    try:
        _serve_foreground(make_server(paths, host, port, allow_remote=allow_remote, notes=notes), paths,
                          host, on_ready)
    finally:
        if notes is not None:
            notes.close()


def _serve_foreground(server: GatewayServer, paths: AppPaths, host: str, on_ready: Any) -> None:
    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, stop.set)
        await server.start_async()
        try:
            remember_listen(paths, host, server.port)
            write_runtime(paths, RuntimeInfo(os.getpid(), host, server.port, time.time()))
            if on_ready is not None:
                on_ready(server)
            await stop.wait()
        finally:
            clear_runtime(paths, os.getpid())
            await server.stop_async()

    asyncio.run(main())


def start_background(paths: AppPaths, host: str | None = None, port: int | None = None,
                     notes: ServerNotes | None = None) -> GatewayServer:
    """A gateway on a thread of this process (the window), on the routing state's address unless
    given; ``stop_background`` ends it."""
    routes = read_routes(paths)
    host = routes.host if host is None else host
    try:
        server = make_server(paths, host, routes.port if port is None else port, notes=notes).start()
    except BaseException:
        if notes is not None:
            notes.close()
        raise
    remember_listen(paths, host, server.port)
    write_runtime(paths, RuntimeInfo(os.getpid(), host, server.port, time.time()))
    return server


def stop_background(paths: AppPaths, server: GatewayServer) -> None:
    """Stop a gateway ``start_background`` started (requests in flight get a few seconds)."""
    server.stop()
    notes = getattr(server.handler, "notes", None)
    if notes is not None:
        notes.close()
    clear_runtime(paths, os.getpid(), server.port)


def probe_status(paths: AppPaths, timeout: float = 2.0) -> dict[str, Any]:
    """``{"running": bool, "url": ..., "identity": ..., "problems": [...], ...}``: ``gateway.probe``,
    which proves the answer is this user's gateway before the token is sent."""
    return prove(paths, timeout)


def usage_rows(paths: AppPaths, since: float | None = None, profile: str | None = None) -> list[UsageRow]:
    """The usage rows, oldest first (``since``: epoch seconds)."""
    return query(usage_db(paths), since, profile)


def usage_summary(paths: AppPaths, since: float | None = None) -> dict[str, dict[str, float]]:
    """Per profile: requests, tokens, cost and cache hit rate (the window's Usage view), summed in SQL."""
    return summary(usage_db(paths), UsageFilter(since=since))


def usage_db_path(paths: AppPaths) -> Path:
    return usage_db(paths)
