"""What the gateway's hostile-input tests (``tests/hostile/test_gateway_server_*.py``) share: a profile
routed to a hostile loopback server, a conversation's turns sent as Claude Code sends them, the usage
rows the gateway stored, a plain Messages answer with chosen usage counts, and the fixtures that start
hostile servers (``servers``) and the real gateway in this process (``gateway``; it asks for the test
module's ``paths``)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from aiohttp import web

from kvswitch.core.gateway_config import Routes, ensure_token, usage_db, write_routes
from kvswitch.core.models import Profile
from kvswitch.core.paths import AppPaths
from kvswitch.core.store import ProfileStore
from kvswitch.gateway.relay.server import GatewayServer
from kvswitch.gateway.service import GatewayHandler
from kvswitch.usage.queries import query
from kvswitch.usage.schema import UsageRow
from support.hostile_loopback import Handler, HostileServer

#: the Claude Code session every request of these tests belongs to
SESSION = "hostile-session"


def local_profile(paths: AppPaths, url: str, **fields: Any) -> str:
    ProfileStore(paths).add(Profile(name="local", kind="llama.cpp", base_url=url, model="tiny", **fields))
    write_routes(paths, Routes(clients={"claude": "local", "codex": "local"}))
    return ensure_token(paths)


def conversation_turn(turn: int) -> dict[str, Any]:
    """Turn ``turn`` of one conversation: each extends the one before it whole."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "say hi"}]
    for n in range(turn):
        messages += [{"role": "assistant", "content": "ok"}, {"role": "user", "content": f"more {n}"}]
    return {"model": "tiny", "max_tokens": 8, "system": "You answer briefly. " * 40,
            "tools": [{"name": "Read", "input_schema": {"type": "object"}}], "messages": messages}


def ask(url: str, token: str, turn: int, timeout: float = 10.0) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    answer = httpx.post(url + "/claude/v1/messages", json=conversation_turn(turn), timeout=timeout,
                        headers={"x-api-key": token, "x-claude-code-session-id": SESSION,
                                 "user-agent": "claude-cli/2.1.332 (external, sdk-cli)"})
    return answer, time.monotonic() - started


def usage_rows(paths: AppPaths, count: int, timeout: float = 15.0) -> list[UsageRow]:
    deadline = time.monotonic() + timeout
    while True:
        rows = query(usage_db(paths))
        if len(rows) >= count or time.monotonic() > deadline:
            return rows
        time.sleep(0.05)  # the usage writer stores rows on its own thread


def messages_answer(usage: dict[str, int]) -> Handler:
    async def answer(request: web.Request) -> web.StreamResponse:
        return web.json_response({"id": "msg_1", "type": "message", "role": "assistant", "model": "tiny",
                                  "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
                                  "usage": usage})

    return answer


@pytest.fixture(name="servers")
def servers_fixture() -> Iterator[Callable[[dict[str, Handler]], HostileServer]]:
    made: list[HostileServer] = []

    def start(routes: dict[str, Handler]) -> HostileServer:
        made.append(HostileServer(routes))
        return made[-1]

    yield start
    for server in made:
        server.close()


@pytest.fixture(name="gateway")
def gateway_fixture(paths: AppPaths) -> Iterator[Callable[..., GatewayServer]]:
    """``start(notes=None)``: the real gateway in this process on a free loopback port."""
    started: list[GatewayServer] = []

    def start(notes: Any = None) -> GatewayServer:
        started.append(GatewayServer(GatewayHandler(paths, notes=notes), host="127.0.0.1", port=0).start())
        return started[-1]

    yield start
    for server in started:
        server.stop()
