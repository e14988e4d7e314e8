"""HTTP for the cache probe: streamed requests that a deadline or a cancel button can stop at once.

A hung server must not hold the GUI's Verify button (or a CI job) hostage. httpx timeouts bound
each read, but a server that trickles one byte a second never trips them, and a blocked read cannot
see a cancel flag. So every socket a ``Guard`` opens is registered (httpx's ``trace`` extension), and
a watcher thread shuts those sockets down the moment the deadline passes or ``cancel`` is set; the
blocked read then returns at once and the call reports why it ended. Every body is read through
``kvswitch.core.http``'s bounded readers: one deadline for the whole run, a byte cap per answer.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from kvswitch.core.errors import ConfigParseError
from kvswitch.core.http import (
    MB,
    Deadline,
    DeadlineExceeded,
    NetworkLimitError,
    SocketCutter,
    iter_lines_bounded,
)
from kvswitch.core.http_client import Answer, exchange, new_client
from kvswitch.core.strictparse import loads_json
from kvswitch.verify.evidence import Reading, error_message, merge_stream_readings

MAX_ERROR_BODY = 64 * 1024
#: detection and /metrics answers are a few KB; a real /metrics with many series stays well below
MAX_GET_BODY = 8 * MB
#: a probe answer is a few dozen events (max_tokens is tiny); the replay's plain answers a few KB
MAX_STREAM_BODY = 16 * MB
MAX_STREAM_LINE = 1 * MB
MAX_STREAM_EVENTS = 20_000
USER_AGENT = "kvswitch-verify"


class ProbeError(Exception):
    """A request that did not produce an answer; ``kind`` says why, ``message`` says it in words."""

    def __init__(self, kind: str, message: str, *, status: int | None = None, body: bytes = b""):
        super().__init__(message)
        self.kind = kind  # refused | timeout | cancelled | http | network | bad_body | too_large
        self.message = message
        self.status = status
        self.body = body


class Guard(SocketCutter):
    """A deadline and a cancel flag shared by every call of one verify run, with verify's messages."""

    def __init__(self, timeout: float, cancel: threading.Event | None = None, secrets: tuple[str, ...] = ()):
        # Deadline raises ValueError for inf, nan, <= 0: such a run could never end well
        super().__init__(Deadline(timeout), cancel or threading.Event())
        self.cancel: threading.Event
        self.timeout = self.clock.seconds
        self.secrets = tuple(s for s in secrets if s)
        #: requests the server took in (a refused one, HTTP 4xx/5xx, is not counted)
        self.requests_sent = 0

    def remaining(self) -> float:
        return self.clock.remaining()

    def check(self) -> None:
        """Raise if the run was cancelled or is out of time (called between steps)."""
        why = self.tripped
        if why == "cancelled":
            raise ProbeError("cancelled", "verification cancelled")
        if why in ("timeout", "headers"):  # headers: the deadline passed while a server held them back
            raise ProbeError("timeout", f"no complete answer within the {self.timeout:g} s timeout")

    def check_chunk(self) -> None:
        """After every chunk read: cancelled or out of time ends the read at once."""
        self.check()

    def limited(self, exc: NetworkLimitError, url: str) -> ProbeError:
        """A size or time limit hit while reading from ``url``, as a ProbeError with the limit named."""
        if isinstance(exc, DeadlineExceeded):
            return ProbeError("timeout", f"{url}: no complete answer within the {self.timeout:g} s timeout")
        return ProbeError("too_large", f"{url}: {exc}")

    def redact(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, "•" * 8)
        return text

    def client(self, url: str, limit: float | None = None) -> httpx.Client:
        """A client within the remaining budget (``core.http_client``: proxies for remote servers only)."""
        budget = max(0.05, min(self.remaining(), limit if limit is not None else self.timeout))
        return new_client(url, budget, {"user-agent": USER_AGENT})

    def translate(self, exc: Exception, url: str) -> ProbeError:
        """Turn any transport failure into a ProbeError with plain words (and no secret)."""
        why = self.tripped
        if why == "cancelled":
            return ProbeError("cancelled", "verification cancelled")
        if why in ("timeout", "headers") or isinstance(exc, httpx.TimeoutException):
            return ProbeError("timeout", f"{url}: no complete answer within the {self.timeout:g} s timeout")
        if isinstance(exc, httpx.ConnectError):
            text = str(exc)
            if "refused" in text.lower() or "errno 111" in text.lower():
                return ProbeError(
                    "refused", f"{url}: connection refused — is the server running on that port?"
                )
            return ProbeError("network", f"{url}: cannot connect ({self.redact(text) or type(exc).__name__})")
        if isinstance(exc, httpx.RemoteProtocolError):
            return ProbeError("network", f"{url}: the server closed the connection without a complete answer")
        return ProbeError("network", f"{url}: {self.redact(str(exc)) or type(exc).__name__}")


@dataclass
class StreamResult:
    """One streamed request: time to first generated token, total time, every event and its cache numbers."""

    url: str
    status: int
    ttft_ms: float | None
    total_ms: float
    events: list[dict[str, Any]] = field(default_factory=list)
    readings: list[Reading] = field(default_factory=list)
    text: str = ""


def get_json_or_text(
    guard: Guard, url: str, headers: Mapping[str, str], limit: float = 3.0
) -> tuple[int, str, bytes] | None:
    """A best-effort GET used for detection and metrics; ``None`` when it fails for any reason."""
    try:
        guard.check()
        with (
            guard.client(url, limit) as client,
            exchange(client, guard, "GET", url, limit=MAX_GET_BODY, headers=headers, check=guard.check_chunk)
            as answer,
        ):
            return answer.status, answer.headers.get("content-type", ""), answer.read()
    except ProbeError:
        raise
    except NetworkLimitError as exc:
        raise guard.limited(exc, url) from None
    except (httpx.HTTPError, OSError):
        guard.check()
        return None


def stream_request(
    guard: Guard,
    url: str,
    body: Mapping[str, Any],
    headers: Mapping[str, str],
    on_event: Callable[[], None] | None = None,
) -> StreamResult:
    """POST ``body`` with streaming on and measure it; raises ProbeError on any failure."""
    guard.check()
    started = time.monotonic()
    guard.requests_sent += 1  # a request we stop waiting for is still processed by the server
    try:
        with (
            guard.client(url) as client,
            exchange(client, guard, "POST", url, limit=MAX_STREAM_BODY, headers=headers, json=body,
                     check=guard.check_chunk) as answer,
        ):
            response = answer.response
            if response.status_code >= 400:
                guard.requests_sent -= 1  # refused: no prompt was processed
                raw = answer.read_prefix(MAX_ERROR_BODY)
                message = guard.redact(
                    error_message(response.status_code, raw, response.headers.get("content-type"))
                )
                raise ProbeError(
                    "http",
                    f"HTTP {response.status_code} from {url}: {message}",
                    status=response.status_code,
                    body=raw,
                )
            result = StreamResult(url, response.status_code, None, 0.0)
            content_type = response.headers.get("content-type", "")
            for event in _events(answer, content_type):
                guard.check()
                if len(result.events) >= MAX_STREAM_EVENTS:
                    raise ProbeError(
                        "too_large", f"{url}: the server sent more than {MAX_STREAM_EVENTS} events; stopped"
                    )
                if on_event is not None:
                    on_event()
                _raise_stream_error(guard, url, event)
                result.events.append(event)
                token = _token_text(event)
                if token is not None and result.ttft_ms is None:
                    result.ttft_ms = (time.monotonic() - started) * 1000
                if token:
                    result.text += token
    except ProbeError:
        raise
    except NetworkLimitError as exc:
        raise guard.limited(exc, url) from None
    except (httpx.HTTPError, OSError) as exc:
        if isinstance(exc, httpx.ConnectError | ConnectionRefusedError):
            guard.requests_sent -= 1  # never reached the server
        raise guard.translate(exc, url) from None
    guard.check()
    result.total_ms = (time.monotonic() - started) * 1000
    if not result.events:
        raise ProbeError("bad_body", f"{url}: the server answered 200 but sent no JSON events")
    if result.ttft_ms is None:
        result.ttft_ms = result.total_ms  # nothing generated (EOS at once): the whole call is the latency
    result.readings = merge_stream_readings(result.events)
    return result


def parse_json(raw: bytes | str) -> Any:
    """A server's JSON parsed by the strict, depth-capped entry; every refusal is a ``ValueError``
    (100,000 nested brackets would otherwise be a ``RecursionError``)."""
    text = raw if isinstance(raw, str) else raw.decode("utf-8", "replace")
    try:
        return loads_json("the answer", text)
    except ConfigParseError as exc:
        raise ValueError(str(exc)) from None


def _events(answer: Answer, content_type: str) -> Iterator[dict[str, Any]]:
    """JSON events from SSE (``data: {...}``), NDJSON, or a plain JSON body (server ignored ``stream``)."""
    response = answer.response
    chunks = answer.iter_bytes()
    if "event-stream" not in content_type and "ndjson" not in content_type:
        raw = b"".join(chunks)
        try:
            data = parse_json(raw)
        except ValueError:
            yield from _ndjson_or_fail(raw, response)
            return
        if isinstance(data, dict):
            yield data
            return
        raise ProbeError(
            "bad_body", f"{response.request.url}: expected a JSON object, got {type(data).__name__}"
        )
    for raw_line in iter_lines_bounded(chunks, MAX_STREAM_LINE):
        line = raw_line.decode("utf-8", errors="replace").strip()
        if not line or line.startswith((":", "event:", "id:", "retry:")):
            continue
        payload = line[5:].strip() if line.startswith("data:") else line
        if payload == "[DONE]":
            continue
        try:
            data = parse_json(payload)
        except ValueError:
            raise ProbeError(
                "bad_body", f"{response.request.url}: the stream is not JSON: {payload[:120]!r}"
            ) from None
        if isinstance(data, dict):
            yield data


def _ndjson_or_fail(raw: bytes, response: httpx.Response) -> Iterator[dict[str, Any]]:
    """NDJSON, or an SSE stream sent with the wrong content type (some proxies relabel it)."""
    parsed = []
    for line in raw.splitlines():
        line = line.strip()
        if not line or line.startswith((b":", b"event:", b"id:", b"retry:")) or line == b"data: [DONE]":
            continue
        if line.startswith(b"data:"):
            line = line[5:].strip()
        try:
            item = parse_json(line)
        except ValueError:
            item = None
        if not isinstance(item, dict):
            message = error_message(response.status_code, raw, response.headers.get("content-type"))
            raise ProbeError("bad_body", f"{response.request.url}: not a JSON answer: {message}")
        parsed.append(item)
    if not parsed:
        raise ProbeError("bad_body", f"{response.request.url}: empty answer")
    yield from parsed


def _raise_stream_error(guard: Guard, url: str, event: Mapping[str, Any]) -> None:
    err = event.get("error")
    if err is None and event.get("type") != "error":
        return
    message = str(err.get("message") or err) if isinstance(err, Mapping) else str(err or event)
    raise ProbeError("http", f"{url}: the server reported an error mid-stream: {guard.redact(message)[:300]}")


def _token_text(event: Mapping[str, Any]) -> str | None:
    """Generated text in one event ('' counts as a token event), ``None`` for bookkeeping events."""
    choices = event.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], Mapping):
        delta = choices[0].get("delta") or {}
        if isinstance(delta, Mapping):
            for key in ("content", "reasoning_content"):
                if isinstance(delta.get(key), str) and delta[key]:
                    return str(delta[key])
        text = choices[0].get("text")
        if isinstance(text, str) and text:
            return text
        return None
    kind = event.get("type")
    if kind == "content_block_delta":
        delta = event.get("delta") or {}
        return str(delta.get("text") or delta.get("thinking") or "") if isinstance(delta, Mapping) else ""
    if kind in ("response.output_text.delta", "response.reasoning_text.delta"):
        return str(event.get("delta") or "")
    if isinstance(kind, str):
        return None
    if "content" in event and "stop" in event:  # a native /completion stream
        return str(event.get("content") or "") if not event.get("stop") else None
    message = event.get("message")
    if "done" in event:  # a native /api/chat stream
        if event.get("done"):
            return None
        if isinstance(message, Mapping):
            return str(message.get("content") or message.get("thinking") or "")
        return str(event.get("response") or "")
    return None
