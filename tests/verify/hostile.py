"""A loopback HTTP server that misbehaves on purpose: what a real server does only when broken or hostile.

Each connection reads one request head, then answers according to ``mode``:

- ``endless``: 200 with a JSON content type and no length, then bytes without end, as fast as it can;
- ``endless_sse``: 200 ``text/event-stream``, then well-formed token events without end;
- ``endless_line``: 200 ``text/event-stream``, then one line that never ends (no newline ever);
- ``drip``: 200 with a JSON content type, then one byte a second;
- ``header_drip``: a status line, then header bytes every 0.2 s (under any per-read timeout) forever.

``only`` restricts the misbehaviour to one method (others get a quick 404), so a probe gets past its
detection GETs and meets the hostile answer on its real request. ``sent`` counts bytes written.
"""

from __future__ import annotations

import contextlib
import socket
import threading

_HEAD_JSON = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n"
_HEAD_SSE = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n"
_NOT_FOUND = b"HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}"
_TOKEN = b'data: {"choices":[{"index":0,"delta":{"content":"x"}}]}\n\n'


class HostileServer:
    def __init__(self, mode: str, only: str | None = None):
        self.mode, self.only = mode, only
        self.sent = 0
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
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
                got = conn.recv(4096)
                if not got:
                    return
                head += got
            method = head.split(b" ", 1)[0].decode()
            if self.only is not None and method != self.only:
                conn.sendall(_NOT_FOUND)
                return
            self._misbehave(conn)

    def _misbehave(self, conn: socket.socket) -> None:
        conn.settimeout(None)
        if self.mode == "endless":
            conn.sendall(_HEAD_JSON + b'{"data": "')
            block = b"x" * 65536
            while not self._stop.is_set():
                conn.sendall(block)
                self.sent += len(block)
        elif self.mode == "endless_sse":
            conn.sendall(_HEAD_SSE)
            block = _TOKEN * 512
            while not self._stop.is_set():
                conn.sendall(block)
                self.sent += len(block)
        elif self.mode == "endless_line":
            conn.sendall(_HEAD_SSE + b"data: ")
            block = b"y" * 65536
            while not self._stop.is_set():
                conn.sendall(block)
                self.sent += len(block)
        elif self.mode == "drip":
            conn.sendall(_HEAD_JSON)
            while not self._stop.wait(1.0):
                conn.sendall(b" ")
                self.sent += 1
        elif self.mode == "header_drip":
            conn.sendall(b"HTTP/1.1 200 OK\r\nx-slow: ")
            while not self._stop.wait(0.2):
                conn.sendall(b"z")
                self.sent += 1
        else:
            raise ValueError(self.mode)

    def close(self) -> None:
        self._stop.set()
        with self._lock:
            for conn in self._conns:
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)
                conn.close()
        self.sock.close()
        self.thread.join(timeout=2)
