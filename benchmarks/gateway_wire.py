"""The two ends of ``benchmarks/gateway.py``: a scripted upstream and a raw HTTP/1.1 load generator.

Both are plain asyncio (no HTTP library), so neither end costs more than the proxies they sandwich and
the figures are the proxies' own. The upstream answers Anthropic ``/v1/messages`` and OpenAI
``/v1/chat/completions``, as JSON or SSE, with the usage fields real servers send (Anthropic's cache
fields, OpenAI's ``prompt_tokens_details``, llama.cpp's ``timings``). It runs in its own process, is
bounded in requests and in time, and stops by itself (also when the benchmark that started it is gone).
How it answers (events per stream, pause between them) is set through ``POST /_bench/config`` from the
benchmark between phases, so the proxies never see that knob.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import time
from dataclasses import dataclass, field

_STREAM_TRUE = re.compile(rb'"stream"\s*:\s*true')
_MODEL = re.compile(rb'"model"\s*:\s*"([^"]{1,200})"')
#: the counters and idle gauges of llama-server b11434's /metrics (the names the gateway reads), with
#: the request count as the prompt counter: the page a local server answers
METRICS_PAGE = (b"# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed.\n"
                b"# TYPE llamacpp:prompt_tokens_total counter\nllamacpp:prompt_tokens_total %d\n"
                b"# TYPE llamacpp:prompt_tokens_cached_total counter\nllamacpp:prompt_tokens_cached_total 0\n"
                b"# TYPE llamacpp:requests_processing gauge\nllamacpp:requests_processing 0\n"
                b"# TYPE llamacpp:requests_deferred gauge\nllamacpp:requests_deferred 0\n")
TEXT = "The quick brown fox jumps over the lazy dog. "


@dataclass
class UpstreamConfig:
    """How the scripted upstream answers; changed between phases through ``/_bench/config``."""

    events: int = 8  # text deltas per streamed answer
    gap_ms: float = 0.0  # pause between two deltas (0: as fast as the socket takes them)
    requests: int = 0
    by_path: dict[str, int] = field(default_factory=dict)


def _sse(event: str | None, data: dict[str, object]) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


def _chunk(payload: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(payload), payload)


def anthropic_events(model: str, events: int) -> list[bytes]:
    """The SSE events of one Anthropic answer, in the order the real API sends them."""
    usage = {"input_tokens": 12, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 13788,
             "output_tokens": 1}
    out = [
        _sse("message_start", {"type": "message_start", "message": {
            "id": "msg_bench", "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": usage}}),
        _sse("content_block_start", {"type": "content_block_start", "index": 0,
                                     "content_block": {"type": "text", "text": ""}}),
        _sse("ping", {"type": "ping"}),
    ]
    out += [_sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                         "delta": {"type": "text_delta", "text": TEXT}})
            for _ in range(events)]
    out += [
        _sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
        _sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn",
             "stop_sequence": None}, "usage": {"output_tokens": 10 * events}}),
        _sse("message_stop", {"type": "message_stop"}),
    ]
    return out


def anthropic_json(model: str, events: int) -> dict[str, object]:
    return {"id": "msg_bench", "type": "message", "role": "assistant", "model": model,
            "content": [{"type": "text", "text": TEXT * events}], "stop_reason": "end_turn",
            "stop_sequence": None, "usage": {"input_tokens": 12, "cache_creation_input_tokens": 0,
                                             "cache_read_input_tokens": 13788, "output_tokens": 10 * events}}


def _chat_usage(events: int) -> dict[str, object]:
    return {"prompt_tokens": 13800, "completion_tokens": 10 * events, "total_tokens": 13800 + 10 * events,
            "prompt_tokens_details": {"cached_tokens": 13788}}


def _timings(events: int) -> dict[str, object]:
    return {"cache_n": 13788, "prompt_n": 12, "prompt_ms": 4.1, "predicted_n": 10 * events,
            "predicted_ms": 50.0}


def chat_events(model: str, events: int) -> list[bytes]:
    """The SSE chunks of one chat-completions answer, usage and llama.cpp timings in the last one."""
    def chunk(delta: dict[str, object], finish: str | None) -> dict[str, object]:
        return {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1764600000,
                "model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    out = [_sse(None, chunk({"role": "assistant", "content": ""}, None))]
    out += [_sse(None, chunk({"content": TEXT}, None)) for _ in range(events)]
    out.append(_sse(None, chunk({}, "stop")))
    last = chunk({}, None)
    last["choices"] = []
    last["usage"] = _chat_usage(events)
    last["timings"] = _timings(events)
    out.append(_sse(None, last))
    out.append(b"data: [DONE]\n\n")
    return out


def chat_json(model: str, events: int) -> dict[str, object]:
    return {"id": "chatcmpl-bench", "object": "chat.completion", "created": 1764600000, "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": TEXT * events},
                         "finish_reason": "stop"}],
            "usage": _chat_usage(events), "timings": _timings(events)}


async def _read_body(reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
    if headers.get("transfer-encoding", "").lower() == "chunked":
        parts = []
        while True:
            size = int((await reader.readline()).split(b";")[0].strip() or b"0", 16)
            if size == 0:
                await reader.readline()
                return b"".join(parts)
            parts.append(await reader.readexactly(size))
            await reader.readexactly(2)
    return await reader.readexactly(int(headers.get("content-length", "0")))


async def _read_head(reader: asyncio.StreamReader) -> tuple[str, dict[str, str]] | None:
    try:
        raw = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    lines = raw.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    return lines[0], headers


class Upstream:
    """The scripted upstream server; ``serve`` returns when its request or time budget is spent."""

    def __init__(self, max_requests: int, max_seconds: float) -> None:
        self.config = UpstreamConfig()
        self.max_requests = max_requests
        self.deadline = time.monotonic() + max_seconds
        self.done = asyncio.Event()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while not self.done.is_set():
                head = await _read_head(reader)
                if head is None:
                    break
                request_line, headers = head
                body = await _read_body(reader, headers)
                method, _, rest = request_line.partition(" ")
                path = rest.rpartition(" ")[0].split("?")[0]
                await self.answer(writer, method, path, body)
                if headers.get("connection", "").lower() == "close":
                    break
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            pass
        finally:
            writer.close()

    async def answer(self, writer: asyncio.StreamWriter, method: str, path: str, body: bytes) -> None:
        cfg = self.config
        if path == "/_bench/config":
            if body:
                update = json.loads(body)
                cfg.events = int(update.get("events", cfg.events))
                cfg.gap_ms = float(update.get("gap_ms", cfg.gap_ms))
            stats = {"requests": cfg.requests, "by_path": cfg.by_path}
            self._send_json(writer, 200, stats)
            return
        cfg.by_path[path] = cfg.by_path.get(path, 0) + 1
        if method == "GET" and path == "/metrics":  # a local server's counters (the gateway reads them)
            self._send_text(writer, METRICS_PAGE % cfg.requests)
            return
        cfg.requests += 1
        if cfg.requests >= self.max_requests or time.monotonic() > self.deadline:
            self.done.set()
        found = _MODEL.search(body)
        model = found.group(1).decode() if found else "bench"
        if method != "POST" or path not in ("/v1/messages", "/v1/chat/completions"):
            if path.endswith("/models"):
                self._send_json(writer, 200, {"object": "list", "data": [{"id": "bench", "object": "model"}]})
            else:
                self._send_json(writer, 404, {"error": {"message": f"no route {path}"}})
            return
        anthropic = path == "/v1/messages"
        if not _STREAM_TRUE.search(body):
            answer = anthropic_json(model, cfg.events) if anthropic else chat_json(model, cfg.events)
            self._send_json(writer, 200, answer)
            return
        events = anthropic_events(model, cfg.events) if anthropic else chat_events(model, cfg.events)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
                     b"transfer-encoding: chunked\r\n\r\n")
        head = 2 if anthropic else 1  # message_start (+ block start) go out at once, as real servers do
        writer.write(_chunk(b"".join(events[:head])))
        for event in events[head:]:
            if cfg.gap_ms:
                await writer.drain()
                await asyncio.sleep(cfg.gap_ms / 1000)
            writer.write(_chunk(event))
        writer.write(b"0\r\n\r\n")
        await writer.drain()

    @staticmethod
    def _send_text(writer: asyncio.StreamWriter, text: bytes) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/plain; version=0.0.4\r\n"
                     b"content-length: %d\r\n\r\n%s" % (len(text), text))

    @staticmethod
    def _send_json(writer: asyncio.StreamWriter, status: int, data: object) -> None:
        payload = json.dumps(data).encode()
        writer.write(b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s"
                     % (status, b"OK" if status == 200 else b"Not Found", len(payload), payload))

    async def serve(self, port: int, port_file: str | None) -> None:
        server = await asyncio.start_server(self.handle, "127.0.0.1", port, backlog=2048)
        bound = server.sockets[0].getsockname()[1]
        if port_file:
            with open(port_file + ".tmp", "w") as handle:
                handle.write(str(bound))
            os.replace(port_file + ".tmp", port_file)
        parent = os.getppid()
        async with server:
            while not self.done.is_set():
                if time.monotonic() > self.deadline or os.getppid() != parent:
                    break
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.done.wait(), 0.5)


# ----------------------------------------------------------------------------------- load generator


@dataclass
class Result:
    status: int = 0
    ttfb: float = 0.0  # seconds from the first byte of the request written to the first body event
    total: float = 0.0
    body: bytes = b""
    error: str = ""


class Connection:
    """One keep-alive HTTP/1.1 connection of the load generator."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(self, path: str, headers: dict[str, str], body: bytes, *, stream_end: bytes | None,
                      keep_alive: bool = True) -> Result:
        """Send one POST; ``stream_end`` is the SSE marker a complete stream must contain."""
        if self.writer is None or self.writer.is_closing():
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port, limit=1 << 22)
        reader, writer = self.reader, self.writer
        assert reader is not None
        lines = [f"POST {path} HTTP/1.1", f"Host: {self.host}:{self.port}",
                 f"Content-Length: {len(body)}", "Connection: " + ("keep-alive" if keep_alive else "close")]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        start = time.perf_counter()
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        result = Result()
        head = await _read_head(reader)
        if head is None:
            self.writer = None
            result.error = "connection closed before an answer"
            return result
        status_line, response_headers = head
        result.status = int(status_line.split(" ", 2)[1])
        parts: list[bytes] = []
        async for piece in _body_pieces(reader, response_headers):
            if not parts:
                result.ttfb = time.perf_counter() - start
            parts.append(piece)
        result.total = time.perf_counter() - start
        result.body = b"".join(parts)
        if not result.ttfb:
            result.ttfb = result.total
        if result.status != 200:
            result.error = f"HTTP {result.status}: {result.body[:200]!r}"
        elif stream_end is not None and stream_end not in result.body:
            result.error = "stream ended without " + stream_end.decode()
        if not keep_alive or response_headers.get("connection", "").lower() == "close":
            await self.close()
        return result

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            with contextlib.suppress(ConnectionError, OSError):
                await self.writer.wait_closed()
        self.writer = None


async def _body_pieces(reader: asyncio.StreamReader, headers: dict[str, str]):  # type: ignore[no-untyped-def]
    """The body as it arrives (chunked, sized, or until close); empty pieces are skipped."""
    if headers.get("transfer-encoding", "").lower() == "chunked":
        while True:
            size = int((await reader.readline()).split(b";")[0].strip() or b"0", 16)
            if size == 0:
                await reader.readline()
                return
            data = await reader.readexactly(size)
            await reader.readexactly(2)
            yield data
    elif "content-length" in headers:
        remaining = int(headers["content-length"])
        while remaining:
            data = await reader.read(min(remaining, 1 << 20))
            if not data:
                raise asyncio.IncompleteReadError(b"", remaining)
            remaining -= len(data)
            yield data
    else:
        while data := await reader.read(1 << 16):
            yield data


def main() -> int:
    parser = argparse.ArgumentParser(description="the scripted upstream of benchmarks/gateway.py")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file")
    parser.add_argument("--max-requests", type=int, default=200_000)
    parser.add_argument("--max-seconds", type=float, default=1800)
    args = parser.parse_args()
    asyncio.run(Upstream(args.max_requests, args.max_seconds).serve(args.port, args.port_file))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
