"""Opening an upstream under one deadline: the request sent, the status line, every header *and the
first body byte* (for a stream: its first whole SSE event) must arrive within ``Limits.first_byte``.

Why the body's start is inside the deadline: an upstream that sends its headers and then hangs (a
proxy in front of a dead model, a server whose worker died after answering the head) would otherwise
commit the answer to that upstream, and the client would wait out the per-read idle bound with no
failover left. Read here, before anything went to the client, a hang is one more failed profile: the
next one is tried, or the client gets a 504 naming the upstream. A stream's keep-alive comments
(``: ping``) do not count as its first event: they prove the socket, not the model.

What was read before the commit (``Attempt.early``) is relayed first, byte for byte; nothing is lost.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

import aiohttp
from multidict import CIMultiDict

from kvswitch.core.redact import mask_text
from kvswitch.gateway.relay.headers import shown_name, unrelayable_header

if TYPE_CHECKING:
    from kvswitch.gateway.relay.attempt import Attempt

#: bytes of an upstream error body read to decide on failover and to show it
ERROR_BODY_LIMIT = 256 * 1024
#: an SSE head this long without a whole event is taken as a stream that is alive (bytes flow): it is
#: committed and left to the answer's own limits rather than held in memory waiting for an event
EARLY_LIMIT = 1024 * 1024
#: an error body of a refused answer gets at least this long even when the head deadline is spent
ERROR_BODY_MIN_SECONDS = 1.0


def describe_error(exc: BaseException) -> str:
    """One line about a failed upstream, credentials masked (``redact.mask_text``): aiohttp's texts
    quote the URL, which may hold a password or a signed query."""
    if isinstance(exc, asyncio.TimeoutError):
        return "no answer within the idle timeout"
    text = str(exc) or type(exc).__name__
    return mask_text(text.splitlines()[0][:300])


def is_event_stream(response: aiohttp.ClientResponse) -> bool:
    return response.headers.get("Content-Type", "").lower().lstrip().startswith("text/event-stream")


def has_event(data: bytes) -> bool:
    """``data`` holds a whole SSE event with a field (``data:``, ``event:``...), not just comments."""
    text = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    for block in text.split(b"\n\n")[:-1]:
        if any(line and not line.startswith(b":") for line in block.split(b"\n")):
            return True
    return False


def _bodiless(method: str, response: aiohttp.ClientResponse) -> bool:
    return method == "HEAD" or response.status in (204, 304) or response.status < 200


async def _first_body(response: aiohttp.ClientResponse) -> bytes:
    """The body's first piece; for an event stream, as much as holds its first whole event."""
    early = bytearray()
    stream = is_event_stream(response)
    while True:
        piece = await response.content.readany()
        if not piece:
            return bytes(early)  # the whole (possibly empty) body
        early += piece
        if not stream or has_event(bytes(early)) or len(early) >= EARLY_LIMIT:
            return bytes(early)


async def open_upstream(
    session: aiohttp.ClientSession, method: str, url: str, headers: CIMultiDict[str], body: bytes,
    attempt: Attempt, first_byte: float, started: float | None = None,
) -> aiohttp.ClientResponse | None:
    """Send the request; the response with its headers and the first of a 2xx body read, or ``None``
    with ``attempt.error`` set (``attempt.timed_out`` for a lapsed deadline).

    ``None`` for an upstream that sent no status line, headers and first body byte (first event)
    within ``first_byte`` seconds (one that accepts and never answers, drips its headers, or sends
    its headers and then hangs), for one whose answer broke off before that, and for one whose
    headers cannot be relayed (a control byte, bytes that are not UTF-8): nothing reached the client
    yet, so the caller can fail over. ``started``: when the client's request began (its time to first
    byte counts from there)."""
    loop = asyncio.get_running_loop()
    begun = loop.time() if started is None else started
    attempt.head_deadline = loop.time() + first_byte
    response: aiohttp.ClientResponse | None = None
    try:
        async with asyncio.timeout_at(attempt.head_deadline) as scope:
            response = await session.request(
                method, url, headers=headers,
                data=body if body or method in ("POST", "PUT", "PATCH") else None,
                allow_redirects=False, compress=None, chunked=None, skip_auto_headers=None,
            )
            for name, value in response.headers.items():
                why = unrelayable_header(name, value)
                if why is not None:
                    _discard(response)
                    attempt.error = f"the upstream's header {shown_name(name)} {why}"
                    return None
            attempt.status = response.status
            if response.status < 400 and not _bodiless(method, response):
                attempt.early = await _first_body(response)
                attempt.first_byte_ms = (loop.time() - begun) * 1000
    except TimeoutError:
        if response is not None:
            _discard(response)
        if not scope.expired():
            attempt.error = describe_error(TimeoutError())
        else:
            attempt.timed_out = True
            what = "no first event" if response is not None and is_event_stream(response) else (
                "no first body byte" if response is not None else "no status line and headers")
            attempt.error = f"{what} within {first_byte:g} s (first-byte deadline)"
        attempt.status = None
        return None
    except (aiohttp.ClientError, OSError, ValueError) as exc:
        if response is not None:
            _discard(response)
            attempt.error = f"the upstream's answer broke off before its first byte: {describe_error(exc)}"
        else:
            attempt.error = describe_error(exc)
        attempt.status = None
        return None
    return response


def _discard(response: aiohttp.ClientResponse) -> None:
    response.release()
    response.close()


async def read_error_body(response: aiohttp.ClientResponse, attempt: Attempt) -> bytes:
    """At most ``ERROR_BODY_LIMIT`` bytes of a refused answer (enough to show why, never unbounded),
    read within what is left of the head deadline (at least ``ERROR_BODY_MIN_SECONDS``): a 503 whose
    body never comes must not hold the failover."""
    data = bytearray()
    loop = asyncio.get_running_loop()
    until = max(attempt.head_deadline or 0.0, loop.time() + ERROR_BODY_MIN_SECONDS)
    with contextlib.suppress(aiohttp.ClientError, OSError, asyncio.TimeoutError):
        async with asyncio.timeout_at(until):
            async for piece in response.content.iter_any():
                data.extend(piece[: ERROR_BODY_LIMIT - len(data)])
                if len(data) >= ERROR_BODY_LIMIT:
                    break
    response.release()
    attempt.error_body = bytes(data)
    return attempt.error_body
