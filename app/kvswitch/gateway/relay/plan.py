"""The request as it goes upstream: which model (a picker id resolved, the profile's model map), the
opt-in rewrites for local backends (the prefix stabiliser, inline system messages as user messages) and
the protocol bridge's conversion, planned once per profile tried."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kvswitch.core.models import Profile, WireProtocol
from kvswitch.gateway.bridges import Bridge, BridgeRequestError, dump_body, inline_system, pick_bridge
from kvswitch.gateway.bridges.stabilise import applies as stabiliser_applies
from kvswitch.gateway.bridges.stabilise import stabilise
from kvswitch.gateway.relay import model_routes
from kvswitch.gateway.relay.routing import Route, mapped_model, rewrite_model, upstream_url


@dataclass
class Planned:
    """One upstream attempt's target and bytes."""

    profile: Profile
    protocol: str
    bridge: Bridge | None
    url: str
    body: bytes
    model: str | None



def plan_request(profile: Profile, route: Route, raw: bytes, body: Any, query: str, protocol: WireProtocol,
                 profiles: Mapping[str, Profile], others: Callable[[], list[Profile]]) -> Planned:
    """The request as it goes to ``profile``'s upstream (spoken in ``protocol``): the model mapped (a picker
id to its profile's model), the opt-in rewrites for local backends, the bridge's conversion."""
    bridge = pick_bridge(route.protocol, protocol) if route.is_conversation else None
    model = body.get("model") if isinstance(body, dict) and isinstance(body.get("model"), str) else None
    if model is not None:
        picked = model_routes.upstream_model(model, profile, profiles)
        model = picked or mapped_model(model, profile, others)
    # opt-in, local backends: Claude Code's shared context before the user's words (the stabiliser),
    # its inline system messages as user messages in place (for templates that refuse them)
    conversation = route.is_conversation and isinstance(body, dict)
    local = profile.kind.is_local
    rewrote = conversation and stabiliser_applies(
        stable_prefix=profile.stable_prefix, local_backend=local, client=route.protocol)
    if rewrote:
        body = stabilise(body)
    if conversation and inline_system.applies(inline_system_as_user=profile.inline_system_as_user,
                                              local_backend=local, client=route.protocol):
        rewritten = inline_system.as_user(body)
        rewrote = rewrote or rewritten is not body
        body = rewritten
    if bridge is not None:
        if not isinstance(body, dict):  # the client's mistake, the same for every profile
            message = "a request to a bridged backend must be a JSON object"
            error = bridge.convert_error(400, json.dumps({"error": {"message": message}}).encode())
            raise BridgeRequestError(400, error, message)
        converted = bridge.convert_request({**body, "model": model} if model else body)
        data = dump_body(converted)
    elif rewrote:
        data = dump_body({**body, "model": model} if model else body)
    else:
        data = rewrite_model(raw, body, model) if model is not None else raw
    url = upstream_url(profile, route, query, protocol if bridge else route.protocol, bridge is not None)
    return Planned(profile, protocol, bridge, url, data, model)
