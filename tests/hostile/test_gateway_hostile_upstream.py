"""Issue 28, items 4, 7, 8, 9 and 12 through the real gateway (in-process on loopback, a temporary HOME):
hostile upstreams (one that never answers, one that drips its headers, one whose header holds a control
byte, one whose URL carries a password) and hostile clients (a body stalled after its headers, header
bytes that are not UTF-8, a 20 MB body, a nested ``"model"``). Fakes only where no real server can
misbehave on demand."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from gateway.gateway_support import ScriptedUpstream, add_profiles, json_answer, sse_answer
from kvswitch.cli import main
from kvswitch.core.gateway_config import ensure_token, usage_db
from kvswitch.core.models import Profile
from kvswitch.core.paths import AppPaths
from kvswitch.gateway.control import make_server
from kvswitch.gateway.relay.forward import Limits
from kvswitch.gateway.relay.server import GatewayServer
from kvswitch.usage.queries import query
from kvswitch.usage.schema import UsageRow
from support.hostile_servers import HostileServer

PASSWORD = "pw-9c2e11zz7f3a"
ANSWER = json.dumps({"id": "m", "type": "message", "content": [{"type": "text", "text": "ok"}],
                     "usage": {"input_tokens": 3, "output_tokens": 1}}).encode()
#: short enough for a test, the same code path as the 180 s default
FIRST_BYTE = 1.5


@pytest.fixture
def paths(fake_home: Path) -> AppPaths:
    return AppPaths.default()


@pytest.fixture
def token(paths: AppPaths) -> str:
    return ensure_token(paths)


@pytest.fixture
def start_gateway(paths: AppPaths, token: str) -> Iterator[Callable[..., GatewayServer]]:
    servers: list[GatewayServer] = []

    def start(**limits: Any) -> GatewayServer:
        servers.append(make_server(paths, "127.0.0.1", 0, limits=Limits(**limits)).start())
        return servers[-1]

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def upstream() -> Iterator[Callable[..., ScriptedUpstream]]:
    made: list[ScriptedUpstream] = []

    def make(responder: Any) -> ScriptedUpstream:
        made.append(ScriptedUpstream(responder))
        return made[-1]

    yield make
    for one in made:
        one.close()


@pytest.fixture
def hostile() -> Iterator[Callable[[str], HostileServer]]:
    servers: list[HostileServer] = []

    def start(mode: str) -> HostileServer:
        servers.append(HostileServer(mode))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def _profile(name: str, url: str, **extra: Any) -> Profile:
    return Profile.model_validate({"name": name, "kind": "anthropic", "base_url": url, **extra})


def _post(gateway: GatewayServer, token: str, body: Any, path: str = "/claude/v1/messages",
          timeout: float = 30, **headers: str) -> httpx.Response:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx.post(gateway.url + path, content=data, timeout=timeout,
                      headers={"x-api-key": token, "content-type": "application/json", **headers})


def _rows(paths: AppPaths) -> list[UsageRow]:
    return query(usage_db(paths))


# -- 4: secrets -------------------------------------------------------------------------------------
def test_a_base_url_password_is_in_no_502_body_usage_row_or_usage_listing(
    paths: AppPaths, start_gateway: Callable[..., GatewayServer], token: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    add_profiles(paths, _profile("p", f"http://user:{PASSWORD}@127.0.0.1:{port}"), route="p")
    gateway = start_gateway()
    answer = _post(gateway, token, {"model": "m", "messages": []})
    assert answer.status_code == 502
    assert PASSWORD not in answer.text
    assert "user:" in answer.text  # the upstream is named, its password masked
    (row,) = _rows(paths)
    assert row.status == 502
    assert row.upstream is not None
    assert PASSWORD not in row.upstream
    assert "user:" in row.upstream
    assert PASSWORD not in (row.error or "")
    for flag in ("--json", "--csv"):
        capsys.readouterr()
        assert main(["usage", flag]) == 0
        shown = capsys.readouterr().out
        assert "user:" in shown
        assert PASSWORD not in shown, flag


# -- 8: hung upstreams ------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["silent", "slow_headers"])
def test_a_hung_upstream_fails_over_at_the_first_byte_deadline(
    paths: AppPaths, start_gateway: Callable[..., GatewayServer], token: str,
    hostile: Callable[[str], HostileServer], upstream: Callable[..., ScriptedUpstream], mode: str,
) -> None:
    hung, good = hostile(mode), upstream(json_answer(ANSWER))
    add_profiles(paths, _profile("hung", hung.url, fallbacks=["good"]), _profile("good", good.url),
                 route="hung")
    gateway = start_gateway(first_byte=FIRST_BYTE)
    started = time.monotonic()
    answer = _post(gateway, token, {"model": "m", "messages": []}, timeout=20)
    waited = time.monotonic() - started
    assert answer.status_code == 200, answer.text
    assert answer.content == ANSWER
    assert FIRST_BYTE - 0.2 < waited < FIRST_BYTE + 5
    (row,) = _rows(paths)
    assert (row.profile, row.status) == ("good", 200)
    assert "first-byte deadline" in (row.failover or "")


def test_the_last_hung_upstream_is_a_504_with_a_row(
    paths: AppPaths, start_gateway: Callable[..., GatewayServer], token: str,
    hostile: Callable[[str], HostileServer],
) -> None:
    add_profiles(paths, _profile("hung", hostile("silent").url), route="hung")
    gateway = start_gateway(first_byte=FIRST_BYTE)
    answer = _post(gateway, token, {"model": "m", "messages": []}, timeout=20)
    assert answer.status_code == 504  # a gateway timeout, not a refusal
    assert "first-byte deadline" in answer.json()["error"]["message"]
    assert [row.status for row in _rows(paths)] == [504]


def test_an_upstream_header_with_a_control_byte_is_a_502_with_a_row_and_fails_over(
    paths: AppPaths, start_gateway: Callable[..., GatewayServer], token: str,
    hostile: Callable[[str], HostileServer], upstream: Callable[..., ScriptedUpstream],
) -> None:
    bad, good = hostile("control_header"), upstream(json_answer(ANSWER))
    add_profiles(paths, _profile("bad", bad.url, fallbacks=["good"]), _profile("good", good.url),
                 _profile("alone", bad.url), route="bad")
    gateway = start_gateway()
    answer = _post(gateway, token, {"model": "m", "messages": []})
    assert answer.status_code == 200
    assert answer.content == ANSWER
    assert "x-bad" in (_rows(paths)[-1].failover or "")
    alone = _post(gateway, token, {"model": "m", "messages": []}, path="/p/alone/v1/messages")
    assert alone.status_code == 502
    assert "control character" in alone.json()["error"]["message"]
    row = _rows(paths)[-1]
    assert (row.profile, row.status) == ("alone", 502)


def _raw_request(gateway: GatewayServer, head: bytes, body: bytes, wait: float) -> bytes:
    with socket.create_connection(("127.0.0.1", gateway.port)) as conn:
        conn.sendall(head + body)
        conn.settimeout(wait)
        got = b""
        try:
            while True:
                piece = conn.recv(65536)
                if not piece:
                    return got
                got += piece
        except TimeoutError:
            return got + b"<still open>"


def test_a_request_body_stalled_after_its_headers_is_answered_408_and_closed(
    paths: AppPaths, start_gateway: Callable[..., GatewayServer], token: str,
    upstream: Callable[..., ScriptedUpstream],
) -> None:
    good = upstream(json_answer(ANSWER))
    add_profiles(paths, _profile("p", good.url), route="p")
    gateway = start_gateway(request_body_idle=1.0)
    head = (f"POST /claude/v1/messages HTTP/1.1\r\nHost: x\r\nx-api-key: {token}\r\n"
            "content-type: application/json\r\ncontent-length: 1000\r\n\r\n").encode()
    started = time.monotonic()
    got = _raw_request(gateway, head, b'{"model":', wait=10)
    assert got.startswith(b"HTTP/1.1 408"), got[:200]
    assert not got.endswith(b"<still open>")  # the connection was closed, not kept
    assert time.monotonic() - started < 6
    assert good.seen == []


# -- 12: header bytes that are not UTF-8 --------------------------------------------------------------
def test_a_client_header_that_is_not_utf8_is_refused_by_name_not_dropped(
    paths: AppPaths, start_gateway: Callable[..., GatewayServer], token: str,
    upstream: Callable[..., ScriptedUpstream],
) -> None:
    good = upstream(json_answer(ANSWER))
    add_profiles(paths, _profile("p", good.url), route="p")
    gateway = start_gateway()
    body = b'{"model":"m","messages":[]}'
    head = (f"POST /claude/v1/messages HTTP/1.1\r\nHost: x\r\nx-api-key: {token}\r\n"
            f"content-type: application/json\r\ncontent-length: {len(body)}\r\n").encode()
    got = _raw_request(gateway, head + b"x-note: caf\xe9\r\n\r\n", body, wait=10)
    assert got.startswith(b"HTTP/1.1 400"), got[:200]
    assert b"x-note" in got
    assert b"not UTF-8" in got
    assert good.seen == []  # never forwarded as "caf"
    fine = _raw_request(gateway, head + "x-note: café\r\n\r\n".encode(), body, wait=10)
    assert fine.startswith(b"HTTP/1.1 200"), fine[:200]
    sent = dict(good.seen[-1].headers)
    assert sent["x-note"].encode("utf-8", "surrogateescape") == "café".encode()  # UTF-8 passes whole


# -- 7: bodies --------------------------------------------------------------------------------------
def _big_body(model: str, megabytes: int = 20) -> dict[str, Any]:
    filler = "x" * (1 << 20)
    return {"model": model, "max_tokens": 8,
            "messages": [{"role": "user", "content": filler} for _ in range(megabytes)]}


def test_a_20_mb_body_is_still_mapped_and_bridged(
    paths: AppPaths, start_gateway: Callable[..., GatewayServer], token: str,
    upstream: Callable[..., ScriptedUpstream],
) -> None:
    passthrough = upstream(json_answer(ANSWER))
    chat = upstream(json_answer(json.dumps({"id": "c", "choices": [
        {"message": {"content": "ok"}, "finish_reason": "stop"}]}).encode()))
    add_profiles(paths, _profile("local", passthrough.url, model="local-m"),
                 Profile(name="chat", kind="llama.cpp", base_url=chat.url, model="chat-m",
                         protocol="openai_chat"), route="local")
    gateway = start_gateway()
    body = _big_body("claude-sonnet-4-5")
    answer = _post(gateway, token, body, timeout=60)
    assert answer.status_code == 200, answer.text[:300]
    assert len(passthrough.seen[-1].body) > 16 << 20
    assert json.loads(passthrough.seen[-1].body)["model"] == "local-m"
    bridged = _post(gateway, token, body, path="/p/chat/v1/messages", timeout=60)
    assert bridged.status_code == 200, bridged.text[:300]
    assert bridged.json()["content"] == [{"type": "text", "text": "ok"}]
    assert json.loads(chat.seen[-1].body)["model"] == "chat-m"


def test_the_model_rewrite_leaves_a_nested_model_alone(
    paths: AppPaths, start_gateway: Callable[..., GatewayServer], token: str,
    upstream: Callable[..., ScriptedUpstream],
) -> None:
    good = upstream(json_answer(ANSWER))
    add_profiles(paths, _profile("local", good.url, model="local-m"), route="local")
    gateway = start_gateway()
    raw = (b'{"messages":[{"role":"user","content":"hi","metadata":{"model":"claude-sonnet-4-5"}}],'
           b'"tools":[{"name":"t","input_schema":{"model":"claude-sonnet-4-5"}}],'
           b'"model":"claude-sonnet-4-5"}')
    assert _post(gateway, token, raw).status_code == 200
    sent = good.seen[-1].body
    assert json.loads(sent)["model"] == "local-m"
    head, _, _ = raw.rpartition(b'"claude-sonnet-4-5"')
    assert sent == head + b'"local-m"}'  # only the top-level value moved
    assert sent.count(b'"claude-sonnet-4-5"') == 2  # the conversation's own, unchanged


# -- 6 (request side) and 9b: through a bridge --------------------------------------------------------
def test_a_lone_surrogate_in_a_bridged_request_is_forwarded_not_503(
    paths: AppPaths, start_gateway: Callable[..., GatewayServer], token: str,
    upstream: Callable[..., ScriptedUpstream],
) -> None:
    chat = upstream(json_answer(json.dumps({"id": "c", "choices": [
        {"message": {"content": "ok"}, "finish_reason": "stop"}]}).encode()))
    other = upstream(json_answer(ANSWER))
    add_profiles(paths, Profile(name="chat", kind="llama.cpp", base_url=chat.url, protocol="openai_chat",
                                fallbacks=["other"]), _profile("other", other.url), route="chat")
    gateway = start_gateway()
    raw = b'{"model":"m","messages":[{"role":"user","content":"a\\ud800b"}]}'
    answer = _post(gateway, token, raw)
    assert answer.status_code == 200, answer.text
    forwarded = json.loads(chat.seen[-1].body)
    assert forwarded["messages"][-1]["content"] == "a\ufffdb"  # the same replacement every turn
    assert other.seen == []
    refused = _post(gateway, token, b'["not", "an", "object"]')
    assert refused.status_code == 400  # the client's mistake, not every profile's failure
    assert other.seen == []


def test_a_stream_the_bridge_ended_with_an_error_is_recorded_as_an_error(
    paths: AppPaths, start_gateway: Callable[..., GatewayServer], token: str,
    upstream: Callable[..., ScriptedUpstream],
) -> None:
    events = [b'data: {"id":"c","choices":[{"index":0,"delta":{"content":"par"}}]}\n\n',
              b'data: {"error":{"message":"the model crashed"}}\n\n']
    chat = upstream(sse_answer(events))
    add_profiles(paths, Profile(name="chat", kind="llama.cpp", base_url=chat.url, protocol="openai_chat"),
                 route="chat")
    gateway = start_gateway()
    with httpx.stream("POST", gateway.url + "/claude/v1/messages", headers={"x-api-key": token},
                      json={"model": "m", "stream": True, "messages": []}, timeout=30) as response:
        assert response.status_code == 200  # the status line went out before the error came
        received = b"".join(response.iter_raw())
    assert b"event: error" in received
    assert b"the model crashed" in received
    (row,) = _rows(paths)
    assert row.status == 502
    assert "the model crashed" in (row.error or "")



# -- 4: the one masking rule, by itself ---------------------------------------------------------------
@pytest.mark.parametrize(("url", "shown"), [
    (f"http://user:{PASSWORD}@h:8/v1", "http://user:REDACTED@h:8/v1"),
    (f"https://h/v1?X-Amz-Signature={PASSWORD}&X-Amz-Date=1", "https://h/v1?X-Amz-Signature=REDACTED&X-Amz-Date=1"),
    ("http://[::1]:8080/v1?beta=true", "http://[::1]:8080/v1?beta=true"),  # nothing secret: every byte kept
    ("http://user@h/v1", "http://user@h/v1"),
])
def test_mask_url_masks_the_password_and_signed_queries_only(url: str, shown: str) -> None:
    from kvswitch.core.redact import mask_headers, mask_text, mask_url  # noqa: PLC0415

    assert mask_url(url) == shown
    assert PASSWORD not in mask_text(f"upstream {url} failed")
    headers = {"X-Custom-Token": PASSWORD, "X-Amz-Signature": PASSWORD, "X-Amz-Credential": PASSWORD,
               "anthropic-version": "2023-06-01", "x-claude-code-session-id": "s-1"}
    masked = mask_headers(headers)
    assert PASSWORD not in json.dumps(masked)
    assert masked["anthropic-version"] == "2023-06-01"
    assert masked["x-claude-code-session-id"] == "s-1"
