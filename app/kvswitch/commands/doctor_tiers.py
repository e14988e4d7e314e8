"""``doctor``'s look at a second cache behind a profile's server (``Server.cache_tiers``), without a prompt.

A cache tier that is set up wrong does not fail a request: a chunk size the engine's block size does
not divide, a first level too small for the prompts it is given, a disk folder that went away or a Redis
that stopped, or the tier's process itself gone, each turns a HIT into a silent MISS. ``verify`` names
these around one request it sends; ``doctor`` reads the same pages at rest (the server's ``/metrics``,
the tier's own ``/metrics`` and settings) and names what they already show, through the same checks
(the tier's ``check`` and ``stalled``, ``tier_truth.unreachable``), so both speak with one voice.
"""

from __future__ import annotations

from kvswitch import servers
from kvswitch.core.models import Profile
from kvswitch.servers.tier_sources import TierSource, connected_tiers
from kvswitch.verify.api_detect import OPENAI_CHAT, api_root, auth_headers
from kvswitch.verify.evidence import parse_metrics
from kvswitch.verify.probe import Guard, ProbeError, get_json_or_text
from kvswitch.verify.tier_truth import problems, read_settings, scrape_tier, unreachable


def _with_tiers(profiles: list[Profile], active: Profile | None) -> list[Profile]:
    """The profiles whose server may have a cache tier behind it, the active one first, one per server."""
    ordered = ([active] if active is not None else []) + [p for p in profiles if p is not active]
    seen: set[str] = set()
    found = []
    for profile in ordered:
        server = servers.get(profile.kind)
        root = api_root(profile.base_url)
        if not server.cache_tiers or not root or root in seen:
            continue
        seen.add(root)
        found.append(profile)
    return found


def _source_findings(guard: Guard, profile: Profile, source: TierSource, metrics_url: str) -> list[str]:
    """What one connected tier's own pages say, at rest: its counters since it started and its settings."""
    tier = source.tier
    now = scrape_tier(guard, source.metrics_url)
    if now is None:
        return [unreachable(tier, source.metrics_url, source.linked)]
    settings = read_settings(guard, tier, source.metrics_url)
    headers = auth_headers(profile, OPENAI_CHAT)
    found = problems(guard, tier, metrics_url, headers, settings, None, now)
    if not found and tier.stalled is not None:  # a lookup held right now by a tier whose cause is unnamed
        found = list(tier.stalled(settings, now.values))
    return found


def server_findings(profile: Profile, timeout: float = 5.0) -> list[str]:
    """The troubles of the cache tiers behind one profile's server (none: no tier, or the server is off;
    whether it runs is ``verify``'s business)."""
    server = servers.get(profile.kind)
    root = api_root(profile.base_url)
    metrics_url = root + "/metrics"
    found: list[str] = []
    try:
        with Guard(timeout) as guard:
            got = get_json_or_text(guard, metrics_url, auth_headers(profile, OPENAI_CHAT))
            if got is None or got[0] != 200:
                return []
            page = parse_metrics(got[2].decode("utf-8", errors="replace"))
            for source in connected_tiers(server.name, page, root):
                found += _source_findings(guard, profile, source, metrics_url)
    except ProbeError as exc:
        found.append(f"{server.label}'s cache tier did not answer in {timeout:g} s: {exc.message}")
    return found


def tier_findings(profiles: list[Profile], active: Profile | None, timeout: float = 5.0) -> list[str]:
    """Every finding of the cache tiers behind the profiles' servers, one line each, naming the profile."""
    findings = []
    for profile in _with_tiers(profiles, active):
        root = api_root(profile.base_url)
        findings += [f"profile {profile.name!r} ({root}): {line}"
                     for line in server_findings(profile, timeout)]
    return findings
