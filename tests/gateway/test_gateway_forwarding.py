"""The gateway in-process on loopback in front of scripted upstreams: the local token, the key in the
profile's header, byte-for-byte pass-through, chunk-by-chunk streams, switching without a restart,
model mapping, failover before the first byte (never after) and the usage rows."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from aiohttp import web
from gateway_support import Responder, ScriptedUpstream, add_profiles, json_answer, sse_answer, stored_rows

from kvswitch.core.gateway_config import route_clients, usage_db
from kvswitch.core.models import Profile
from kvswitch.core.paths import AppPaths
from kvswitch.gateway.relay.server import GatewayServer
from kvswitch.usage.queries import query

KEY_A = "sk-ant-real-key-AAAA-0123456789"
KEY_B = "sk-real-bearer-BBBB-0123456789"
Make = Callable[[Responder], ScriptedUpstream]
USAGE = json.dumps({"id": "m", "usage": {"input_tokens": 5, "cache_read_input_tokens": 95,
                                         "output_tokens": 7}}).encode()


def _profile(name: str, url: str, **extra: object) -> Profile:
    return Profile.model_validate({"name": name, "kind": "anthropic", "base_url": url, **extra})


def _post(gateway: GatewayServer, path: str, body: bytes, token: str | None,
          **headers: str) -> httpx.Response:
    sent = {"content-type": "application/json", **headers}
    if token is not None:
        sent["x-api-key"] = token
    return httpx.post(gateway.url + path, content=body, headers=sent, timeout=30)


def test_missing_or_wrong_token_gets_401_and_nothing_is_forwarded(
    paths: AppPaths, gateway: GatewayServer, upstreams: Make
) -> None:
    upstream = upstreams(json_answer(USAGE))
    add_profiles(paths, _profile("a", upstream.url, api_key=KEY_A), route="a")
    body = b'{"model":"m","messages":[]}'
    assert _post(gateway, "/claude/v1/messages", body, None).status_code == 401
    assert _post(gateway, "/claude/v1/messages", body, "kvs-wrong").status_code == 401
    bearer = httpx.post(gateway.url + "/codex/v1/responses", content=body,
                        headers={"authorization": "Bearer nope"})
    assert bearer.status_code == 401
    assert upstream.seen == []
    assert query(usage_db(paths)) == []


def test_pass_through_keeps_every_byte_and_swaps_the_token_for_the_key(
    paths: AppPaths, gateway: GatewayServer, token: str, upstreams: Make
) -> None:
    upstream = upstreams(json_answer(USAGE))
    add_profiles(paths, _profile("a", upstream.url, api_key=KEY_A, key_env="ANTHROPIC_API_KEY",
                                 model="m"), route="a")
    body = json.dumps({"model": "m", "system": "S" * 50, "messages": [{"role": "user", "content": "é"}]},
                      ensure_ascii=False, indent=1).encode()
    answer = _post(gateway, "/claude/v1/messages?beta=true", body, token,
                   **{"anthropic-version": "2023-06-01", "connection": "keep-alive, x-hop",
                      "x-hop": "drop me", "te": "trailers"})
    assert answer.status_code == 200
    assert answer.content == USAGE
    seen = upstream.seen[-1]
    assert seen.path == "/v1/messages?beta=true"
    assert seen.body == body  # byte for byte, indentation and all
    headers = {name.lower(): value for name, value in seen.headers}
    assert headers["x-api-key"] == KEY_A
    assert "authorization" not in headers
    assert token not in json.dumps(seen.headers)
    assert headers["anthropic-version"] == "2023-06-01"
    assert "x-hop" not in headers
    assert "te" not in headers
    # an AUTH_TOKEN profile gets the key as a Bearer token instead
    route_clients(paths, "b", ["claude"])
    add_profiles(paths, _profile("b", upstream.url, api_key=KEY_B))
    assert _post(gateway, "/claude/v1/messages", body, token).status_code == 200
    headers = {name.lower(): value for name, value in upstream.seen[-1].headers}
    assert headers["authorization"] == f"Bearer {KEY_B}"
    assert "x-api-key" not in headers


def test_a_stream_reaches_the_client_chunk_by_chunk(
    paths: AppPaths, gateway: GatewayServer, token: str, upstreams: Make
) -> None:
    events = [b'event: message_start\ndata: {"type":"message_start"}\n\n',
              b'event: message_stop\ndata: {"type":"message_stop"}\n\n']

    async def slow(request: web.Request, body: bytes) -> web.StreamResponse:
        out = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await out.prepare(request)
        await out.write(events[0])
        await asyncio.sleep(1.5)
        await out.write(events[1])
        await out.write_eof()
        return out

    upstream = upstreams(slow)
    add_profiles(paths, _profile("a", upstream.url), route="a")
    arrivals = []
    started = time.monotonic()
    with httpx.stream("POST", gateway.url + "/claude/v1/messages", content=b'{"stream":true}',
                      headers={"x-api-key": token}, timeout=30) as response:
        for chunk in response.iter_raw():
            arrivals.append((time.monotonic() - started, chunk))
    assert b"".join(chunk for _, chunk in arrivals) == b"".join(events)
    assert arrivals[0][1] == events[0]
    assert arrivals[0][0] < 1.0  # the first event did not wait for the upstream's end


def test_switching_reaches_the_next_request_with_the_model_mapped_per_tier(
    paths: AppPaths, gateway: GatewayServer, token: str, upstreams: Make
) -> None:
    one, two = upstreams(json_answer(USAGE)), upstreams(json_answer(USAGE))
    add_profiles(
        paths,
        _profile("a", one.url, model="a-main", models={"haiku": "a-small"}),
        _profile("b", two.url, model="b-main", models={"haiku": "b-small", "opus": "b-big"}),
        route="a",
    )
    body = b'{"model":"a-main","messages":[{"role":"user","content":"\\"model\\":\\"a-main\\""}]}'
    assert _post(gateway, "/claude/v1/messages", body, token).status_code == 200
    assert one.seen[-1].body == body
    route_clients(paths, "b", ["claude"])  # what `kvswitch use b` writes; the gateway keeps running
    assert _post(gateway, "/claude/v1/messages", body, token).status_code == 200
    assert len(one.seen) == 1
    assert two.seen[-1].body == body.replace(b'"model":"a-main"', b'"model":"b-main"', 1)
    small = b'{"model":"a-small","max_tokens":1}'
    _post(gateway, "/claude/v1/messages", small, token)
    assert two.seen[-1].body == b'{"model":"b-small","max_tokens":1}'
    family = b'{"model":"claude-opus-4-1","max_tokens":1}'
    _post(gateway, "/claude/v1/messages", family, token)
    assert two.seen[-1].body == b'{"model":"b-big","max_tokens":1}'
    rows = query(usage_db(paths))
    assert [row.profile for row in rows] == ["a", "b", "b", "b"]
    assert [row.model for row in rows] == ["a-main", "b-main", "b-small", "b-big"]


def test_a_pinned_url_ignores_the_routing_state(
    paths: AppPaths, gateway: GatewayServer, token: str, upstreams: Make
) -> None:
    one, two = upstreams(json_answer(USAGE)), upstreams(json_answer(USAGE))
    add_profiles(paths, _profile("a", one.url), _profile("b", two.url), route="a")
    assert _post(gateway, "/p/b/v1/messages", b"{}", token).status_code == 200
    assert (len(one.seen), len(two.seen)) == (0, 1)
    assert _post(gateway, "/p/nosuch/v1/messages", b"{}", token).status_code == 503


def test_failover_before_the_first_byte_and_the_row_says_why(
    paths: AppPaths, gateway: GatewayServer, token: str, upstreams: Make
) -> None:
    busy = upstreams(json_answer(b'{"error":{"message":"overloaded"}}', status=503))
    good = upstreams(json_answer(USAGE))
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        dead_url = f"http://127.0.0.1:{closed.getsockname()[1]}"
    add_profiles(paths, _profile("a", busy.url, fallbacks=["dead", "c"]), _profile("dead", dead_url),
                 _profile("c", good.url), route="a")
    answer = _post(gateway, "/claude/v1/messages", b'{"model":"m"}', token)
    assert answer.status_code == 200
    assert answer.content == USAGE
    assert len(busy.seen) == 1
    assert len(good.seen) == 1
    row = stored_rows(paths)[-1]
    assert row.profile == "c"
    assert row.status == 200
    assert row.failover is not None
    assert "a: HTTP 503" in row.failover
    assert "dead:" in row.failover
    assert (row.input_tokens, row.cached_tokens, row.output_tokens) == (100, 95, 7)


def test_no_failover_once_bytes_reached_the_client(
    paths: AppPaths, gateway: GatewayServer, token: str, upstreams: Make
) -> None:
    async def breaks(request: web.Request, body: bytes) -> web.StreamResponse:
        out = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await out.prepare(request)
        await out.write(b'event: message_start\ndata: {"type":"message_start"}\n\n')
        request.transport.close()  # type: ignore[union-attr]
        return out

    broken, good = upstreams(breaks), upstreams(json_answer(USAGE))
    add_profiles(paths, _profile("a", broken.url, fallbacks=["b"]), _profile("b", good.url), route="a")
    received = bytearray()

    def read() -> None:
        with httpx.stream("POST", gateway.url + "/claude/v1/messages", content=b"{}",
                          headers={"x-api-key": token}, timeout=30) as response:
            for chunk in response.iter_raw():
                received.extend(chunk)

    with pytest.raises(httpx.RemoteProtocolError):
        read()
    assert received.startswith(b"event: message_start")
    assert good.seen == []
    row = stored_rows(paths)[-1]
    assert row.profile == "a"
    assert row.error


def test_the_circuit_breaker_skips_a_failing_upstream_then_tries_it_again(
    paths: AppPaths, token: str, upstreams: Make
) -> None:
    from kvswitch.gateway.relay.failover import CircuitBreaker  # noqa: PLC0415
    from kvswitch.gateway.relay.forward import Limits  # noqa: PLC0415
    from kvswitch.gateway.service import GatewayHandler  # noqa: PLC0415

    busy = upstreams(json_answer(b"{}", status=500))
    good = upstreams(json_answer(USAGE))
    add_profiles(paths, _profile("a", busy.url, fallbacks=["b"]), _profile("b", good.url), route="a")
    handler = GatewayHandler(paths, Limits(), CircuitBreaker(threshold=2, cooldown=1.0))
    with GatewayServer(handler) as server:
        for _ in range(4):
            assert _post(server, "/claude/v1/messages", b"{}", token).status_code == 200
        assert len(busy.seen) == 2  # open after two failures: the next two went straight to b
        assert "a" in handler.breaker.open_circuits()
        time.sleep(1.1)
        _post(server, "/claude/v1/messages", b"{}", token)
        assert len(busy.seen) == 3  # half-open: one trial
    reasons = [row.failover for row in query(usage_db(paths))]
    assert "a: skipped (circuit open)" in (reasons[2] or "")


def test_usage_rows_read_a_stream_and_the_cli_lists_them(
    paths: AppPaths, gateway: GatewayServer, token: str, upstreams: Make, fixtures_dir: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    stream = (fixtures_dir / "llama.cpp-b11434" / "responses" / "resp_anthropic_stream.json").read_bytes()
    events = [block + b"\n\n" for block in stream.split(b"\n\n") if block.strip()]
    upstream = upstreams(sse_answer(events))
    add_profiles(paths, Profile(name="local", kind="llama.cpp", base_url=upstream.url, model="tiny"),
                 route="local")
    with httpx.stream("POST", gateway.url + "/claude/v1/messages", content=b'{"model":"tiny","stream":true}',
                      headers={"x-api-key": token}) as response:
        assert b"".join(response.iter_raw()) == b"".join(events)
    from kvswitch.cli import main  # noqa: PLC0415

    assert main(["usage", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 1
    row = rows[0]
    for name in ("time", "profile", "model", "input_tokens", "cached_tokens", "output_tokens", "ttft_ms",
                 "status"):
        assert name in row
    # the numbers of the captured llama-server stream: cache_read 1563 + input 1, output 8
    assert (row["input_tokens"], row["cached_tokens"], row["output_tokens"]) == (1564, 1563, 8)
    assert row["profile"] == "local"
    assert row["status"] == 200
    assert row["cost"] == 0.0
    assert main(["usage", "--csv", "--profile", "local"]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith("time,client,profile")


def test_codex_reaches_the_responses_route_below_v1(
    paths: AppPaths, gateway: GatewayServer, token: str, upstreams: Make
) -> None:
    upstream = upstreams(json_answer(b'{"usage":{"input_tokens":50,"input_tokens_details":'
                                     b'{"cached_tokens":40},"output_tokens":3}}'))
    add_profiles(paths, Profile(name="local", kind="llama.cpp", base_url=upstream.url, api_key=KEY_B),
                 route="local")
    answer = httpx.post(gateway.url + "/codex/v1/responses", content=b'{"model":"m","input":"hi"}',
                        headers={"authorization": f"Bearer {token}"})
    assert answer.status_code == 200
    seen = upstream.seen[-1]
    assert seen.path == "/v1/responses"
    assert dict((k.lower(), v) for k, v in seen.headers)["authorization"] == f"Bearer {KEY_B}"
    row = stored_rows(paths)[-1]
    assert (row.client, row.input_tokens, row.cached_tokens, row.output_tokens) == ("codex", 50, 40, 3)


def test_an_endless_upstream_is_cut_at_the_answer_cap(paths: AppPaths, token: str, upstreams: Make) -> None:
    from kvswitch.gateway.relay.forward import Limits  # noqa: PLC0415
    from kvswitch.gateway.service import GatewayHandler  # noqa: PLC0415

    async def endless(request: web.Request, body: bytes) -> web.StreamResponse:
        out = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await out.prepare(request)
        with contextlib.suppress(ConnectionError):
            while True:
                await out.write(b"data: " + b"x" * 65536 + b"\n\n")
        return out

    upstream = upstreams(endless)
    add_profiles(paths, _profile("a", upstream.url), route="a")
    cap = 1 << 20
    limits = Limits(max_response_bytes=cap, max_response_seconds=20)
    with GatewayServer(GatewayHandler(paths, limits)) as server:
        received = bytearray()

        def read() -> None:
            with httpx.stream("POST", server.url + "/claude/v1/messages", content=b"{}",
                              headers={"x-api-key": token}, timeout=30) as response:
                for chunk in response.iter_raw():
                    received.extend(chunk)

        with pytest.raises(httpx.RemoteProtocolError):  # cut, never ended as if complete
            read()
    assert len(received) <= cap
    row = stored_rows(paths)[-1]
    assert row.error is not None
    assert "more than 1 MB" in row.error


def test_an_answer_past_its_deadline_is_cut(paths: AppPaths, token: str, upstreams: Make) -> None:
    from kvswitch.gateway.relay.forward import Limits  # noqa: PLC0415
    from kvswitch.gateway.service import GatewayHandler  # noqa: PLC0415

    upstream = upstreams(sse_answer([b"data: {}\n\n"] * 100, pause=0.1))
    add_profiles(paths, _profile("a", upstream.url), route="a")
    with GatewayServer(GatewayHandler(paths, Limits(max_response_seconds=1.5))) as server:
        started = time.monotonic()

        def read() -> None:
            with httpx.stream("POST", server.url + "/claude/v1/messages", content=b"{}",
                              headers={"x-api-key": token}, timeout=30) as response:
                for _chunk in response.iter_raw():
                    pass

        with pytest.raises(httpx.RemoteProtocolError):
            read()
        assert time.monotonic() - started < 5
    row = stored_rows(paths)[-1]
    assert row.error is not None
    assert "no complete answer within the 1.5 s timeout" in row.error


def test_the_controller_api_starts_reports_and_stops(paths: AppPaths, token: str, upstreams: Make) -> None:
    from kvswitch.gateway.control import probe_status, start_background, stop_background, usage_summary

    upstream = upstreams(json_answer(USAGE))
    add_profiles(paths, _profile("a", upstream.url), route="a")
    server = start_background(paths, port=0)
    try:
        status = probe_status(paths)
        assert status["running"] is True
        assert status["url"] == server.url
        assert status["routes"] == {"claude": "a", "codex": "a"}
        assert _post(server, "/claude/v1/messages", b"{}", token).status_code == 200
        assert probe_status(paths)["serving"] == {"claude": "a"}
    finally:
        stop_background(paths, server)
    assert probe_status(paths, timeout=0.5)["running"] is False
    summary = usage_summary(paths)
    assert summary["a"]["requests"] == 1
    assert summary["a"]["hit_rate"] == pytest.approx(0.95)
