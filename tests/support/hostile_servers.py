"""Loopback HTTP servers that misbehave on purpose, for the hostile-input suites (``tests/hostile``, the
bounded readers under ``tests/verify``).

A real inference server never does any of this; a broken proxy, a captive portal or an attacker who
controls a base URL can. Each server answers every request (any method, any path) the same way, so
whatever a command asks first (``/v1/models``, ``/props``, ``/v1/messages``) meets the misbehaviour;
``only="POST"`` keeps it for one method (the others get a quick 404), so a probe gets past its
detection GETs and meets the hostile answer on its real request:

- ``double_gzip``: 200 JSON, ``Content-Encoding: gzip, gzip``, 6.8 KB on the wire that inflate to
  4 GiB (``tests/fixtures/hostile/gzip-gzip-4GiB-zeros.bin``);
- ``gzip_bomb``: the same with one layer (4 MB on the wire, 4 GiB inflated);
- ``triple_gzip``: three layers of gzip (refused: too many layers);
- ``unknown_coding``: ``Content-Encoding: compress`` (refused: not a coding KV Switch decodes);
- ``corrupt_gzip``: ``Content-Encoding: gzip`` on bytes that are not gzip;
- ``slow_headers``: a status line, then a header byte every 0.2 s (under any per-read timeout), forever;
- ``slow_body``: headers, then one body byte a second, forever;
- ``endless_body``: 200 JSON without a length, then bytes without end, as fast as it can;
- ``endless_sse``: 200 ``text/event-stream``, then well-formed token events without end;
- ``endless_line``: 200 ``text/event-stream``, then one line that never ends (no newline ever);
- ``escapes``: 200 JSON whose every string (model ids, ``content``, ``model``, error text) carries
  CSI/OSC sequences, raw ESC/BEL, C1 controls and a bidi override; the ``server`` header too;
- ``escapes_error``: the same strings in a 400 error object;
- ``huge_headers``: 200 with 4 MB of headers;
- ``invalid_utf8``: 200 JSON whose strings hold bytes that are not UTF-8;
- ``silent``: reads the request, then never answers (a hung upstream: accepted, never a byte);
- ``control_header``: 200 JSON with a header that holds a control byte (``x-bad: a\x01b``);
- ``head_hang``: a whole 200 JSON head (with a length), then never a body byte;
- ``sse_head_hang``: a whole 200 ``text/event-stream`` head, then only a keep-alive comment, never an
  event;
- ``drip_then_hang``: a status line, five header bytes 0.2 s apart (each under any per-read timeout),
  the end of the head, then never a body byte;
- ``sse_stall``: 200 ``text/event-stream``, one Messages ``message_start`` event, then silence;
- ``chat_stall``: the same with one Chat Completions chunk (for a bridged profile);
- ``json_stall``: a 200 JSON head (with a length) and the body's first bytes, then silence.

``sent`` counts body bytes written. Servers run on threads of the test process; the command under
test runs as a subprocess, so its memory and time are its own.
"""

from __future__ import annotations

import contextlib
import gzip
import socket
import threading
import zlib
from functools import cache
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hostile"
#: what a hostile server puts in a string: clear screen, colour, window title (OSC ... BEL), OSC 8 link,
#: carriage return, raw ESC and BEL, 8-bit CSI and OSC (C1), bidi override
EVIL = ("\x1b[2J\x1b[31mred\x1b[0m\x1b]0;pwned\x07\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\\rover"
        "\x1b\x07\x9b1m\x9d2;t\x9c\u202etxt")
#: characters none of which may reach a terminal
RAW_CONTROLS = ("\x1b", "\x07", "\x9b", "\x9d", "\x9c", "\r", "\u202e")
MODES = ("double_gzip", "gzip_bomb", "triple_gzip", "unknown_coding", "corrupt_gzip", "slow_headers",
         "slow_body", "endless_body", "endless_sse", "endless_line", "escapes", "escapes_error",
         "huge_headers", "invalid_utf8", "silent", "control_header", "head_hang", "sse_head_hang",
         "drip_then_hang", "sse_stall", "chat_stall", "json_stall")
#: how often ``slow_headers`` sends a byte: faster than any per-read timeout, so only a deadline ends it
HEADER_DRIP_S = 0.2
_NOT_FOUND = b"HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}"


@cache
def double_gzip_bomb() -> bytes:
    """6.8 KB that inflate to 4 GiB of zeros through two gzip layers (made by zlib, level 6 then 9)."""
    return (FIXTURES / "gzip-gzip-4GiB-zeros.bin").read_bytes()


@cache
def gzip_bomb() -> bytes:
    """One gzip layer inflating to 4 GiB: the outer layer of the double bomb taken off."""
    return zlib.decompress(double_gzip_bomb(), 31)


def _escapes_json() -> bytes:
    import json  # noqa: PLC0415 - only this mode needs it

    return json.dumps({
        "id": "msg_1", "type": "message", "role": "assistant", "model": f"m{EVIL}",
        "content": [{"type": "text", "text": f"hi{EVIL}"}],
        "data": [{"id": f"model-a{EVIL}"}, {"id": f"\u202egpj.exe{EVIL}"}],
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }, ensure_ascii=False).encode()


def _escapes_error() -> bytes:
    import json  # noqa: PLC0415

    return json.dumps({"error": {"type": "invalid_request_error", "message": f"bad model{EVIL}"}},
                      ensure_ascii=False).encode()


def _answer(status: str, body: bytes, *headers: str) -> bytes:
    head = [f"HTTP/1.1 {status}", "content-type: application/json", f"content-length: {len(body)}",
            "connection: close", *headers]
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body


class HostileServer:
    def __init__(self, mode: str, only: str | None = None):
        if mode not in MODES:
            raise ValueError(mode)
        self.mode, self.only = mode, only
        self.sent = 0
        self.requests: list[bytes] = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.sock.settimeout(0.1)
        self._stop = threading.Event()
        self._conns: list[socket.socket] = []
        self._lock = threading.Lock()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    @property
    def port(self) -> int:
        return int(self.sock.getsockname()[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> HostileServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            with self._lock:
                self._conns.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with contextlib.suppress(OSError):
            conn.settimeout(5)
            head = b""
            while b"\r\n\r\n" not in head and len(head) < 65536:
                got = conn.recv(65536)
                if not got:
                    return
                head += got
            self.requests.append(head.split(b"\r\n", 1)[0])
            if self.only is not None and head.split(b" ", 1)[0].decode("latin-1") != self.only:
                conn.sendall(_NOT_FOUND)
                return
            conn.settimeout(None)
            getattr(self, "_" + self.mode)(conn)
            conn.shutdown(socket.SHUT_WR)

    def _send(self, conn: socket.socket, data: bytes) -> None:
        conn.sendall(data)
        self.sent += len(data)

    def _double_gzip(self, conn: socket.socket) -> None:
        self._send(conn, _answer("200 OK", double_gzip_bomb(), "content-encoding: gzip, gzip"))

    def _gzip_bomb(self, conn: socket.socket) -> None:
        self._send(conn, _answer("200 OK", gzip_bomb(), "content-encoding: gzip"))

    def _triple_gzip(self, conn: socket.socket) -> None:
        body = gzip.compress(gzip.compress(gzip.compress(b'{"data": []}')))
        self._send(conn, _answer("200 OK", body, "content-encoding: gzip, gzip, gzip"))

    def _unknown_coding(self, conn: socket.socket) -> None:
        self._send(conn, _answer("200 OK", b'{"data": []}', "content-encoding: compress"))

    def _corrupt_gzip(self, conn: socket.socket) -> None:
        body = b"\x1f\x8b\x08\x00this is not gzip at all"
        self._send(conn, _answer("200 OK", body, "content-encoding: gzip"))

    def _slow_headers(self, conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nx-slow: ")
        while not self._stop.wait(HEADER_DRIP_S):
            self._send(conn, b"z")

    def _slow_body(self, conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n")
        while not self._stop.wait(1.0):
            self._send(conn, b" ")

    def _endless_body(self, conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n")
        self._send(conn, b'{"data": "')
        block = b"x" * 65536
        while not self._stop.is_set():
            self._send(conn, block)

    def _endless_sse(self, conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n")
        block = b'data: {"choices":[{"index":0,"delta":{"content":"x"}}]}\n\n' * 512
        while not self._stop.is_set():
            self._send(conn, block)

    def _endless_line(self, conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\ndata: ")
        block = b"y" * 65536
        while not self._stop.is_set():
            self._send(conn, block)

    def _escapes(self, conn: socket.socket) -> None:
        server = f"evil{EVIL}".encode().replace(b"\r", b"")
        self._send(conn, _answer("200 OK", _escapes_json()).replace(
            b"connection: close", b"connection: close\r\nserver: " + server, 1))

    def _escapes_error(self, conn: socket.socket) -> None:
        self._send(conn, _answer("400 Bad Request", _escapes_error()))

    def _huge_headers(self, conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n")
        line = b"x-big: " + b"h" * 8000 + b"\r\n"
        for _ in range(512):
            if self._stop.is_set():
                return
            self._send(conn, line)
        conn.sendall(b"content-length: 2\r\n\r\n{}")

    def _invalid_utf8(self, conn: socket.socket) -> None:
        body = (b'{"data": [{"id": "bad\xff\xfe\xc3("}], '
                b'"content": [{"type": "text", "text": "\xed\xa0\x80"}]}')
        self._send(conn, _answer("200 OK", body))

    def _silent(self, conn: socket.socket) -> None:
        self._stop.wait()

    def _control_header(self, conn: socket.socket) -> None:
        self._send(conn, _answer("200 OK", b'{"content": []}', "x-bad: a\x01b"))

    def _head_hang(self, conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 99\r\n\r\n")
        self._stop.wait()

    def _sse_head_hang(self, conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n"
                     b": ping\n\n")
        self._stop.wait()

    def _drip_then_hang(self, conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nx-slow: ")
        for _ in range(5):
            if self._stop.wait(HEADER_DRIP_S):
                return
            self._send(conn, b"z")
        conn.sendall(b"\r\ncontent-length: 99\r\n\r\n")
        self._stop.wait()

    def _stall(self, conn: socket.socket, event: bytes) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n")
        self._send(conn, event)
        self._stop.wait()

    def _json_stall(self, conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 99\r\n\r\n")
        self._send(conn, b'{"id": "m", ')
        self._stop.wait()

    def _sse_stall(self, conn: socket.socket) -> None:
        self._stall(conn, b'event: message_start\ndata: {"type":"message_start","message":{"id":"m",'
                          b'"type":"message","role":"assistant","content":[],"usage":{"input_tokens":3}}}\n\n')

    def _chat_stall(self, conn: socket.socket) -> None:
        self._stall(conn, b'data: {"id":"c","choices":[{"index":0,"delta":{"content":"par"}}]}\n\n')

    def close(self) -> None:
        self._stop.set()
        with self._lock:
            for conn in self._conns:
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)
                conn.close()
        self.sock.close()
        self.thread.join(timeout=2)
