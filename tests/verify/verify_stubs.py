"""Loopback stub servers for the error paths a real llama-server cannot produce on demand.

``StubServer`` answers from a per-path script of canned responses (real captured bodies where they
exist); ``HangingServer`` accepts connections and never answers (or trickles bytes forever).
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    chunks: list[bytes] | None = None  # streamed with a flush after each

    @classmethod
    def json(cls, data: Any, status: int = 200) -> Reply:
        return cls(status, json.dumps(data).encode())

    @classmethod
    def sse(cls, events: list[dict[str, Any]], done: bool = True) -> Reply:
        chunks = [f"data: {json.dumps(e)}\n\n".encode() for e in events]
        if done:
            chunks.append(b"data: [DONE]\n\n")
        return cls(200, b"", "text/event-stream", chunks)


Handler = Callable[[str, dict[str, str], bytes], Reply]


class _StubHTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return  # the client hung up mid-answer, as the cancel and timeout tests make it do
        super().handle_error(request, client_address)


@dataclass
class StubServer:
    """Routes ``METHOD path`` to a list of replies (consumed in order, the last one repeats)."""

    routes: dict[str, list[Reply] | Handler] = field(default_factory=dict)
    requests: list[tuple[str, str, dict[str, str], bytes]] = field(default_factory=list)

    def __post_init__(self) -> None:
        stub = self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                path = self.path.split("?")[0]
                headers = {k.lower(): v for k, v in self.headers.items()}
                stub.requests.append((self.command, path, headers, body))
                route = stub.routes.get(f"{self.command} {path}")
                if route is None:
                    reply = Reply.json({"error": {"message": "File Not Found", "code": 404}}, 404)
                elif callable(route):
                    reply = route(path, headers, body)
                else:
                    reply = route.pop(0) if len(route) > 1 else route[0]
                self.send_response(reply.status)
                self.send_header("content-type", reply.content_type)
                if reply.chunks is None:
                    self.send_header("content-length", str(len(reply.body)))
                    self.end_headers()
                    self.wfile.write(reply.body)
                    return
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                for chunk in reply.chunks:
                    self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")

            do_GET = _serve
            do_POST = _serve

        self.httpd = _StubHTTPServer(("127.0.0.1", 0), _Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def posts(self, path: str) -> list[dict[str, Any]]:
        return [json.loads(body) for method, p, _h, body in self.requests if method == "POST" and p == path]

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class HangingServer:
    """Accepts connections, reads nothing useful and never answers (``trickle`` sends a byte a tick)."""

    def __init__(self, trickle: bool = False):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.trickle = trickle
        self.conns: list[socket.socket] = []
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _accept(self) -> None:
        self.sock.settimeout(0.1)
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.conns.append(conn)
            if self.trickle:
                threading.Thread(target=self._drip, args=(conn,), daemon=True).start()

    def _drip(self, conn: socket.socket) -> None:
        try:
            conn.sendall(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
            )
            while not self._stop.is_set():
                conn.sendall(b"1\r\n:\r\n")
                time.sleep(0.1)
        except OSError:
            return

    def close(self) -> None:
        self._stop.set()
        for conn in self.conns:
            conn.close()
        self.sock.close()
