"""Checks that catch profiles which work but silently cost the user (cache misses, auth conflicts).

Each warning explains the effect in words a user can act on, and where a fix is a set of env values
it carries them (``fix_env``) so the GUI can offer a one-click fix and the CLI can print it. What a
kind can serve (the Responses API Codex needs, a vendor API that wants a key) is read from its server
in ``kvswitch.servers``, which is why this lives in ``targets`` rather than ``core``.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from kvswitch import servers
from kvswitch.core.client_settings import claude_settings
from kvswitch.core.dangerous_env import dangerous_env
from kvswitch.core.envmap import CONTEXT_WINDOW_ENV, claude_env
from kvswitch.core.gateway_lint import check_gateway
from kvswitch.core.models import Profile
from kvswitch.core.presets import CACHE_SAFE_ENV
from kvswitch.targets.route_check import route_problems

LOOPBACK_HOSTS = servers.LOOPBACK_HOSTS
#: a client the profile points somewhere would find no route that serves it (refused by add/edit)
NO_ROUTE_LINT = "no-route"
#: a local profile for Claude Code whose context window nobody read or set (doctor names it)
NO_CONTEXT_WINDOW_LINT = "no-context-window"


@dataclass(frozen=True)
class LintWarning:
    """One finding. ``code`` is stable (for tests and for silencing); ``message`` is for people."""

    code: str
    message: str
    fix_env: dict[str, str] | None = None


def attribution_message() -> str:
    """Why the billing header matters, with the cost measured on the client version named."""
    catalog = claude_settings()
    header = catalog.get("CLAUDE_CODE_ATTRIBUTION_HEADER")
    saved = header.saved_per_new_conversation if header is not None else 0
    cost = f" (about {saved:,} prompt tokens more than without it; {catalog.where()})" if saved else ""
    return (
        "Claude Code puts a billing block that changes every conversation at the very start of the prompt, "
        "so the local server cannot reuse its KV cache: full prompt re-processing every new conversation"
        f"{cost}. Set CLAUDE_CODE_ATTRIBUTION_HEADER=0."
    )


#: Claude Code 2.1.332 with ``CLAUDE_CODE_MAX_CONTEXT_TOKENS`` below this refuses to send anything
#: ("Prompt is too long", exit 1): measured against a local server, build b11434, 24,576 refused and
#: 28,672 answered (its own prompt is about 14k tokens, and it keeps room for the answer)
CLAUDE_MIN_CONTEXT = 28_672

CACHING_SWITCHES = ("DISABLE_PROMPT_CACHING", "DISABLE_PROMPT_CACHING_SONNET", "DISABLE_PROMPT_CACHING_OPUS",
                    "DISABLE_PROMPT_CACHING_HAIKU")


def lint_profile(profile: Profile) -> list[LintWarning]:
    """Every finding for ``profile``, most costly first."""
    found: list[LintWarning] = []

    def warn(code: str, message: str, fix: dict[str, str] | None = None) -> None:
        found.append(LintWarning(code, message, fix))

    env = claude_env(profile, checked=False)
    server = servers.get(profile.kind)
    uses_claude = any(t == "claude" or t.startswith("claude-") for t in profile.targets)
    if profile.is_local and uses_claude:
        if env.get("CLAUDE_CODE_ATTRIBUTION_HEADER") != "0":
            warn("attribution-header", attribution_message(), {"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"})
        missing = {k: v for k, v in CACHE_SAFE_ENV.items()
                   if k != "CLAUDE_CODE_ATTRIBUTION_HEADER" and k not in env}
        if missing:
            settings = ", ".join(f"{k}={v}" for k, v in missing.items())
            warn("nonessential-traffic", "Claude Code will still phone home for telemetry and updates "
                 f"while using a local server; set {settings}.", missing)
        if CONTEXT_WINDOW_ENV not in env:  # neither read from the server nor set by hand
            warn(NO_CONTEXT_WINDOW_LINT, "Claude Code does not know how many tokens the server gives one "
                 "request and assumes a context window of 1m tokens, so it compacts far too late and the "
                 "server refuses the long prompt. Use the profile once while its server runs (KV Switch "
                 f"reads the window from it), or run: kvswitch profile edit {profile.name!r} "
                 "--context-window auto")
        if profile.context_window is not None and profile.context_window < CLAUDE_MIN_CONTEXT:
            warn("context-too-small", f"The server gives one request {profile.context_window:,} tokens; "
                 f"Claude Code 2.1.332 needs at least about {CLAUDE_MIN_CONTEXT:,} (its own prompt is "
                 "about 14k) and answers 'Prompt is too long'. Start the server with a larger -c, fewer "
                 "-np slots or a unified cache (-kvu).")
    if any(env.get(name) == "1" for name in CACHING_SWITCHES):
        warn("prompt-caching-disabled",
             "DISABLE_PROMPT_CACHING is set: every request pays for the whole prompt again.")
    if env.get("ANTHROPIC_AUTH_TOKEN") and env.get("ANTHROPIC_API_KEY"):
        warn("auth-conflict", "Both ANTHROPIC_AUTH_TOKEN (the profile's key) and ANTHROPIC_API_KEY are set; "
             "Claude Code warns about an auth conflict. Remove ANTHROPIC_API_KEY from the env block.")
    override = profile.env.get("ANTHROPIC_BASE_URL")
    if override is not None and override.rstrip("/") != profile.base_url:
        warn("base-url-override", "The env block sets ANTHROPIC_BASE_URL to something other than the "
             "profile's base URL; Claude Code uses the env value, Codex the base URL.")
    parts = urlsplit(profile.base_url)
    if parts.scheme == "http" and profile.key and (parts.hostname or "") not in LOOPBACK_HOSTS:
        warn("plain-http-key", f"The API key is sent unencrypted to {parts.hostname}; use https:// "
             "unless this is a trusted network.")
    if "codex" in profile.targets and not server.serves_responses_api:
        warn(servers.NO_RESPONSES_API_LINT, "Codex speaks the OpenAI Responses API, which "
             f"{server.label}'s API does not serve; remove the codex target from this profile.")
    for need in server.client_needs:  # what the server must be started with for a client (servers/*.py)
        if any(t == need.client or t.startswith(f"{need.client}-") for t in profile.targets):
            warn(need.code, need.message)
    check_gateway(profile, warn, LOOPBACK_HOSTS)
    risky = dangerous_env(profile.env)
    if risky and not profile.allow_dangerous_env:
        warn("dangerous-env-unconfirmed", f"The env block sets {', '.join(risky)}, which change how shells, "
             "the loader or Claude Code run programs; KV Switch will not write the profile until you confirm "
             "(--allow-dangerous-env, or the editor's box) or remove them.")
    # a vendor's hosted API that wants a key: without one Claude Code signs in with the user's login;
    # through the gateway it sends the local token instead, and the gateway forwards no key at all
    vendor_keyed = server.vendor_api and server.needs_key
    if profile.via_gateway and not profile.key and server.needs_key and not profile.is_local:
        host = urlsplit(profile.base_url).hostname
        warn("no-key", f"No API key: the gateway forwards the clients' requests to {host} without one, "
             f"and a hosted API refuses them (401). Add it: kvswitch profile edit {profile.name!r} "
             "--api-key-stdin")
    elif vendor_keyed and not profile.key and "ANTHROPIC_API_KEY" not in profile.env:
        warn("no-key", "No API key: Claude Code will fall back to your Claude login (subscription), if any.")
    for problem in route_problems(profile):
        warn(NO_ROUTE_LINT, problem)
    return found
