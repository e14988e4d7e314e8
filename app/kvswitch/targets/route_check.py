"""Every client a profile points somewhere must find a route there that serves it.

A profile's targets decide which clients it sends where: Claude Code (its settings files, or shell
targets alone), Codex, OpenCode. Through the gateway each client lands on its own route, which
forwards to the profile's backend in the client's protocol or through a bridge. When no route or no
bridge serves a client, that client does not get an error once: it retries 503s (Claude Code), or
hangs (OpenCode on a Messages route), in every session until the user finds out why. So these are
refused when a profile is added or edited, and ``doctor`` lists them for profiles saved before.

What a backend serves comes from ``kvswitch.servers.protocols`` (the catalog for a vendor URL, else the
server kind), which is why this lives in ``targets`` rather than ``core``.
"""

from __future__ import annotations

from kvswitch.core.errors import ProfileError
from kvswitch.core.gateway_config import (
    BRIDGED_PROTOCOLS,
    GatewayClient,
    clients_of_targets,
    is_opencode_target,
)
from kvswitch.core.models import Profile
from kvswitch.servers.protocols import CLIENT_PROTOCOL, served_protocols, upstream_protocol

CLIENT_NAMES: dict[GatewayClient, str] = {"claude": "Claude Code", "codex": "Codex"}


def _bridges_from(protocol: str) -> str:
    targets = sorted(up for own, up in BRIDGED_PROTOCOLS if own == protocol)
    return " or ".join(targets) if targets else "nothing"


def route_problems(profile: Profile) -> list[str]:
    """Why some client of ``profile`` would find nothing that serves it; empty when every one does."""
    problems: list[str] = []
    clients = clients_of_targets(profile.targets)
    for client in clients:
        own = CLIENT_PROTOCOL[client]
        name = CLIENT_NAMES[client]
        wanted = profile.protocol
        if wanted is not None and wanted != own and (own, wanted) not in BRIDGED_PROTOCOLS:
            problems.append(
                f"--protocol {wanted}: {name} speaks {own}, and no gateway bridge turns {own} into "
                f"{wanted} (it bridges {own} to {_bridges_from(own)}); choose --protocol "
                f"{_bridges_from(own).split(' or ')[0]} or {own}, or drop {name}'s target")
            continue
        if not profile.via_gateway or wanted is not None:
            continue  # a user's explicit protocol is trusted to be served
        served = served_protocols(profile)
        upstream = upstream_protocol(profile, client)
        if served and upstream not in served:
            problems.append(
                f"{name} through the gateway: {profile.base_url} serves {', '.join(served)}, not {own}, "
                f"and the gateway bridges {own} only to {_bridges_from(own)}, which it does not serve "
                f"either; every request of {name} would fail. Drop {name}'s target from this profile, "
                "or give it a backend URL that serves it")
    if profile.via_gateway and any(is_opencode_target(t) for t in profile.targets):
        problems.append(
            "OpenCode through the gateway: the gateway has no route for OpenCode (its OpenAI-compatible "
            "provider speaks chat completions; the gateway serves Claude Code's Messages route and "
            "Codex's Responses route), so OpenCode would wait on a route that never answers it. Give "
            "the OpenCode target a profile of its own with --direct")
    if profile.via_gateway and not clients and not any(is_opencode_target(t) for t in profile.targets):
        problems.append("through the gateway, but none of the targets is a client the gateway serves "
                        "(claude, codex, or shell targets for Claude Code)")
    return problems


def fallback_problems(profile: Profile, names: list[str]) -> list[str]:
    """Fallbacks that name no profile (``names``: every profile's name): the gateway would skip them
    without a word, and the user would believe a failover is in place."""
    known = set(names)
    return [f"fallback {fallback!r} is not a profile ('kvswitch profile list' shows them); add it first, "
            "or drop it with --fallback ''" for fallback in profile.fallbacks if fallback not in known]


def checked_wiring(profile: Profile, names: list[str], renamed_from: str | None = None) -> Profile:
    """``profile`` (being added, or edited from ``renamed_from``) with its fallbacks spelled as the
    profiles are (the gateway looks them up so), or a ``ProfileError`` naming every fallback that is no
    profile and every client that would find no route serving it (``profile add/edit``)."""
    others = [n for n in names if renamed_from is None or n.casefold() != renamed_from.casefold()]
    by_folded = {n.casefold(): n for n in others}
    fallbacks = [by_folded.get(f.casefold(), f) for f in profile.fallbacks]
    if fallbacks != profile.fallbacks:
        profile = profile.model_copy(update={"fallbacks": fallbacks})
    problems = fallback_problems(profile, others) + route_problems(profile)
    if problems:
        raise ProfileError(f"profile {profile.name!r}: " + "; ".join(problems))
    return profile
