"""The one way KV Switch asks a server something over HTTP: httpx for the connection, TLS and proxies,
``kvswitch.core.http`` for every limit.

httpx bounds each socket read, not an answer: a server that drips its headers one byte a second never
trips a read timeout, and ``iter_bytes``/``read``/``json`` undo every ``Content-Encoding`` layer with
no cap, so 7 KB of ``gzip, gzip`` become 4 GiB in memory. Here an answer is read only as raw bytes
(``iter_raw``) and decoded by ``core.content_coding.iter_decoded``, which caps the decoded size of
every layer; a ``SocketCutter`` ends the exchange at the header deadline and at the whole-operation
deadline, and its error says which. ``tests/hostile`` checks that nothing else in KV Switch reads
an httpx body.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import httpx

from kvswitch.core.addresses import is_loopback_url
from kvswitch.core.content_coding import iter_decoded
from kvswitch.core.http import Deadline, SocketCutter

#: what KV Switch asks for: plain bodies; a server that compresses anyway is decoded (within the caps)
ACCEPT_ENCODING = "identity"
#: the longest a connection attempt may take within any deadline
CONNECT_TIMEOUT = 5.0


class Answer:
    """A response whose status and headers have arrived; its body is read only through the caps."""

    def __init__(self, response: httpx.Response, limit: int, deadline: Deadline, what: str,
                 check: Callable[[], None] | None):
        self.response = response
        self.status = response.status_code
        self.headers = response.headers
        self._limit, self._deadline, self._what, self._check = limit, deadline, what, check

    def iter_bytes(self, limit: int | None = None) -> Iterator[bytes]:
        """The decoded body, chunk by chunk: ``ResponseTooLarge``/``UndecodableBody``/``DeadlineExceeded``
        when it breaks a limit."""
        return iter_decoded(self.response.iter_raw(), self.headers.get("content-encoding"),
                            self._limit if limit is None else limit, self._deadline, what=self._what,
                            check=self._check)

    def read(self) -> bytes:
        return b"".join(self.iter_bytes())

    def read_prefix(self, size: int) -> bytes:
        """The first ``size`` decoded bytes and no more is read (for error bodies, where a prefix will do);
        a body that cannot be decoded gives what was decoded before the fault."""
        kept = bytearray()
        try:
            for chunk in self.iter_bytes(limit=max(size, self._limit)):
                kept += chunk[: size - len(kept)]
                if len(kept) >= size:
                    break
        except (httpx.HTTPError, OSError, ValueError):
            pass
        return bytes(kept)


def new_client(url: str, timeout: float, headers: Mapping[str, str] | None = None,
               base_url: str = "") -> httpx.Client:
    """An httpx client for ``url``'s server: no redirects followed, per-read timeout ``timeout``, system
    proxy settings for remote servers only (a corporate proxy must not intercept a loopback server, but
    may be the only way out)."""
    return httpx.Client(
        base_url=base_url,
        timeout=httpx.Timeout(timeout, connect=min(timeout, CONNECT_TIMEOUT)),
        follow_redirects=False,
        trust_env=not is_loopback_url(url),
        headers={"accept-encoding": ACCEPT_ENCODING, **(headers or {})},
    )


@contextmanager
def exchange(
    client: httpx.Client,
    cutter: SocketCutter,
    method: str,
    url: str,
    *,
    limit: int,
    header_timeout: float | None = None,
    headers: Mapping[str, str] | None = None,
    json: Any = None,
    what: str | None = None,
    check: Callable[[], None] | None = None,
) -> Iterator[Answer]:
    """One request on ``client`` under ``cutter``'s deadline, its headers due within ``header_timeout``
    (default: whatever the deadline leaves). A cut socket surfaces as the limit that cut it
    (``DeadlineExceeded``, ``HeadersTooSlow``); other transport faults stay httpx errors."""
    deadline = cutter.clock
    cutter.expect_headers(min(header_timeout, deadline.seconds) if header_timeout else deadline.seconds)
    name = what or url
    try:
        with client.stream(method, url, headers=dict(headers or {}), json=json,
                           extensions={"trace": cutter.trace}) as response:
            cutter.headers_arrived()
            yield Answer(response, limit, deadline, name, check)
    except (httpx.HTTPError, OSError) as exc:
        error = cutter.limit_error(name)
        if error is not None:
            raise error from exc
        raise


@contextmanager
def request(
    method: str,
    url: str,
    *,
    timeout: float | Deadline,
    limit: int,
    header_timeout: float | None = None,
    headers: Mapping[str, str] | None = None,
    json: Any = None,
    cancel: threading.Event | None = None,
    what: str | None = None,
) -> Iterator[Answer]:
    """A one-off request: its own client and socket cutter, under ``timeout`` (seconds from now for
    everything, or a ``Deadline`` shared with the caller's other requests)."""
    deadline = timeout if isinstance(timeout, Deadline) else Deadline(timeout, what or "")
    with SocketCutter(deadline, cancel) as cutter, new_client(url, deadline.remaining()) as client, \
            exchange(client, cutter, method, url, limit=limit, header_timeout=header_timeout,
                     headers=headers, json=json, what=what) as answer:
        yield answer
