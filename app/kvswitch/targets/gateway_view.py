"""What a gateway-mode profile looks like to the client files: the gateway's URL and the local token
in place of the backend's URL and key.

The writers then work unchanged (Claude Code's ``ANTHROPIC_BASE_URL`` + ``ANTHROPIC_AUTH_TOKEN``,
Codex's ``base_url`` + its key variable), and the real key never reaches a client's file: it stays in
``profiles.json``, which only the gateway reads.
"""

from __future__ import annotations

from pydantic import SecretStr

from kvswitch.core.gateway_config import CLIENT_PATHS, ensure_token, load_token, read_routes
from kvswitch.core.models import Profile, ProfileKind
from kvswitch.core.paths import AppPaths


def client_view(profile: Profile, paths: AppPaths, *, issue_token: bool = True) -> Profile:
    """``profile`` as its targets write it: unchanged, or pointed at the gateway when ``via_gateway``.

    ``issue_token=False`` is for readers (``doctor``): a missing token file stays missing, since a
    token issued by a read would differ from the one a running gateway checks.
    """
    if not profile.via_gateway:
        return profile
    routes = read_routes(paths)
    token = ensure_token(paths) if issue_token else (load_token(paths) or "")
    return profile.model_copy(update={
        "base_url": routes.client_url("claude"),
        "api_key": SecretStr(token) if token else None,
        "key_env": "ANTHROPIC_AUTH_TOKEN",
        "kind": ProfileKind.CUSTOM,  # what the client talks to is the gateway, whatever serves behind it
    })


def gateway_codex_url(view: Profile) -> str:
    """Codex's ``base_url`` for a gateway view (whose ``base_url`` is the Claude Code one)."""
    root = view.base_url.removesuffix(CLIENT_PATHS["claude"])
    return root + CLIENT_PATHS["codex"]
