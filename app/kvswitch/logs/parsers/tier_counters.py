"""A second cache's own counters beside vLLM's in the live panel: which tier served an event's prompts.

vLLM counts what its connector brought in as one number (``vllm:external_prefix_cache_hits_total``);
only LMCache's own ``/metrics`` splits a lookup's hit into L1 (its DRAM) and L2 (its adapters), as
``kvswitch verify`` reads it (``servers.lmcache.tier_split`` through the server's ``CacheTier``). The live
reader (``request_counters.MetricsReader``) scrapes that page each time it reads vLLM's, so every event's
interval (the scrapes it spans) has a first and a last page of both; the split is the counters' increase
over exactly that interval, never inferred. Several vLLMs behind a router may share one LMCache, whose
counters then move for the other instance's lookups too: an interval starts again at every scrape where
its own vLLM was idle (nothing running, waiting or pending), so another instance's earlier lookups stay
out of it; what remains shared is said in the event (``vllm_external`` beside LMCache's hit). vLLM's gauges
can lag its scheduler by a step, so a scrape may find it "idle" just after its own lookup (seen once in
a fresh-clone CI run, behind vllm-router 0.1.17): when the interval since such a restart holds fewer
LMCache hit tokens than vLLM itself counted as brought in by LMCache, the restart cut this vLLM's own
lookup out, and the split is taken over the interval since the previous event instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kvswitch.core.prometheus import parse_samples

if TYPE_CHECKING:
    from kvswitch.servers.base import CacheTier

#: a second cache's page is a few tens of KB; its settings pages a few KB
MAX_TIER_PAGE = 4 * 1024 * 1024


@dataclass(frozen=True)
class TierPage:
    """One scrape of the tier's ``/metrics``: its counters (``*_total``, summed) and the raw text (the
    per-adapter loads are labelled)."""

    values: dict[str, float]
    text: str


def tier_page(text: str) -> TierPage:
    """The counters of a tier's page; gauges are left out (only counters say what an interval did)."""
    return TierPage({k: v for k, v in parse_samples(text).items() if k.endswith("_total")}, text)


#: an interval's start: the server's counters and the tier's page at that scrape
_Start = tuple[dict[str, float], TierPage | None]


class TierInterval:
    """The pages (vLLM's counters, the tier's) at the start of the current event's interval.

    ``restart`` marks a new start; ``close`` gives the split of the interval that ends at this scrape
    (``TierSplit.to_json`` plus ``requests``, ``vllm_external`` and ``source``) and starts the next one.
    """

    def __init__(self, tier: CacheTier, metrics_url: str, settings: Any = None):
        self.tier = tier
        self.metrics_url = metrics_url
        self.settings = settings
        self._start: _Start | None = None
        #: the start at the previous event (or baseline), before any restart at an idle scrape
        self._since_event: _Start | None = None

    def restart(self, values: Mapping[str, float], page: TierPage | None, *, idle: bool = False) -> None:
        """A new start (``idle``: at a scrape where this vLLM looked idle; the interval since the previous
        event is kept in case its gauges lagged)."""
        self._start = (dict(values), page)
        if not idle:
            self._since_event = self._start

    def close(self, values: Mapping[str, float], page: TierPage | None,
              requests: int) -> dict[str, Any] | None:
        """The split over the interval, or ``None`` when the tier's page was missing at either end or
        its counters went down (the tier restarted: its figures are no interval's)."""
        start, since_event = self._start, self._since_event
        self._start = self._since_event = (dict(values), page)
        data = self._split(start, values, page, requests)
        if (data is not None and since_event is not None and since_event is not start
                and _tier_hits(data) < data["vllm_external"]):
            longer = self._split(since_event, values, page, requests)
            data = longer if longer is not None else data
        return data

    def _split(self, start: _Start | None, values: Mapping[str, float], page: TierPage | None,
               requests: int) -> dict[str, Any] | None:
        if start is None or page is None or self.tier.split is None:
            return None
        was_values, was = start
        if was is None:
            return None
        if any(page.values.get(name, 0.0) < value for name, value in was.values.items()):
            return None
        split = self.tier.split(was_values, values, was.values, page.values, was.text, page.text,
                                self.settings)
        if split is None:
            return None
        data: dict[str, Any] = split.to_json()
        external = self.tier.external_hits
        data["requests"] = requests
        data["vllm_external"] = int(values.get(external, 0.0) - was_values.get(external, 0.0))
        data["source"] = self.metrics_url
        return data


def _tier_hits(data: Mapping[str, Any]) -> int:
    """The hit tokens the tier's own counters moved by over an interval (its first and second level)."""
    return sum(v for k in ("lmcache_l1", "lmcache_l2") if isinstance(v := data.get(k), int))


def _get(url: str, timeout: float) -> tuple[int, bytes] | None:
    """One bounded GET (``None``: nothing answered, or not a page)."""
    import httpx  # noqa: PLC0415 - the reader thread alone needs these

    from kvswitch.core import http_client  # noqa: PLC0415
    from kvswitch.core.http import NetworkLimitError  # noqa: PLC0415

    try:
        with http_client.request("GET", url, timeout=timeout, limit=MAX_TIER_PAGE, what=url) as answer:
            return answer.status, answer.read() if answer.status == 200 else b""
    except (NetworkLimitError, OSError, httpx.HTTPError):
        return None


def scrape_tier(url: str, timeout: float) -> TierPage | None:
    """The tier's own ``/metrics`` (its own port, no key), ``None`` when it does not answer."""
    got = _get(url, timeout)
    if got is None or got[0] != 200:
        return None
    return tier_page(got[1].decode("utf-8", "replace"))


def read_settings(tier: CacheTier, metrics_url: str, timeout: float) -> Any:
    """The tier's settings from its own pages (its chunk size), once per connection; ``None`` when it
    declares none or does not answer."""
    from kvswitch.core.strictparse import loads  # noqa: PLC0415

    if tier.settings is None or not tier.settings_routes:
        return None
    root = metrics_url.removesuffix("/metrics")
    pages: list[Any] = []
    for route in tier.settings_routes:
        got = _get(root + route, timeout)
        try:
            pages.append(loads(got[1]) if got is not None and got[0] == 200 else None)
        except ValueError:
            pages.append(None)
    return tier.settings(pages) if pages[0] is not None else None


def connect(server: str, vllm_text: str, vllm_url: str, timeout: float) -> TierInterval | None:
    """The second cache connected to the server whose page this is (its marker on the page), with its own
    metrics URL (from the running processes, as verify finds it) and settings; ``None``: none connected."""
    from kvswitch.servers.tier_sources import connected_tiers  # noqa: PLC0415 - reads the process table

    found = connected_tiers(server, parse_samples(vllm_text), vllm_url.removesuffix("/metrics"))
    if not found:
        return None
    source = found[0]
    return TierInterval(source.tier, source.metrics_url, read_settings(source.tier, source.metrics_url,
                                                                       timeout))
