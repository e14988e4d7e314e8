"""The record's reads of servers' own pages (``/metrics``, a cache tier's ``/config``) and the background work
around them, shared by the counts read for answers without counts (``counts_fallback``) and the split by
cache tier (``tier_record``): one connection pool per reader, every read bounded in time and size, so a
page that hangs or floods costs a row its numbers, nothing more.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Coroutine
from dataclasses import dataclass
from typing import TypeVar

import aiohttp

from kvswitch.core.prometheus import parse_samples

T = TypeVar("T")

#: a page up to this size is parsed on the event loop: the real ones (2 to 59 KB, the largest a server's
#: with its cache tier connected) cost about 1 ms there (``benchmarks/gateway_pages.py``); a larger one,
#: which only a broken or hostile server sends, is parsed on a worker thread so other requests' bytes
#: keep flowing (a 2 MB page held the loop about 30 ms when parsed in place)
INLINE_PARSE_CHARS = 256 << 10


@dataclass(slots=True)
class Page:
    """One read of a ``/metrics`` page: its summed values and its text (the tier's labels)."""

    values: dict[str, float]
    text: str
    #: when it came back (the record's monotonic clock)
    at: float = 0.0


async def _on_headers_sent(_session: aiohttp.ClientSession, context: object, _params: object) -> None:
    sent = getattr(context, "trace_request_ctx", None)
    if isinstance(sent, asyncio.Event):
        sent.set()


async def page_values(text: str, names: Collection[str] | None = None) -> dict[str, float]:
    """``parse_samples`` of a page, in place when it is the size of a real one, else on a thread."""
    if len(text) <= INLINE_PARSE_CHARS:
        return parse_samples(text, names)
    return await asyncio.to_thread(parse_samples, text, names)


class PageReader:
    """Kept-alive connections to the pages, opened on first use. A read given ``sent`` (an event) sets it
    once its request is on the wire, so a reading can be known to reach the server before the request
    it precedes."""

    def __init__(self, timeout_s: float, max_bytes: int) -> None:
        self.timeout_s = timeout_s
        self.max_bytes = max_bytes
        self._session: aiohttp.ClientSession | None = None

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            trace = aiohttp.TraceConfig()
            trace.on_request_headers_sent.append(_on_headers_sent)
            self._session = aiohttp.ClientSession(auto_decompress=False, trace_configs=[trace],
                                                  timeout=aiohttp.ClientTimeout(total=self.timeout_s))
        return self._session

    async def get(self, url: str, key: str, sent: asyncio.Event | None = None) -> str:
        """One bounded GET's text (``key``: the server's own, sent as a bearer token); raises
        ``aiohttp.ClientError``, ``OSError``, ``TimeoutError`` or ``ValueError`` on failure."""
        headers = {"Accept-Encoding": "identity"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        async with (asyncio.timeout(self.timeout_s),
                    self._client().get(url, headers=headers, trace_request_ctx=sent) as answer):
            coding = answer.headers.get("Content-Encoding", "identity")
            if answer.status != 200 or coding != "identity":
                raise ValueError(f"HTTP {answer.status} {coding}")
            data = bytearray()
            async for piece in answer.content.iter_any():
                data += piece
                if len(data) > self.max_bytes:
                    raise ValueError(f"page over {self.max_bytes >> 20} MB")
        return data.decode("utf-8", "replace")

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()


class BackgroundWork:
    """Tasks kept alive while they run (the event loop holds only weak references), drained on stop."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[object]] = set()

    def __bool__(self) -> bool:
        return bool(self._tasks)

    def keep(self, work: Coroutine[object, object, T]) -> asyncio.Task[T]:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def drain(self, timeout_s: float) -> None:
        """Let the running tasks finish, for ``timeout_s`` at most."""
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=timeout_s)
