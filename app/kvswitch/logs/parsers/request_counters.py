"""vLLM's cache truth without a per-request log line: cache events from its ``/metrics`` counters.

At default verbosity vLLM (measured: 0.32.0) logs no per-request cache line, only a periodic engine
line (``Avg prompt throughput: … Prefix cache hit rate: 48.6%``), an average over a window that cannot
be tied to one request. Its Prometheus counters can: every scrape reads how many requests finished
(``vllm:request_success_total``), how many prompt tokens were scheduled (``vllm:prompt_tokens_total``)
and how many of them came from the prefix cache (``vllm:prefix_cache_hits_total``) or, with LMCache,
from the external cache (``vllm:external_prefix_cache_hits_total``). :class:`MetricsDeltas` turns the
increase between scrapes into :class:`~kvswitch.logs.model.CacheEvent` s.

One scrape in which one request finished gives that request's own numbers. When several finished
between two scrapes, the counters cannot say which token belongs to which request, so the event is an
*aggregate* (``requests`` > 1, the reason says so) rather than an invented per-request split. Tokens
counted while no request finished (a long prompt still running at the scrape) are kept and go to the
next event, so the totals always equal vLLM's counters. A counter that went down means the server
restarted: the next scrape is a new baseline and yields nothing.

With LMCache connected (its marker on vLLM's page) the reader also scrapes LMCache's own ``/metrics``
each time (``tier_counters``) and each event carries the tier split of its interval (``CacheEvent.tiers``);
for an aggregate event it is the split of all its requests together, as its other numbers are.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvswitch.core.prometheus import parse_samples
from kvswitch.logs.model import CacheEvent
from kvswitch.logs.parsers.tier_counters import TierInterval, TierPage, connect, scrape_tier

SUCCESS = "vllm:request_success_total"
PROMPT = "vllm:prompt_tokens_total"
QUERIES = "vllm:prefix_cache_queries_total"
HITS = "vllm:prefix_cache_hits_total"
EXTERNAL_QUERIES = "vllm:external_prefix_cache_queries_total"
EXTERNAL_HITS = "vllm:external_prefix_cache_hits_total"
COUNTERS = (SUCCESS, PROMPT, QUERIES, HITS, EXTERNAL_QUERIES, EXTERNAL_HITS)
#: gauges: requests vLLM holds now (both 0 and nothing pending: no lookup of this vLLM is in flight)
RUNNING = "vllm:num_requests_running"
WAITING = "vllm:num_requests_waiting"

#: the reasons an event carries (``engine_text`` translates them for the window)
ONE_REQUEST = "from the server's /metrics: the counters' increase over one finished request"
AGGREGATE = ("from the server's /metrics: {requests} requests finished between two scrapes; "
             "their totals, not split per request")

_WANTED = frozenset((*COUNTERS, RUNNING, WAITING))


def parse_counters(text: str) -> dict[str, float]:
    """The counters vLLM's cache truth needs from a Prometheus text page, summed over label sets
    (one per engine, finish reason or model). A counter the page lacks is absent, not zero."""
    return parse_samples(text, _WANTED)


def has_cache_counters(values: dict[str, float]) -> bool:
    """Whether a page is vLLM's with what an event needs (finished requests and prompt tokens)."""
    return SUCCESS in values and PROMPT in values


@dataclass
class _Pending:
    prompt: float = 0.0
    hits: float = 0.0
    external_hits: float = 0.0


class MetricsDeltas:
    """Scrape after scrape (``feed``), the cache events of the requests that finished in between.

    ``server`` names the events' server (``vllm``, or ``lmcache`` when LMCache serves the external
    cache). ``scrape`` counts the scrapes, so each event's ``first_line``/``last_line`` say which
    scrapes it spans (the "line" of a source that has no lines).
    """

    def __init__(self, server: str = "vllm"):
        self.server = server
        self._last: dict[str, float] | None = None
        self._pending = _Pending()
        self._since_scrape = 0
        self.scrape = 0
        #: the second cache connected to this vLLM (LMCache), whose split each event carries
        self.tiers: TierInterval | None = None

    def reset(self) -> None:
        self._last = None
        self._pending = _Pending()

    @property
    def at_baseline(self) -> bool:
        """Whether the next scrape is a baseline (the first, or the first after a reset)."""
        return self._last is None

    def _idle(self, values: dict[str, float]) -> bool:
        pending = self._pending
        return (RUNNING in values and values[RUNNING] == 0 and values.get(WAITING, 0.0) == 0
                and pending.prompt == pending.hits == pending.external_hits == 0)

    def feed(self, values: dict[str, float], timestamp: str | None = None,
             tier: TierPage | None = None) -> list[CacheEvent]:
        """The events one scrape completes (none on the first, the baseline); ``tier``: the connected
        second cache's page, read right before ``values``."""
        self.scrape += 1
        if not has_cache_counters(values):
            return []
        last, self._last = self._last, dict(values)
        if last is None or any(values.get(name, 0.0) < last.get(name, 0.0) for name in COUNTERS):
            self._pending = _Pending()  # first sight, or the server restarted: a new baseline
            self._since_scrape = self.scrape
            if self.tiers is not None:
                self.tiers.restart(values, tier)
            return []

        def delta(name: str) -> float:
            return values.get(name, 0.0) - last.get(name, 0.0)

        self._pending.prompt += delta(PROMPT)
        self._pending.hits += delta(HITS)
        self._pending.external_hits += delta(EXTERNAL_HITS)
        finished = round(delta(SUCCESS))
        if finished <= 0:
            if self.tiers is not None and self._idle(values):
                self.tiers.restart(values, tier, idle=True)  # keep another instance's lookups out
            return []
        pending, self._pending = self._pending, _Pending()
        first, self._since_scrape = self._since_scrape + 1, self.scrape
        prompt = round(pending.prompt)
        cached = min(round(pending.hits + pending.external_hits), prompt)
        reason = ONE_REQUEST if finished == 1 else AGGREGATE.format(requests=finished)
        event = CacheEvent(
            server=self.server, slot=None, task=None, prompt_tokens=prompt, cached_tokens=cached,
            new_tokens=prompt - cached, prompt_ms=None, first_line=first, last_line=self.scrape,
            reason=reason, timestamp=timestamp, requests=finished,
            tiers=self.tiers.close(values, tier, finished) if self.tiers is not None else None,
        )
        return [event]


#: a /metrics page is a few tens of KB; anything far larger is not vLLM's and is not read whole
MAX_PAGE_BYTES = 4 * 1024 * 1024


class MetricsReader:
    """Scrapes one vLLM's ``/metrics`` and hands out the events each scrape completes.

    ``poll`` blocks for one HTTP GET (at most ``timeout`` seconds), so callers run it off the GUI thread.
    It never raises for a down or foreign server: ``status`` says what is wrong, in English the window
    translates, and the next poll tries again (and starts a new baseline).
    """

    def __init__(self, url: str, server: str = "vllm", *, timeout: float = 5.0,
                 headers: dict[str, str] | None = None):
        self.url = url
        self.timeout = timeout
        self.headers = dict(headers or {})
        self.deltas = MetricsDeltas(server)
        self.status: str | None = None

    def poll(self) -> list[CacheEvent]:
        # the tier's page first: a request that finished by vLLM's scrape had its lookup before it
        tier = self.deltas.tiers
        page = scrape_tier(tier.metrics_url, self.timeout) if tier is not None else None
        return self._poll(page)

    def _poll(self, tier: TierPage | None) -> list[CacheEvent]:
        import datetime  # noqa: PLC0415 - the reader thread alone needs these

        import httpx  # noqa: PLC0415

        from kvswitch.core import http_client  # noqa: PLC0415 - the one bounded reader (caps, deadline)
        from kvswitch.core.content_coding import UndecodableBody  # noqa: PLC0415
        from kvswitch.core.http import NetworkLimitError, ResponseTooLarge  # noqa: PLC0415

        try:
            with http_client.request("GET", self.url, timeout=self.timeout, limit=MAX_PAGE_BYTES,
                                     headers=self.headers, what=self.url) as answer:
                if answer.status != 200:
                    self.status = f"waiting for {self.url} (HTTP {answer.status})"
                    self.deltas.reset()
                    return []
                body = answer.read()
        except NetworkLimitError as exc:
            self.status = (f"{self.url} is not a metrics page with request counters (over 4 MB)"
                           if isinstance(exc, ResponseTooLarge | UndecodableBody)
                           else f"waiting for {self.url}")
            self.deltas.reset()
            return []
        except (httpx.HTTPError, OSError):
            self.status = f"waiting for {self.url}"
            self.deltas.reset()
            return []
        text = body.decode("utf-8", "replace")
        values = parse_counters(text)
        if not has_cache_counters(values):
            self.status = f"{self.url} has no request counters"
            self.deltas.reset()
            return []
        self.status = f"reading the server's counters at {self.url}"
        if self.deltas.at_baseline:  # whether LMCache is connected, once per (re)start of vLLM
            self.deltas.tiers = connect(self.deltas.server, text, self.url, self.timeout)
            tier = scrape_tier(self.deltas.tiers.metrics_url, self.timeout) if self.deltas.tiers else None
        now = datetime.datetime.now().astimezone().isoformat(timespec="milliseconds")
        return self.deltas.feed(values, timestamp=now, tier=tier)
