"""How the gateway drives a bridge (the interface in ``kvswitch.gateway.bridges``): the request body goes
through ``convert_request`` and ``dump_body`` to the upstream protocol's route, the answer through the
converter's ``feed``/``close``, an upstream error through ``convert_error``. The real bridges are
another module's; this one only tags what passes, so the wiring is visible byte for byte."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from gateway_support import Responder, ScriptedUpstream, add_profiles, json_answer, sse_answer

from kvswitch.core.gateway_config import usage_db
from kvswitch.core.models import Profile
from kvswitch.core.paths import AppPaths
from kvswitch.gateway.bridges import Bridge, BridgeUsage, ResponseConverter
from kvswitch.gateway.relay import plan
from kvswitch.gateway.relay.server import GatewayServer
from kvswitch.usage.queries import query

Make = Callable[[Responder], ScriptedUpstream]


class _Tagging(ResponseConverter):
    def __init__(self) -> None:
        self.usage = BridgeUsage()

    def feed(self, chunk: bytes) -> bytes:
        return chunk.upper()

    def close(self) -> bytes:
        return b"[end]"


class _TaggingBridge(Bridge):
    client = "anthropic"
    upstream = "openai_chat"

    def convert_request(self, body: dict[str, Any]) -> dict[str, Any]:
        return {"model": body.get("model"), "messages": body.get("messages"), "converted": True}

    def response_converter(self, request: dict[str, Any], *, streaming: bool) -> ResponseConverter:
        return _Tagging()

    def convert_error(self, status: int, body: bytes) -> bytes:
        return json.dumps({"type": "error", "error": {"message": f"{status}: {body.decode()}"}}).encode()


@pytest.fixture
def bridged(monkeypatch: pytest.MonkeyPatch) -> None:
    def pick(client: str, upstream: str) -> Bridge | None:
        return None if client == upstream else _TaggingBridge()

    monkeypatch.setattr(plan, "pick_bridge", pick)


@pytest.mark.usefixtures("bridged")
def test_a_bridged_request_is_converted_both_ways(
    paths: AppPaths, gateway: GatewayServer, token: str, upstreams: Make
) -> None:
    events = [b'data: {"choices":[]}\n\n', b'data: {"usage":{"prompt_tokens":10,"completion_tokens":2,'
              b'"prompt_tokens_details":{"cached_tokens":8}}}\n\n']
    upstream = upstreams(sse_answer(events))
    add_profiles(paths, Profile(name="chat", kind="llama.cpp", base_url=upstream.url, model="m",
                                protocol="openai_chat"), route="chat")
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    with httpx.stream("POST", gateway.url + "/claude/v1/messages?beta=true", json=body,
                      headers={"x-api-key": token}) as response:
        received = b"".join(response.iter_raw())
    seen = upstream.seen[-1]
    assert seen.path == "/v1/chat/completions"
    assert seen.body == b'{"model":"m","messages":[{"role":"user","content":"hi"}],"converted":true}'
    assert received == b"".join(events).upper() + b"[end]"
    row = query(usage_db(paths))[-1]
    assert (row.input_tokens, row.cached_tokens, row.output_tokens) == (10, 8, 2)  # the upstream's own


@pytest.mark.usefixtures("bridged")
def test_an_upstream_error_comes_back_in_the_clients_shape(
    paths: AppPaths, gateway: GatewayServer, token: str, upstreams: Make
) -> None:
    upstream = upstreams(json_answer(b'{"error":"bad"}', status=400))
    add_profiles(paths, Profile(name="chat", kind="llama.cpp", base_url=upstream.url,
                                protocol="openai_chat"), route="chat")
    answer = httpx.post(gateway.url + "/claude/v1/messages", json={"messages": []},
                        headers={"x-api-key": token})
    assert answer.status_code == 400
    assert answer.json() == {"type": "error", "error": {"message": '400: {"error":"bad"}'}}


def test_without_a_bridge_for_the_pair_nothing_is_sent(
    paths: AppPaths, gateway: GatewayServer, token: str, upstreams: Make
) -> None:
    upstream = upstreams(json_answer(b"{}"))
    add_profiles(paths, Profile(name="chat", kind="llama.cpp", base_url=upstream.url,
                                protocol="openai_chat"), route="chat")
    answer = httpx.post(gateway.url + "/claude/v1/messages", json={"messages": []},
                        headers={"x-api-key": token})
    if answer.status_code == 503:  # no bridge in this build
        assert "no bridge" in answer.json()["error"]["message"]
        assert upstream.seen == []
    else:  # the real bridges have landed: the request went to the chat route
        assert upstream.seen[-1].path == "/v1/chat/completions"
