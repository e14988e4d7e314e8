"""Issue 39, item 1: the live cache record under hostile bodies, through the real gateway.

A real gateway (in-process, its own event loop on a free loopback port) relays to a loopback upstream
that answers as a Messages server does (its usage: the prompt and what it read from its cache). A
ticker on the gateway's own event loop measures how long the loop is held while the hostile request is
recorded, from the moment the upstream has the request (the body was read and parsed before that, for
routing) until the row is stored: the loop thread's CPU time between two wake-ups (what bookkeeping on
the loop costs, whatever else the machine runs), and the wall-clock gap (what a client waits).

Before the fix (91fdfb9, on a 2-core machine under other test runs): 4,000 tools renamed from the
previous request held the loop 0.56 s of CPU, 1.5 s of wall clock (the ``tools_changed`` lists looked
each name up in the other list, and the judgement ran twice); 2.6 MB of tiny messages held it 0.32 s
(0.86 s) and kept 33 MB of digest per request; twenty requests refused before any upstream attempt (no
bridge for the pair) kept their twenty parsed bodies, until 1,024 others pushed them out. Now each is
bounded, and the loop is held at most a few ms (``MAX_STALL_S``: 50 ms).
"""

from __future__ import annotations

import asyncio
import gc
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from aiohttp import web

from gateway.gateway_support import ScriptedUpstream, add_profiles, stored_rows
from kvswitch.core.gateway_config import ensure_token
from kvswitch.core.models import Profile
from kvswitch.core.paths import AppPaths
from kvswitch.gateway.relay.server import GatewayServer
from kvswitch.gateway.service import GatewayHandler

try:
    from kvswitch.gateway.truth.digests import ONE_BY_ONE
except ImportError:  # before the fix every part was kept one by one
    ONE_BY_ONE = 1 << 30

#: the longest the gateway's event loop may be held by the record's bookkeeping (the issue's bound) …
MAX_STALL_S = 0.050
#: … and the longest a client may wait for it on a busy machine (two cores shared with other test runs)
MAX_WAIT_S = 0.5
TICK_S = 0.002
SESSION_HEADER = "x-claude-code-session-id"


class LoopTicker:
    """Sleeps ``TICK_S`` at a time on the gateway's event loop and notes every wake-up, with the loop
    thread's own CPU time: the CPU time between two wake-ups is how long work on the loop held it (a
    busy machine only stretches the wall-clock gap, while the thread waits for a core)."""

    def __init__(self, loop: asyncio.AbstractEventLoop):
        self.ticks: list[tuple[float, float]] = []
        self._running = True
        self._future = asyncio.run_coroutine_threadsafe(self._tick(), loop)

    async def _tick(self) -> None:
        while self._running:
            self.ticks.append((time.monotonic(), time.thread_time()))
            await asyncio.sleep(TICK_S)

    def longest_hold(self, since: float) -> float:
        """The most CPU time the loop's thread spent between two wake-ups of the ticker, after ``since``."""
        times = [cpu for wall, cpu in self.ticks if wall >= since]
        return max((b - a for a, b in zip(times, times[1:], strict=False)), default=0.0)

    def longest_gap(self, since: float) -> float:
        """The longest wall-clock time between two wake-ups after ``since`` (the hold, plus waiting for a
        core or for the interpreter lock while a worker thread digests)."""
        times = [wall for wall, _ in self.ticks if wall >= since]
        return max((b - a for a, b in zip(times, times[1:], strict=False)), default=0.0)

    def stop(self) -> None:
        self._running = False
        self._future.result(5)


class ServerLike:
    """Answers as a Messages server: its usage names the prompt's tokens and the cached ones (set per
    request), and the time the request reached it is kept (the bookkeeping window starts there)."""

    def __init__(self) -> None:
        self.prompt, self.cached = 100_000, 100_000
        self.reached: list[float] = []
        self.upstream = ScriptedUpstream(self._answer)

    async def _answer(self, request: web.Request, body: bytes) -> web.StreamResponse:
        self.reached.append(time.monotonic())
        usage = {"input_tokens": self.prompt - self.cached, "cache_read_input_tokens": self.cached,
                 "output_tokens": 2}
        answer = {"id": "msg_1", "type": "message", "role": "assistant", "model": "tiny",
                  "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn", "usage": usage}
        return web.json_response(answer)


Served = tuple[ServerLike, GatewayHandler, GatewayServer, LoopTicker]


@pytest.fixture
def paths(fake_home: Path) -> AppPaths:
    return AppPaths.default()


@pytest.fixture
def own_heap() -> Iterator[None]:
    """The test process's earlier objects (pytest's, other tests') set aside from the collector: a full
    collection walks every tracked object, and with this process's heap it took up to 170 ms, which a
    gateway process of its own does not carry. What the gateway allocates is still collected."""
    gc.collect()
    gc.freeze()
    yield
    gc.unfreeze()


@pytest.fixture
def served(paths: AppPaths, own_heap: None) -> Iterator[Served]:
    server_like = ServerLike()
    add_profiles(paths, Profile(name="local", kind="llama.cpp", base_url=server_like.upstream.url,
                                model="tiny"), route="local")
    handler = GatewayHandler(paths)
    gateway = GatewayServer(handler, host="127.0.0.1", port=0).start()
    assert gateway._loop is not None
    ticker = LoopTicker(gateway._loop)
    yield server_like, handler, gateway, ticker
    ticker.stop()
    gateway.stop()
    server_like.upstream.close()


def _post(gateway: GatewayServer, paths: AppPaths, body: dict[str, Any], session: str,
          path: str = "/claude/v1/messages") -> httpx.Response:
    headers = {"x-api-key": ensure_token(paths), SESSION_HEADER: session, "content-type": "application/json"}
    return httpx.post(gateway.url + path, content=json.dumps(body).encode(), headers=headers, timeout=120)


def _tools_body(count: int, prefix: str) -> dict[str, Any]:
    tools = [{"name": f"{prefix}_{i}", "description": f"tool {i} of an MCP server", "input_schema":
              {"type": "object", "properties": {}}} for i in range(count)]
    return {"model": "tiny", "max_tokens": 8, "system": "You are a coding agent. " * 800, "tools": tools,
            "messages": [{"role": "user", "content": "hello there " * 4000}]}


def test_thousands_of_renamed_tools_are_judged_without_holding_the_loop(
    paths: AppPaths, served: Served
) -> None:
    server_like, _, gateway, ticker = served
    count = 4000
    assert _post(gateway, paths, _tools_body(count, "before"), "s-tools").status_code == 200
    server_like.cached = 5_000  # the renamed tools sit before the conversation: it was processed again
    assert _post(gateway, paths, _tools_body(count, "after"), "s-tools").status_code == 200
    rows = stored_rows(paths, 2)
    stall, wait = ticker.longest_hold(server_like.reached[-1]), ticker.longest_gap(server_like.reached[-1])
    row = rows[-1] if rows[-1].cached_tokens == 5_000 else rows[0]
    assert (row.verdict, row.reason) == ("PARTIAL", "prefix_changed")  # the same verdict and reason
    assert stall < MAX_STALL_S, f"the gateway's loop was held {stall * 1000:.0f} ms judging {count} tools"
    assert wait < MAX_WAIT_S, f"the gateway's loop answered after {wait * 1000:.0f} ms"
    assert row.reason_detail is not None
    detail = json.loads(row.reason_detail)
    assert detail["looks_like"] == "tools_changed"
    assert detail["part"] == "tools[0]"
    # twenty named, the rest of those compared one by one counted, and the tools compared in groups
    assert detail["added"] == [f"after_{i}" for i in range(20)]
    assert detail["added_more"] == ONE_BY_ONE - 20
    assert detail["removed"] == [f"before_{i}" for i in range(20)]
    assert detail["removed_more"] == ONE_BY_ONE - 20
    assert detail["tools_in_groups"] == count - ONE_BY_ONE
    assert len(row.reason_detail) < 4000


def _tiny_messages(count: int, tag: str) -> dict[str, Any]:
    messages = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"{tag}{i}"} for i in range(count)]
    return {"model": "tiny", "max_tokens": 8, "messages": messages}


def _held_bytes(handler: GatewayHandler) -> int:
    """What the record's ledger holds in its digests, measured on the objects themselves (each part,
    its label and note, its hashes), each digest once."""
    digests = {id(seen.digest): seen.digest for history in handler.cache_truth._sessions.values()
               for seen in history}
    total = 0
    for digest in digests.values():
        total += sys.getsizeof(digest.parts) + sys.getsizeof(digest.hash_set)
        for part in digest.parts:
            total += (sys.getsizeof(part) + sys.getsizeof(part.label) + sys.getsizeof(part.digest)
                      + sys.getsizeof(part.chunks) + 36 * len(part.chunks))
    return total


def test_megabytes_of_tiny_messages_keep_a_bounded_digest_off_the_loop(
    paths: AppPaths, served: Served
) -> None:
    server_like, handler, gateway, ticker = served
    handler.cache_truth.max_bytes = 3 << 20  # the bound in all (64 MB by default), small enough to reach
    count, sessions = 100_000, 4  # about 2.6 MB of body each
    for number in range(sessions):
        answer = _post(gateway, paths, _tiny_messages(count, f"s{number}-"), f"s-tiny-{number}")
        assert answer.status_code == 200
        stored_rows(paths, number + 1)
        since = server_like.reached[-1]
        stall, wait = ticker.longest_hold(since), ticker.longest_gap(since)
        assert stall < MAX_STALL_S, f"the gateway's loop was held {stall * 1000:.0f} ms"
        assert wait < MAX_WAIT_S, f"the gateway's loop answered after {wait * 1000:.0f} ms"
        held = _held_bytes(handler)  # the bound in all, and one request's digest over it at most
        assert held < handler.cache_truth.max_bytes + (2 << 20), (
            f"{held / 1e6:.0f} MB of digests kept for {number + 1} requests")
    rows = stored_rows(paths, sessions)
    assert all(row.verdict == "HIT" for row in rows[1:])  # each its own session, its own prefix cached
    assert len(handler.cache_truth._sessions) < sessions  # the oldest dropped past the bound in all
    assert handler.cache_truth.kept_bytes <= handler.cache_truth.max_bytes


def test_a_request_refused_before_any_upstream_attempt_keeps_no_body(
    paths: AppPaths, served: Served
) -> None:
    server_like, handler, gateway, ticker = served
    # a Messages backend for Codex's Responses: no bridge serves the pair, so nothing is sent upstream
    add_profiles(paths, Profile(name="messages-only", kind="llama.cpp", base_url=server_like.upstream.url,
                                model="tiny", protocol="anthropic"))
    # short bodies: a body's parse (``relay.forward.parse_json_body``, before the record) is measured too
    body = {"model": "tiny", "input": [{"role": "user", "content": f"word {i}"} for i in range(300)]}
    started = 0.0
    for _ in range(20):
        answer = _post(gateway, paths, body, "s-refused", path="/p/messages-only/v1/responses")
        assert answer.status_code == 503
        assert "no bridge" in answer.text
        started = started or time.monotonic()  # after the first: the profiles were read once, then
    stall, wait = ticker.longest_hold(started), ticker.longest_gap(started)
    assert server_like.upstream.seen == []
    assert len(handler.cache_truth._pending) == 0, "a refused request's parsed body is still kept"
    assert stall < MAX_STALL_S, f"the gateway's loop was held {stall * 1000:.0f} ms"
    assert wait < MAX_WAIT_S, f"the gateway's loop answered after {wait * 1000:.0f} ms"



def test_a_conversation_past_the_folding_point_still_continues_the_earlier_request(
    paths: AppPaths, served: Served
) -> None:
    """A long conversation (3,001 blocks: folded past ``ONE_BY_ONE``) that grows by a turn, and that the
    server re-processed from halfway: the prefix was intact, so the reason is not a change (the last,
    growing group of the earlier request is taken as continued), as for a short conversation."""
    server_like, _, gateway, _ = served
    messages = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i} " * 8}
                for i in range(3001)]
    first = {"model": "tiny", "max_tokens": 8, "messages": messages}
    assert _post(gateway, paths, first, "s-long").status_code == 200
    server_like.prompt, server_like.cached = 101_000, 60_000
    grown = {**first, "messages": [*messages, {"role": "assistant", "content": "ok"},
                                   {"role": "user", "content": "and then?"}]}
    assert _post(gateway, paths, grown, "s-long").status_code == 200
    rows = stored_rows(paths, 2)
    row = next(row for row in rows if row.cached_tokens == 60_000)
    assert row.verdict == "PARTIAL"
    assert row.reason == "unknown"  # intact prefix, nothing ran in between, a local server: as before
    assert row.reason_detail is not None
    detail = json.loads(row.reason_detail)
    assert detail["reusable"] == 100_000  # the earlier request's own prompt count: it extends it whole
