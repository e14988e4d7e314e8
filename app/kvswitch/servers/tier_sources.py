"""A second cache behind the server (declared by the server module): which tier served a request's prefix.

The server declares its tiers (``Server.cache_tiers``): the marker on its own ``/metrics`` that shows the
tier is connected, the tier's own counters and where its process publishes them. Detection, never a
profile setting: the marker says a tier is there, the tier's process (``PROGRAM SUBCOMMAND --port-flag
N``) says where its counters are, else its default port on the server's host.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

import psutil

from kvswitch import servers
from kvswitch.servers.base import CacheTier, Reading
from kvswitch.servers.process_match import flag_value, program_name, script_argv

#: tier name -> metrics URL of the tier process the caller started itself (``kvswitch sweep``): several
#: tier processes may run on this machine, and only the caller knows which one its server talks to
_PINNED: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar("pinned_tiers", default=None)


@contextlib.contextmanager
def pinned_tier(name: str, metrics_url: str) -> Iterator[None]:
    """Within the block (this thread), tier ``name``'s counters are read at ``metrics_url``."""
    token = _PINNED.set({**(_PINNED.get() or {}), name: metrics_url})
    try:
        yield
    finally:
        _PINNED.reset(token)


@dataclass(frozen=True)
class TierSource:
    """A connected tier and the URL of its own ``/metrics``."""

    tier: CacheTier
    metrics_url: str
    #: the tier port the server's own arguments name (its ``link_flag``), when they name one
    linked: int | None = None


def connected_tiers(server_name: str | None, page: Mapping[str, float], base_url: str) -> list[TierSource]:
    """The tiers whose marker is on the server's ``/metrics`` page, with their own metrics URLs."""
    server = servers.find(server_name)
    if server is None:
        return []
    found = []
    parts = urlsplit(base_url)
    for tier in server.cache_tiers:
        if any(name.startswith(tier.metrics_marker) for name in page):
            host = parts.hostname or "127.0.0.1"
            linked = _linked(tier, parts.port)
            found.append(TierSource(tier, tier_metrics_url(tier, host, linked=linked), linked))
    return found


def _linked(tier: CacheTier, server_port: int | None) -> int | None:
    """The tier port the server's own process names (its arguments), so that with several tier processes
    on one machine the one this server uses is read."""
    if tier.linked_port is None or server_port is None:
        return None
    for argv in _argvs():
        port = tier.linked_port(argv, server_port)
        if port is not None:
            return port
    return None


def tier_metrics_url(tier: CacheTier, host: str, argvs: list[list[str]] | None = None,
                     linked: int | None = None) -> str:
    """The tier's metrics URL: the one pinned by the caller that started it, else from its running
    process (``--http-port N``), else its default port."""
    pinned = (_PINNED.get() or {}).get(tier.name) if argvs is None else None
    if pinned is not None:
        return pinned
    for argv in argvs if argvs is not None else _argvs():
        argv = list(script_argv(argv))
        if program_name(argv) != tier.program or argv[1:2] != [tier.subcommand]:
            continue
        if linked is not None and flag_value(argv, tier.link_flag) != str(linked):
            continue  # another tier process, not the one this server uses
        port = flag_value(argv, tier.port_flag)
        bound = flag_value(argv, tier.host_flag)
        if port and port.isdigit():
            where = bound if bound and bound not in ("0.0.0.0", "::") else host
            return f"http://{where}:{port}/metrics"
    return f"http://{host}:{tier.default_port}/metrics"


def _argvs() -> list[list[str]]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmdline = proc.info.get("cmdline")
        if cmdline:
            found.append(list(cmdline))
    return found


def tier_readings(source: TierSource, before: Mapping[str, float], after: Mapping[str, float],
                  tier_before: Mapping[str, float] | None, tier_after: Mapping[str, float] | None
                  ) -> list[Reading]:
    """The server's count of what the tier served, and the tier's own count, for one request."""
    tier = source.tier
    readings = []
    if tier.external_hits in after:
        hits = int(after[tier.external_hits] - before.get(tier.external_hits, 0.0))
        queried = int(after.get(tier.external_queries, 0.0) - before.get(tier.external_queries, 0.0))
        label = f"metrics {tier.external_hits.removesuffix('_total')}"
        readings.append(Reading(label, hits, queried or None))
    if tier_before is not None and tier_after is not None and tier.hit_tokens in tier_after:
        hits = int(tier_after[tier.hit_tokens] - tier_before.get(tier.hit_tokens, 0.0))
        asked = int(tier_after.get(tier.requested_tokens, 0.0)
                    - tier_before.get(tier.requested_tokens, 0.0))
        name = f"{tier.label} {tier.hit_tokens.removesuffix('_total')}"
        readings.append(Reading(name, hits, asked or None))
    return readings
