"""One probe request, measured: the answer's own cache numbers plus the ``/metrics`` delta around it.

Answers alone are not enough: a server build may drop the ``message_start`` event (which carries the
Messages API usage) from a stream, and another omits ``cached_tokens`` when it is zero. Scraping
the Prometheus counters right before and after each request gives an independent count.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from kvswitch import servers
from kvswitch.core.models import Profile
from kvswitch.servers.base import CacheTier
from kvswitch.servers.tier_sources import connected_tiers, tier_readings
from kvswitch.verify import api_detect
from kvswitch.verify.api_detect import ServerInfo, api_root, auth_headers
from kvswitch.verify.evidence import Reading, metrics_reading, parse_metrics
from kvswitch.verify.instances import Spread
from kvswitch.verify.probe import Guard, ProbeError, StreamResult, get_json_or_text, stream_request
from kvswitch.verify.prompts import build_body
from kvswitch.verify.tier_truth import (
    TierPage,
    problems,
    read_settings,
    scrape_tier,
    split,
    stall_note,
    unreachable,
)


@dataclass
class Target:
    """Where and how to send the probe's requests, once detection is done."""

    profile: Profile
    server: ServerInfo
    api: str
    model: str

    @property
    def url(self) -> str:
        return api_root(self.profile.base_url) + api_detect.ENDPOINTS[self.api]

    @property
    def headers(self) -> dict[str, str]:
        return auth_headers(self.profile, self.api)

    def body(self, prefix: str, suffix: str) -> dict[str, Any]:
        return build_body(self.api, self.model, prefix, suffix)


@dataclass
class Measured:
    """One request with the cache numbers every source gave for it."""

    result: StreamResult
    readings: list[Reading] = field(default_factory=list)
    prefix: str = ""
    #: which cache tier served the prefix (a server with a second cache tier behind it)
    served_by: str | None = None
    #: the prompt's tokens by tier, from the server's and the tier's own counters (``TierSplit.to_json``)
    tiers: dict[str, Any] | None = None
    #: the same, in words (``TierSplit.describe``)
    tiers_text: str | None = None
    #: the tier's settings as its own pages gave them (its ``chunk_size``)
    tier_settings: Any = None
    #: what the tier's settings and counters say went wrong (each with its fix), or that it is silent
    tier_problems: list[str] = field(default_factory=list)
    #: the connected tier whose numbers these are
    tier: CacheTier | None = None
    #: behind a router: the instance that ran the request, and every instance's counter (``Spread``)
    instance: str | None = None
    instance_text: str | None = None


def scrape(guard: Guard, server: ServerInfo, profile: Profile) -> dict[str, float] | None:
    if server.metrics_url is None:
        return None
    got = get_json_or_text(guard, server.metrics_url, auth_headers(profile, api_detect.OPENAI_CHAT))
    if got is None or got[0] != 200:
        return None
    return parse_metrics(got[2].decode("utf-8", errors="replace"))


def measure(
    guard: Guard, target: Target, body: Mapping[str, Any], headers: Mapping[str, str] | None = None
) -> Measured:
    """Send ``body`` to the target's endpoint; raises ProbeError like ``stream_request``."""
    spread = _spread(guard, target)
    before = spread.begin() if spread else scrape(guard, target.server, target.profile)
    # behind a router the tier is the one the instances' own processes name (they share it)
    where = spread.instances.urls[0] if spread else target.profile.base_url
    tiers = connected_tiers(target.server.server, before, where) if before else []
    settings = read_settings(guard, tiers[0].tier, tiers[0].metrics_url) if tiers else None
    tier_before = [scrape_tier(guard, tier.metrics_url) for tier in tiers]
    try:
        result = stream_request(guard, target.url, body, headers if headers is not None else target.headers)
    except ProbeError as exc:
        timed_out = tiers and exc.kind == "timeout"
        first = tiers[0] if timed_out else None
        note = stall_note(first.tier, first.metrics_url, settings, first.linked) if first else None
        if note is None:
            raise
        raise ProbeError(exc.kind, f"{exc.message}. {note}", status=exc.status, body=exc.body) from None
    readings = list(result.readings)
    measured = Measured(result, readings, tier_settings=settings, tier=tiers[0].tier if tiers else None)
    if spread:
        before, after = spread.finish()  # the pages of the instance that ran it
        measured.instance, measured.instance_text = spread.ran, spread.describe()
    else:
        after = scrape(guard, target.server, target.profile) if before is not None else None
    if before is not None and after is not None:
        reading = metrics_reading(before, after)
        if reading is not None:
            readings.append(reading)
        tier_after = [scrape_tier(guard, tier.metrics_url) for tier in tiers]
        for tier, was, now in zip(tiers, tier_before, tier_after, strict=True):
            readings.extend(tier_readings(tier, before, after, _values(was), _values(now)))
        server = servers.find(target.server.server)
        if tiers and server is not None and server.served_by is not None:
            verdict = server.served_by(before, after, _values(tier_before[0]), _values(tier_after[0]))
            measured.served_by = verdict.describe() if verdict is not None else None
        if tiers:
            by_tier = split(tiers[0].tier, before, after, tier_before[0], tier_after[0], settings)
            if by_tier is not None:
                measured.tiers, measured.tiers_text = by_tier.to_json(), by_tier.describe()
            if tier_after[0] is None:
                silent = unreachable(tiers[0].tier, tiers[0].metrics_url, tiers[0].linked)
                measured.tier_problems.append(silent)
            else:
                measured.tier_problems += problems(guard, tiers[0].tier, _page_of(target, spread),
                                                   auth_headers(target.profile, api_detect.OPENAI_CHAT),
                                                   settings, tier_before[0], tier_after[0])
    return measured


def _page_of(target: Target, spread: Spread | None) -> str | None:
    """The ``/metrics`` of the server that ran the request: behind a router, that instance's own (the
    router's page is one instance's in turn, and asking it moves the router's turn)."""
    return f"{spread.ran}/metrics" if spread is not None and spread.ran else target.server.metrics_url


def _spread(guard: Guard, target: Target) -> Spread | None:
    """Behind a router, every instance is scraped (``verify.instances``); else ``None``."""
    found = target.server.instances
    if found is None:
        return None
    return Spread(found, lambda url: scrape(guard, replace(target.server, metrics_url=url), target.profile))


def _values(page: TierPage | None) -> dict[str, float] | None:
    return page.values if page is not None else None
