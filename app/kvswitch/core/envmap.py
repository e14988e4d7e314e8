"""Which environment variables a profile sets, shared by every writer.

Claude Code's ``settings.json`` env, the shell rc blocks and the Windows user environment must agree
exactly, or a user sees one backend in the terminal and another in Claude Code. One function decides.
"""

from __future__ import annotations

from kvswitch.core.gateway_config import clients_of_targets
from kvswitch.core.models import Profile

#: Codex reads a custom provider's key from the env var its ``env_key`` names; ours is dedicated so
#: that switching never clobbers a hand-set ``OPENAI_API_KEY``.
CODEX_KEY_ENV = "KVSWITCH_API_KEY"

#: what ``ANTHROPIC_AUTH_TOKEN`` holds for a local server that needs no key: Claude Code (2.1.332) asks a
#: fresh, not logged-in user to ``/login`` unless some credential variable is set, and a local
#: server started without a key of its own ignores the header. Not a secret, so it is shown unmasked.
NO_KEY_PLACEHOLDER = "kvswitch-local-no-key"
#: Claude Code's variable for the context window of a model it does not know (found by ``strings`` in
#: 2.1.332); without it, it assumes 1M tokens and never compacts before a local server overflows
CONTEXT_WINDOW_ENV = "CLAUDE_CODE_MAX_CONTEXT_TOKENS"
CREDENTIAL_ENVS = ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_API_KEY")


def claude_env(profile: Profile, *, checked: bool = True) -> dict[str, str]:
    """The ``env`` entries Claude Code needs for this profile, in a stable, readable order.

    The profile's own env block comes last and wins, so a user can override anything we derive.
    Writers get a ``ProfileError`` for dangerous names the user never confirmed (a profile saved by
    an older version); ``checked=False`` is for readers such as the lint.
    """
    env: dict[str, str] = {"ANTHROPIC_BASE_URL": profile.base_url}
    if profile.key:
        env[profile.key_env] = profile.key  # the variable the vendor reads (bearer vs x-api-key)
    elif needs_placeholder_key(profile):
        env["ANTHROPIC_AUTH_TOKEN"] = NO_KEY_PLACEHOLDER
    if profile.model:
        env["ANTHROPIC_MODEL"] = profile.model
    env.update(profile.models.env())
    if profile.context_window:
        env[CONTEXT_WINDOW_ENV] = str(profile.context_window)
    env.update(profile.confirmed_env() if checked else profile.env)
    return env


def needs_placeholder_key(profile: Profile) -> bool:
    """A local server's profile without a key (and no credential in its own env block): without any
    credential variable Claude Code stops at its login screen, so a placeholder is written.

    Cloud profiles never get one: without a key there, the user's own Claude login must stay in use.
    """
    return profile.is_local and not profile.key and not any(name in profile.env for name in CREDENTIAL_ENVS)


def codex_key_env(profile: Profile) -> str | None:
    """Name of the env var carrying the key for Codex, or ``None`` when the profile has no key."""
    return CODEX_KEY_ENV if profile.key else None


def shell_env(profile: Profile) -> dict[str, str]:
    """What the shell and Windows-environment targets export: Claude's env plus the key variable that
    Codex's ``env_key`` and OpenCode's ``{env:...}`` reference name.

    Through the gateway, Claude Code's variables are exported only when the profile routes Claude
    Code (``gateway_config.clients_of_targets``): a Codex-only gateway profile would otherwise send
    every new shell's Claude Code to a gateway route nothing is routed to (503 on every request).
    """
    env = claude_env(profile)
    if profile.via_gateway and "claude" not in clients_of_targets(profile.targets):
        env = {}
    key_env = codex_key_env(profile)
    if key_env and ("codex" in profile.targets or "opencode" in profile.targets):
        env[key_env] = profile.key
    return env
