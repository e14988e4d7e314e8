"""Where a request goes, as pure functions: client paths and pins, upstream URLs per protocol, the key
header a profile's key variable implies, the tier mapping and the in-place model rewrite."""

from __future__ import annotations

import json

import pytest

from kvswitch.core.models import Profile
from kvswitch.gateway.relay.routing import (
    Route,
    key_headers,
    mapped_model,
    parse_route,
    rewrite_model,
    upstream_url,
)


def test_client_paths_and_pins() -> None:
    assert parse_route("/claude/v1/messages") == Route("claude", None, "/v1/messages")
    assert parse_route("/codex/v1/responses") == Route("codex", None, "/responses")
    assert parse_route("/p/my profile/v1/messages") == Route(None, "my profile", "/v1/messages")
    assert parse_route("/claudex/v1/messages") is None
    assert parse_route("/v1/messages") is None
    assert parse_route("/p/") is None
    assert parse_route("/p/x/v1/chat/completions").protocol == "openai_chat"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("kind", "base", "route", "protocol", "expected"),
    [
        ("llama.cpp", "http://127.0.0.1:8080", Route("claude", None, "/v1/messages"), "anthropic",
         "http://127.0.0.1:8080/v1/messages?beta=true"),
        ("anthropic", "https://api.deepseek.com/anthropic", Route("claude", None, "/v1/messages"),
         "anthropic", "https://api.deepseek.com/anthropic/v1/messages?beta=true"),
        ("llama.cpp", "http://127.0.0.1:8080", Route("codex", None, "/responses"), "openai_responses",
         "http://127.0.0.1:8080/v1/responses?beta=true"),
        ("llama.cpp", "http://127.0.0.1:8080", Route(None, "x", "/v1/responses"), "openai_responses",
         "http://127.0.0.1:8080/v1/responses?beta=true"),
    ],
)
def test_upstream_urls(kind: str, base: str, route: Route, protocol: str, expected: str) -> None:
    profile = Profile.model_validate({"name": "p", "kind": kind, "base_url": base})
    assert upstream_url(profile, route, "beta=true", protocol, bridged=False) == expected  # type: ignore[arg-type]


def test_a_bridged_request_goes_to_the_upstream_protocols_route() -> None:
    profile = Profile(name="p", kind="llama.cpp", base_url="http://127.0.0.1:8080/v1")
    route = Route("claude", None, "/v1/messages")
    assert upstream_url(profile, route, "beta=true", "openai_chat", bridged=True) == (
        "http://127.0.0.1:8080/v1/chat/completions")


def test_the_key_goes_in_the_header_its_variable_implies() -> None:
    api = Profile(name="a", base_url="https://x", api_key="k" * 20, key_env="ANTHROPIC_API_KEY")
    bearer = Profile(name="b", base_url="https://x", api_key="k" * 20)
    assert key_headers(api, "anthropic") == {"x-api-key": "k" * 20}
    assert key_headers(api, "openai_chat") == {"Authorization": "Bearer " + "k" * 20}
    assert key_headers(bearer, "anthropic") == {"Authorization": "Bearer " + "k" * 20}
    assert key_headers(Profile(name="c", base_url="http://x"), "anthropic") == {}


def test_models_map_per_tier() -> None:
    old = Profile.model_validate({"name": "old", "base_url": "http://x", "model": "o-main",
                                  "models": {"haiku": "o-small", "opus": "o-big"}})
    new = Profile.model_validate({"name": "new", "base_url": "http://y", "model": "n-main",
                                  "models": {"haiku": "n-small"}})
    bare = Profile(name="bare", base_url="http://z")
    assert mapped_model("o-main", new, [old]) == "n-main"
    assert mapped_model("o-small", new, [old]) == "n-small"
    assert mapped_model("o-big", new, [old]) == "n-main"  # no opus of its own: its main model
    assert mapped_model("claude-haiku-4-5-20251001", new, [old]) == "n-small"
    assert mapped_model("n-small", new, [old]) == "n-small"  # already its own
    assert mapped_model("anything", bare, [old]) == "anything"  # names no model: left alone


def test_only_the_model_value_moves() -> None:
    raw = b'{"model" : "a\\"b", "messages":[{"content":"{\\"model\\":\\"a\\\\\\"b\\"}"}],"x":1}'
    body = json.loads(raw)
    rewritten = rewrite_model(raw, body, "new-\u00e9")
    assert json.loads(rewritten)["model"] == "new-\u00e9"
    assert json.loads(rewritten)["messages"] == body["messages"]
    assert rewritten.replace('"new-\u00e9"'.encode(), b'"a\\"b"') == raw
    assert rewrite_model(raw, body, body["model"]) is raw
    assert rewrite_model(b"[1]", [1], "m") == b"[1]"


def test_the_bridged_pairs_the_route_check_knows_are_the_bridges_that_exist() -> None:
    """``core.gateway_config.BRIDGED_PROTOCOLS`` (what ``profile add`` accepts as ``--protocol``) is
    exactly the pairs ``pick_bridge`` converts, so a bridge added or removed there fails here first."""
    from kvswitch.core.gateway_config import BRIDGED_PROTOCOLS  # noqa: PLC0415
    from kvswitch.core.models import WIRE_PROTOCOLS  # noqa: PLC0415
    from kvswitch.gateway.bridges import pick_bridge  # noqa: PLC0415

    served = set()
    for client in WIRE_PROTOCOLS:
        for upstream in WIRE_PROTOCOLS:
            if client == upstream:
                continue
            try:
                pick_bridge(client, upstream)
            except LookupError:
                continue
            served.add((client, upstream))
    assert served == set(BRIDGED_PROTOCOLS)
