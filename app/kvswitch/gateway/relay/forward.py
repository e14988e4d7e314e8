"""Forwarding one request: the client's body read under a cap, the upstream opened under a deadline,
the answer relayed chunk by chunk (or through a bridge's converter) as it arrives.

Nothing is buffered without a bound: the request body is capped (else 413, connection closed without
reading the rest) and must keep arriving (``request_body_idle``), the upstream's status line and
headers and the first body byte (a stream's first event) must arrive within ``first_byte`` seconds
(else the next profile is tried: ``relay.upstream``), each later read from the upstream waits at most
``upstream_idle`` seconds (past it a stream ends with an error event the client reads), the whole
answer must end within ``max_response_seconds`` and ``max_response_bytes``; past a limit the client's
connection is cut, so the client sees a broken answer instead of a complete-looking one. Of the answer
only a bounded head and tail are kept, for usage and cache numbers.

The split between ``open_upstream`` and ``relay`` is what failover needs: a failed or refused upstream
(connection error, 5xx, 429) can be dropped and the next one tried as long as nothing was sent to the
client; once ``relay`` sent the status line, the answer is this upstream's, whatever happens.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import aiohttp
from aiohttp import web

from kvswitch.core.errors import KvSwitchError
from kvswitch.core.http import MB, DeadlineExceeded, ResponseTooLarge
from kvswitch.core.paths import AppPaths
from kvswitch.core.redact import mask_text
from kvswitch.core.strictparse import loads_json
from kvswitch.gateway.bridges import ResponseConverter
from kvswitch.gateway.relay.attempt import Attempt as Attempt
from kvswitch.gateway.relay.headers import HOP_BY_HOP as HOP_BY_HOP
from kvswitch.gateway.relay.headers import BodyRefused as BodyRefused
from kvswitch.gateway.relay.headers import upstream_headers as upstream_headers
from kvswitch.gateway.relay.upstream import ERROR_BODY_LIMIT as ERROR_BODY_LIMIT
from kvswitch.gateway.relay.upstream import describe_error, is_event_stream
from kvswitch.gateway.relay.upstream import open_upstream as open_upstream
from kvswitch.gateway.relay.upstream import read_error_body as read_error_body

#: twice the largest request body a hosted Messages API accepts (32 MB); Claude Code's are a few hundred KB
MAX_REQUEST_BODY = 64 * MB
#: far above any model answer, low enough that an endless upstream cannot fill a disk or a client
MAX_RESPONSE_BODY = 512 * MB
#: one answer may stream this long in total (a long agent turn on a slow CPU takes minutes)
MAX_RESPONSE_SECONDS = 3 * 3600.0
#: a client connection that sends nothing this long is closed (a dead client must not hold a socket)
CLIENT_IDLE_SECONDS = 600.0
#: once an answer is under way, a pause this long between two chunks of it ends it (a stream with an
#: error event). Generous (a model may think a long time between two chunks) but under the clients'
#: own: Claude Code gives a request 600 s (``API_TIMEOUT_MS``), Codex a stream 300 s without an event
#: (``stream_idle_timeout_ms``); the old 900 s outlived both, so the client gave up first, unexplained
UPSTREAM_IDLE_SECONDS = 240.0
#: the upstream's status line, headers and first body byte (a stream's first event) must arrive this
#: soon, else it counts as down and the next profile is tried. Well under the clients' own limits
#: above, so a hung first upstream still leaves a fallback time to answer. A prompt that takes longer
#: than this to read before its first token is the case to raise it for (``Limits.first_byte``).
FIRST_BYTE_SECONDS = 180.0
#: a client that sent its headers sends its body at once; a pause this long between two pieces of it
#: ends the request (408), so a stalled body cannot hold a socket past the idle close
REQUEST_BODY_IDLE_SECONDS = 60.0
CONNECT_SECONDS = 30.0


@dataclass(frozen=True)
class Limits:
    max_request_body: int = MAX_REQUEST_BODY
    max_response_bytes: int = MAX_RESPONSE_BODY
    max_response_seconds: float = MAX_RESPONSE_SECONDS
    upstream_idle: float = UPSTREAM_IDLE_SECONDS
    client_idle: float = CLIENT_IDLE_SECONDS
    connect: float = CONNECT_SECONDS
    first_byte: float = FIRST_BYTE_SECONDS
    request_body_idle: float = REQUEST_BODY_IDLE_SECONDS
    #: bytes of each answer's head kept (the recorder keeps 4 MB to show it, the gateway less)
    sample_bytes: int = 64 * 1024


def limits_from_settings(paths: AppPaths) -> Limits:
    """The default ``Limits`` with the user's bounds on a hung upstream (``gateway_first_byte_seconds``,
    ``gateway_read_idle_seconds`` in KV Switch's settings; the defaults when they cannot be read)."""
    from kvswitch.core.settings import load_settings  # noqa: PLC0415 - pydantic only when the gateway starts

    settings = load_settings(paths)
    return Limits(first_byte=float(settings.gateway_first_byte_seconds),
                  upstream_idle=float(settings.gateway_read_idle_seconds))


#: where the server publishes its ``Limits`` to the code that reads a request (``read_body``)
LIMITS_KEY = web.AppKey("kvswitch_limits", Limits)


async def read_body(request: web.Request, limit: int) -> bytes:
    """The request body, at most ``limit`` bytes; ``BodyRefused`` (413) beyond without reading on,
    (408) when the client pauses longer than the server's ``Limits.request_body_idle`` in it."""
    declared = request.content_length
    if declared is not None and declared > limit:
        raise BodyRefused(413, str(ResponseTooLarge(limit, "the client")))
    limits = request.app.get(LIMITS_KEY)
    idle = limits.request_body_idle if limits is not None else REQUEST_BODY_IDLE_SECONDS
    chunks: list[bytes] = []
    total = 0
    try:
        while True:
            try:
                async with asyncio.timeout(idle):
                    piece = await request.content.readany()
            except TimeoutError:
                raise BodyRefused(408, f"the client sent no more of its body for {idle:g} s") from None
            if not piece:
                break
            total += len(piece)
            if total > limit:
                raise BodyRefused(413, str(ResponseTooLarge(limit, "the client")))
            chunks.append(piece)
    except aiohttp.ClientPayloadError:
        raise BodyRefused(400, "malformed request body framing") from None
    except web.HTTPException as exc:
        raise BodyRefused(exc.status, exc.reason) from None
    return b"".join(chunks)


def refuse(status: int, message: str, *, close: bool = True, body: bytes | None = None) -> web.Response:
    """A JSON error answer the client can show (the Messages API's error shape; OpenAI clients read it).

    ``message`` goes through ``redact.mask_text``: an upstream URL or an error text quoting one never
    shows its password or a signed query to the client."""
    data = body if body is not None else json.dumps(
        {"type": "error", "error": {"type": "proxy_error", "message": mask_text(message)}}
    ).encode()
    response = web.Response(status=status, body=data, content_type="application/json")
    if close:
        response.force_close()
    return response


def client_session(limits: Limits) -> aiohttp.ClientSession:
    """One pooled client for every upstream: no decompression (bytes pass as they came), no headers
    of its own (the client's pass through), idle and connect timeouts per read."""
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=limits.connect, sock_read=limits.upstream_idle)
    connector = aiohttp.TCPConnector(limit=0, ttl_dns_cache=300, enable_cleanup_closed=True)
    return aiohttp.ClientSession(
        connector=connector,
        timeout=timeout,
        auto_decompress=False,
        skip_auto_headers=("User-Agent", "Accept", "Accept-Encoding", "Content-Type"),
        cookie_jar=aiohttp.DummyCookieJar(),
        read_bufsize=2**16,
    )


async def relay(
    request: web.Request,
    response: aiohttp.ClientResponse,
    attempt: Attempt,
    limits: Limits,
    started: float,
    converter: ResponseConverter | None = None,
    status_body: bytes | None = None,
    before_end: Callable[[], Awaitable[None]] | None = None,
    ending: Callable[[str], bytes] | None = None,
) -> web.StreamResponse:
    """Send ``response`` to the client as it arrives: byte for byte, or through ``converter``.

    ``status_body``: an already-read (error) body to send instead of reading the upstream's.
    ``before_end``: awaited after the last body byte and before the end of the answer is sent (the
    recorder stores its capture there, so a client that exits on the answer's end finds it stored).
    ``ending``: the error event that ends a pass-through event stream in the client's protocol (a
    bridged one gets its converter's). Limits past the commit cut the client's connection, except an
    event stream gone idle past ``limits.upstream_idle``: it ends cleanly with that error event, so
    the client reads why instead of a broken connection. ``attempt.cut`` says why.
    """
    out = web.StreamResponse(status=response.status, reason=response.reason)
    for name, value in response.headers.items():
        lowered = name.lower()
        if lowered in HOP_BY_HOP or lowered == "content-length":
            continue
        if converter is not None and lowered in ("content-encoding", "etag"):
            continue
        out.headers.add(name, value)
    length = response.headers.get("Content-Length")
    bodiless = request.method == "HEAD" or response.status in (204, 304) or response.status < 200
    if status_body is not None:
        out.content_length = len(status_body)
    elif length is not None and length.isdigit() and (converter is None or bodiless):
        out.content_length = int(length)
    elif not bodiless:
        out.enable_chunked_encoding()
    try:
        await out.prepare(request)
        attempt.committed = True
        held = b""
        if status_body is not None:
            attempt.first_byte_ms = (time.monotonic() - started) * 1000
            cut = len(status_body) - 1 if before_end is not None and status_body else len(status_body)
            await out.write(status_body[:cut])
            held = status_body[cut:]
            attempt.bytes_out = len(status_body)
        elif not bodiless:
            # an answer of known length is complete for the client with its last byte, so that byte
            # waits for before_end; a chunked one ends with the terminator write_eof sends
            hold = before_end is not None and out.content_length is not None
            held = await _pump(response, out, attempt, limits, started, converter, hold)
        attempt.elapsed_ms = (time.monotonic() - started) * 1000
        if before_end is not None:
            await before_end()
        if held:
            await out.write(held)
        await out.write_eof()
    except _Idle as idle:
        attempt.cut, attempt.idle = idle.reason, True
        end = converter.fail if converter is not None else ending if is_event_stream(response) else None
        await _end_idle(request, out, attempt, started, idle.reason, end, before_end)
    except _Cut as cut:
        attempt.cut = cut.reason
        _drop_connection(request, out)
    except (ConnectionError, aiohttp.ClientError, OSError) as exc:
        attempt.cut = describe_error(exc)
        _drop_connection(request, out)
    finally:
        response.release()
    if attempt.elapsed_ms is None:
        attempt.elapsed_ms = (time.monotonic() - started) * 1000
    return out


class _Cut(Exception):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class _Idle(_Cut):
    """The upstream went quiet past the read-idle bound after the commit."""


async def _end_idle(
    request: web.Request, out: web.StreamResponse, attempt: Attempt, started: float, reason: str,
    ending: Callable[[str], bytes] | None, before_end: Callable[[], Awaitable[None]] | None,
) -> None:
    """End an answer gone idle, after ``before_end`` (the row is stored before the client sees the end):
    with ``ending(reason)`` and the chunked terminator when it is a chunked event stream (or a bridged
    answer, whose converter words the error), else by cutting the connection (a JSON body cut short
    must never look complete)."""
    attempt.elapsed_ms = (time.monotonic() - started) * 1000
    clean = ending is not None and out.content_length is None
    data = ending(f"upstream {mask_text(attempt.url.split('?')[0])}: {reason}") if clean and ending else b""
    if before_end is not None:
        await before_end()
    if not clean:
        _drop_connection(request, out)
        return
    try:
        if data:
            await out.write(data)
            attempt.bytes_out += len(data)
        await out.write_eof()
    except (ConnectionError, aiohttp.ClientError, OSError):
        _drop_connection(request, out)


async def _pump(
    response: aiohttp.ClientResponse, out: web.StreamResponse, attempt: Attempt, limits: Limits,
    started: float, converter: ResponseConverter | None, hold_last: bool = False,
) -> bytes:
    """Relay the body; with ``hold_last`` the very last byte is returned instead of sent."""
    total = 0
    held = b""
    try:
        async for piece in _pieces(response, attempt.early):
            total += len(piece)
            if total > limits.max_response_bytes:
                raise _Cut(str(ResponseTooLarge(limits.max_response_bytes, "the upstream")))
            if attempt.first_byte_ms is None:
                attempt.first_byte_ms = (time.monotonic() - started) * 1000
            attempt.keep(piece, limits.sample_bytes)
            data = converter.feed(piece) if converter is not None else piece
            if hold_last and data:
                data, held = held + data[:-1], data[-1:]
            if data:
                await out.write(data)
                attempt.bytes_out += len(data)
    except TimeoutError:
        raise _Idle(f"the upstream sent nothing for {limits.upstream_idle:g} s (read-idle bound)") from None
    except aiohttp.ClientPayloadError as exc:
        raise _Cut(f"the upstream's answer broke off: {describe_error(exc)}") from None
    if converter is not None:
        data = converter.close()
        if data:
            await out.write(data)
            attempt.bytes_out += len(data)
    attempt.bytes_out += len(held)
    return held


async def _pieces(response: aiohttp.ClientResponse, early: bytes) -> AsyncIterator[bytes]:
    """The body: what ``relay.upstream`` read before the commit, then the rest as it arrives."""
    if early:
        yield early
    async for piece in response.content.iter_any():
        yield piece


def _drop_connection(request: web.Request, out: web.StreamResponse) -> None:
    """End the client's connection without the final chunk, so a cut answer never looks complete."""
    out.force_close()
    transport = request.transport
    if transport is not None:
        transport.close()


def deadline_message(limits: Limits, what: str) -> str:
    return str(DeadlineExceeded(limits.max_response_seconds, what))


def parse_json_body(raw: bytes, max_bytes: int = MAX_REQUEST_BODY) -> Any:
    """The request body as JSON, or ``None`` when it is not JSON (it is then forwarded untouched).

    Read up to the request cap (not the 16 MiB of a config file): a body the gateway accepted is a
    body it maps the model of and bridges, never one it passes on unmapped."""
    if not raw:
        return None
    try:
        return loads_json("request body", raw.decode("utf-8"), max_bytes=max_bytes)
    except (ValueError, KvSwitchError):
        return None
