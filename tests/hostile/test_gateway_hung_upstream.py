"""Issue 28 item 8, the rest of it: upstreams that send their head and then hang, drip their headers
and then hang, or start an answer and then go quiet, through the real gateway (in-process on loopback,
a temporary HOME) against real loopback sockets. Before the fix each of these held the client for the
900 s read timeout: the first-byte deadline covered the headers only, and a stream gone quiet was cut
without a word and stored as a 200.

The bounds are 1.5 s here; the code path is the one of the defaults (180 s to the first body byte or
event, 240 s of read-idle)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from gateway.gateway_support import ScriptedUpstream, add_profiles, json_answer, stored_rows
from kvswitch.core.gateway_config import ensure_token
from kvswitch.core.models import Profile
from kvswitch.core.paths import AppPaths
from kvswitch.gateway.relay.failover import CircuitBreaker
from kvswitch.gateway.relay.forward import Limits
from kvswitch.gateway.relay.server import GatewayServer
from kvswitch.gateway.service import GatewayHandler
from support.hostile_servers import HostileServer

BOUND = 1.5
PASSWORD = "pw-hung-51c0ffee"
ANSWER = json.dumps({"id": "m", "type": "message", "content": [{"type": "text", "text": "ok"}],
                     "usage": {"input_tokens": 3, "output_tokens": 1}}).encode()
MESSAGES = "/claude/v1/messages"


@pytest.fixture
def paths(fake_home: Path) -> AppPaths:
    return AppPaths.default()


@pytest.fixture
def token(paths: AppPaths) -> str:
    return ensure_token(paths)


@pytest.fixture
def gateway(paths: AppPaths, token: str) -> Iterator[GatewayServer]:
    """A gateway whose breaker opens on the first failure, so that "the breaker was told" shows."""
    limits = Limits(first_byte=BOUND, upstream_idle=BOUND)
    handler = GatewayHandler(paths, limits, CircuitBreaker(threshold=1))
    server = GatewayServer(handler).start()
    yield server
    server.stop()


@pytest.fixture
def hostile() -> Iterator[Callable[[str], HostileServer]]:
    servers: list[HostileServer] = []

    def start(mode: str) -> HostileServer:
        servers.append(HostileServer(mode))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


@pytest.fixture
def good() -> Iterator[ScriptedUpstream]:
    upstream = ScriptedUpstream(json_answer(ANSWER))
    yield upstream
    upstream.close()


def _hung_profile(name: str, url: str, bridged: bool, **extra: Any) -> Profile:
    if bridged:
        return Profile(name=name, kind="llama.cpp", base_url=url, protocol="openai_chat", **extra)
    return Profile.model_validate({"name": name, "kind": "anthropic", "base_url": url, **extra})


def _open_circuits(gateway: GatewayServer) -> list[str]:
    handler = gateway.handler
    assert isinstance(handler, GatewayHandler)
    return handler.breaker.open_circuits()


@pytest.mark.parametrize("bridged", [False, True], ids=["pass-through", "bridged"])
@pytest.mark.parametrize(("mode", "stream"), [("head_hang", False), ("sse_head_hang", True),
                                              ("drip_then_hang", False)])
def test_a_head_then_silence_fails_over_within_the_first_byte_deadline(
    paths: AppPaths, gateway: GatewayServer, token: str, hostile: Callable[[str], HostileServer],
    good: ScriptedUpstream, mode: str, stream: bool, bridged: bool,
) -> None:
    hung = hostile(mode)
    add_profiles(paths, _hung_profile("hung", hung.url, bridged, fallbacks=["good"]),
                 _hung_profile("good", good.url, False), route="hung")
    started = time.monotonic()
    answer = httpx.post(gateway.url + MESSAGES, json={"model": "m", "stream": stream, "messages": []},
                        headers={"x-api-key": token}, timeout=30)
    waited = time.monotonic() - started
    assert answer.status_code == 200, answer.text
    assert answer.content == ANSWER  # the fallback's answer, whole: nothing of the hung one leaked
    assert waited < BOUND + 10  # not the read-idle bound of each read (900 s before the fix)
    (row,) = stored_rows(paths)
    assert (row.profile, row.status) == ("good", 200)
    assert "first-byte deadline" in (row.failover or "")
    assert "first-byte deadline" in (row.notes or "")
    assert _open_circuits(gateway) == ["hung"]


def test_the_last_upstream_hanging_after_its_head_is_a_504_naming_it_masked(
    paths: AppPaths, gateway: GatewayServer, token: str, hostile: Callable[[str], HostileServer],
) -> None:
    hung = hostile("head_hang")
    url = hung.url.replace("http://", f"http://user:{PASSWORD}@")
    add_profiles(paths, _hung_profile("hung", url, False), route="hung")
    answer = httpx.post(gateway.url + MESSAGES, json={"model": "m", "messages": []},
                        headers={"x-api-key": token}, timeout=30)
    assert answer.status_code == 504
    message = answer.json()["error"]["message"]
    assert f"127.0.0.1:{hung.port}" in message
    assert "first-byte deadline" in message
    assert PASSWORD not in answer.text
    (row,) = stored_rows(paths)
    assert (row.profile, row.status) == ("hung", 504)
    assert "first-byte deadline" in (row.notes or "")
    assert PASSWORD not in (row.error or "") + (row.notes or "") + (row.upstream or "")
    assert _open_circuits(gateway) == ["hung"]


@pytest.mark.parametrize(("mode", "bridged", "path", "expected"), [
    ("sse_stall", False, MESSAGES, b"event: error\ndata: {\"type\":\"error\""),
    ("chat_stall", True, MESSAGES, b"event: error\ndata: {\"type\":\"error\""),
    ("sse_stall", False, "/codex/v1/responses", b"event: response.failed\n"),
], ids=["messages", "bridged", "responses"])
def test_a_stream_gone_quiet_after_its_first_event_ends_with_an_error_event_and_a_504_row(
    paths: AppPaths, gateway: GatewayServer, token: str, hostile: Callable[[str], HostileServer],
    good: ScriptedUpstream, mode: str, bridged: bool, path: str, expected: bytes,
) -> None:
    quiet = hostile(mode)
    profile = _hung_profile("quiet", quiet.url, bridged, fallbacks=["good"])
    if path.startswith("/codex"):
        profile = Profile(name="quiet", kind="llama.cpp", base_url=quiet.url, fallbacks=["good"])
    add_profiles(paths, profile, _hung_profile("good", good.url, False), route="quiet")
    body = {"model": "m", "stream": True, "messages": [], "input": "hi"}
    auth = {"x-api-key": token, "authorization": f"Bearer {token}"}
    with httpx.stream("POST", gateway.url + path, json=body, headers=auth, timeout=30) as response:
        assert response.status_code == 200
        received = b"".join(response.iter_raw())  # ends cleanly: a cut connection raises here
    assert expected in received
    assert b"read-idle bound" in received
    assert f"127.0.0.1:{quiet.port}".encode() in received  # names the upstream
    assert good.seen == []  # bytes had gone out: no failover after the commit
    (row,) = stored_rows(paths)
    assert (row.profile, row.status) == ("quiet", 504)
    assert "read-idle bound" in (row.error or "")
    assert "read-idle bound" in (row.notes or "")
    assert _open_circuits(gateway) == ["quiet"]


def test_a_json_answer_gone_quiet_after_its_first_bytes_is_cut_never_completed(
    paths: AppPaths, gateway: GatewayServer, token: str, hostile: Callable[[str], HostileServer],
) -> None:
    quiet = hostile("json_stall")
    add_profiles(paths, _hung_profile("quiet", quiet.url, False), route="quiet")
    with pytest.raises(httpx.RemoteProtocolError):  # cut short: never a complete-looking JSON body
        httpx.post(gateway.url + MESSAGES, json={"model": "m", "messages": []},
                   headers={"x-api-key": token}, timeout=30)
    (row,) = stored_rows(paths)
    assert (row.profile, row.status) == ("quiet", 504)
    assert "read-idle bound" in (row.error or "")


def test_the_bounds_come_from_the_users_settings(
    paths: AppPaths, token: str, hostile: Callable[[str], HostileServer],
) -> None:
    from kvswitch.core.settings import AppSettings, save_settings  # noqa: PLC0415
    from kvswitch.gateway.control import make_server  # noqa: PLC0415

    save_settings(paths, AppSettings(gateway_first_byte_seconds=1, gateway_read_idle_seconds=2))
    server = make_server(paths, "127.0.0.1", 0).start()
    try:
        assert (server.handler.limits.first_byte, server.handler.limits.upstream_idle) == (1.0, 2.0)
        hung = hostile("sse_head_hang")
        add_profiles(paths, _hung_profile("hung", hung.url, False), route="hung")
        answer = httpx.post(server.url + MESSAGES, json={"model": "m", "stream": True, "messages": []},
                            headers={"x-api-key": token}, timeout=30)
        assert answer.status_code == 504
        assert "no first event within 1 s (first-byte deadline)" in answer.json()["error"]["message"]
    finally:
        server.stop()
