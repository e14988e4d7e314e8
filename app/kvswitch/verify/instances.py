"""Several instances of one server behind a router: which instance ran a request, by each one's own counters.

A router hands each request (and each ``GET /metrics``) to one instance in turn, so the page behind the
router's URL is some instance's, not the one that ran the probe. The server module declares the routers
it knows (``Server.routers``): the route where a router lists its instances (its own configuration, read
over HTTP, so nothing is configured) and the counter that moves on the instance that runs a request.
verify scrapes every instance before and after each request; the one whose counter moved ran it, and
that instance's two pages are the request's truth (its cache counters, its connected tiers). KV Switch
routes nothing itself: the router decides, verify only reads what happened.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from kvswitch import servers
from kvswitch.servers.base import Get, Router

Page = dict[str, float]
#: a metrics URL -> its parsed page, ``None`` when it did not answer
Scrape = Callable[[str], Page | None]


@dataclass(frozen=True)
class Instances:
    """The instances a router spreads requests over (root URLs, as the router lists them)."""

    router: Router
    urls: tuple[str, ...]

    def label(self, url: str) -> str:
        """``http://h:8001 (instance 1 of 2 behind the router)``: its place in the router's own list."""
        return f"{url} (instance {self.urls.index(url) + 1} of {len(self.urls)} behind {self.router.label})"


def detect_instances(get: Get, server_name: str | None) -> Instances | None:
    """The instances behind ``get``'s URL when it is a router the server module declares, else ``None``
    (a single server answers the router's route with 404); ``server_name`` ``None``: any declared router."""
    if server_name is None:
        routers = tuple(router for server in servers.all() for router in server.routers)
    else:
        server = servers.find(server_name)
        routers = server.routers if server is not None else ()
    for router in routers:
        status, data = get(router.route)
        listed = data.get(router.field) if status == 200 and isinstance(data, Mapping) else None
        if not isinstance(listed, list):
            continue
        urls = tuple(dict.fromkeys(url.rstrip("/") for url in listed
                                   if isinstance(url, str) and url.startswith(("http://", "https://"))))
        if urls:
            return Instances(router, urls)
    return None


@dataclass
class Spread:
    """One request as every instance counted it: each one's page before and after; who ran it."""

    instances: Instances
    scrape: Scrape
    before: dict[str, Page | None] = field(default_factory=dict)
    after: dict[str, Page | None] = field(default_factory=dict)

    def begin(self) -> Page | None:
        """Scrape every instance; one answering page (each shows which tiers are connected)."""
        self.before = {url: self.scrape(url + "/metrics") for url in self.instances.urls}
        return next((page for page in self.before.values() if page is not None), None)

    def finish(self) -> tuple[Page | None, Page | None]:
        """Scrape every instance again; the pages of the one that ran the request (``None``s when no
        single instance's counter moved: another client's request in between, or an instance not read)."""
        self.after = {url: self.scrape(url + "/metrics") for url in self.instances.urls}
        ran = self.ran
        return (self.before[ran], self.after[ran]) if ran is not None else (None, None)

    def moved(self, url: str) -> int | None:
        """How far the instance's ``ran_counter`` moved (``None``: not read both times)."""
        was, now = self.before.get(url), self.after.get(url)
        if was is None or now is None:
            return None
        counter = self.instances.router.ran_counter
        return int(now.get(counter, 0.0) - was.get(counter, 0.0))

    @property
    def ran(self) -> str | None:
        moved = [url for url in self.instances.urls if (self.moved(url) or 0) > 0]
        return moved[0] if len(moved) == 1 else None

    def describe(self) -> str:
        """Which instance ran the request, with every instance's counter delta."""
        counter = self.instances.router.ran_counter.removesuffix("_total")
        deltas = ", ".join(f"{url} {'not read' if (n := self.moved(url)) is None else f'+{n}'}"
                           for url in self.instances.urls)
        ran = self.ran
        head = f"ran on {self.instances.label(ran)}" if ran else "no single instance ran it"
        return f"{head}: {counter} {deltas}"


def given_instances(server_name: str | None, urls: Sequence[str]) -> Instances | None:
    """Instances the user named (``verify --instance URL``), for a router that does not list its own;
    read with the counter of the first router the server module declares (``None`` without one)."""
    server = servers.find(server_name)
    if server is None or not server.routers or not urls:
        return None
    declared = server.routers[0]
    router = Router("the given instances", "", "", declared.ran_counter)
    return Instances(router, tuple(dict.fromkeys(url.rstrip("/") for url in urls)))
