"""Lint of a gateway's base URL and key placement: the mistakes that give a 404 or a 401 on first use.

Claude Code appends ``/v1/messages`` to ``ANTHROPIC_BASE_URL``, so a URL ending in the route, or in
``/v1``, or missing the vendor's own path segment sends every request to a path that does not
exist. A vendor that reads ``x-api-key`` refuses a key sent as Bearer, and the other way round.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlsplit

from kvswitch.core.catalog import vendors_for_host
from kvswitch.core.models import Profile

#: route suffixes a base URL must not carry (the client appends its own route)
ROUTE_SUFFIXES = (
    "/v1/messages",
    "/messages",
    "/v1/chat/completions",
    "/chat/completions",
    "/v1/responses",
    "/responses",
    "/v1/models",
    "/models",
)

Warn = Callable[[str, str], None]


def _uses_claude(profile: Profile) -> bool:
    return any(t == "claude" or t.startswith("claude-") for t in profile.targets)


def check_gateway(profile: Profile, warn: Warn, loopback_hosts: frozenset[str]) -> None:
    """Add the base-URL-shape, plain-http and key-variable findings for ``profile`` through ``warn``."""
    parts = urlsplit(profile.base_url)
    path = parts.path.rstrip("/")
    host = (parts.hostname or "").lower()
    claude = _uses_claude(profile)
    suffix = next((s for s in ROUTE_SUFFIXES if path.lower().endswith(s)), None)
    if suffix:
        trimmed = profile.base_url[: len(profile.base_url) - len(suffix)]
        warn(
            "url-route-suffix",
            f"The base URL ends in the route {suffix}; clients append their own route "
            f"(Claude Code adds /v1/messages), so requests go to {suffix}/v1/messages and fail with 404. "
            f"Use {trimmed or profile.base_url}.",
        )
    elif "/v1/v1" in path + "/":
        warn("url-double-v1", "The base URL contains /v1/v1; remove one /v1.")
    elif claude and path.endswith("/v1"):
        warn(
            "url-trailing-v1",
            "Claude Code appends /v1/messages to the base URL, so a URL ending in /v1 "
            f"sends it to {path}/v1/messages (404 on most servers). Remove the trailing /v1 for Claude "
            "Code (Codex profiles of local kinds add it themselves).",
        )
    if parts.scheme == "http" and host not in loopback_hosts and not profile.key and not profile.is_local:
        warn(
            "plain-http",
            f"{host} is reached over plain http://: anything the client sends (prompts, "
            "code) crosses the network unencrypted; use https://.",
        )
    known = vendors_for_host(host)
    if not known or suffix:
        return
    paths = {v.path for v in known} | {
        urlsplit(v.codex_base_url).path.rstrip("/") for v in known if v.codex_base_url and not claude
    }
    if claude and path not in paths:
        expected = " or ".join(v.base_url for v in known)
        warn(
            "url-vendor-path",
            f"{host} serves Claude Code's API at {expected}, not at {profile.base_url}; "
            "a missing or extra path segment gives a 404 on every request.",
        )
    match = next((v for v in known if v.path == path), None)
    if match and "key_env" not in match.verified:
        return  # an unconfirmed key variable is a hint for 'kvswitch test', not a warning
    if claude and match and profile.key and profile.key_env != match.key_env:
        warn(
            "key-variable",
            f"{match.name.en} reads the key from {match.key_env}, but the profile puts it "
            f"in {profile.key_env}: requests will be refused with 401. Fix: kvswitch profile edit "
            f"{profile.name!r} --key-env {match.key_env}",
        )
    wrong = "ANTHROPIC_AUTH_TOKEN" if (match and match.key_env == "ANTHROPIC_API_KEY") else None
    if claude and match and wrong and profile.env.get(wrong) and not profile.key:
        warn(
            "key-variable",
            f"{match.name.en} reads the key from {match.key_env}; the env block puts it in "
            f"{wrong}. Move it: --unset-env {wrong} --api-key-stdin --key-env {match.key_env}",
        )
