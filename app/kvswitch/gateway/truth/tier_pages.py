"""The tier record's reads of ``/metrics`` pages (vLLM's and LMCache's): its own connection pool, every
read bounded in time and size, so that a page that hangs or floods costs a row its split, nothing more."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import aiohttp

#: a page larger than this is not a counters page and is not read whole
MAX_PAGE_BYTES = 2 << 20
#: one page read's deadline
READ_TIMEOUT_S = 2.0


@dataclass(slots=True)
class Page:
    """One read of a ``/metrics`` page: its summed values and its text (the tier's labels)."""

    values: dict[str, float]
    text: str
    #: when it came back (the record's monotonic clock)
    at: float = 0.0


class PageReader:
    """Kept-alive connections to the pages, opened on first use."""

    def __init__(self) -> None:
        self._session: aiohttp.ClientSession | None = None

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(auto_decompress=False,
                                                  timeout=aiohttp.ClientTimeout(total=READ_TIMEOUT_S))
        return self._session

    async def get(self, url: str, key: str) -> str:
        """One bounded GET's text (``key``: the server's own, sent as a bearer token); raises
        ``aiohttp.ClientError``, ``OSError``, ``TimeoutError`` or ``ValueError`` on failure."""
        headers = {"Accept-Encoding": "identity"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        async with asyncio.timeout(READ_TIMEOUT_S), self._client().get(url, headers=headers) as answer:
            if answer.status != 200 or answer.headers.get("Content-Encoding", "identity") != "identity":
                raise ValueError(f"HTTP {answer.status}")
            data = bytearray()
            async for piece in answer.content.iter_any():
                data += piece
                if len(data) > MAX_PAGE_BYTES:
                    raise ValueError("page over 2 MB")
        return data.decode("utf-8", "replace")

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
