"""A transparent recording proxy: see exactly what a client sends, and where two requests diverge.

The client (Claude Code, Codex) is pointed at the recorder instead of the server; every request is
forwarded unchanged and the answer streams back byte for byte as it arrives (no buffering, so time
to first token is untouched). Each request body is stored as a JSON capture with credentials masked,
and compared with the previous request to the same path, so a cache-breaking change shows up live.

It listens on loopback only unless explicitly allowed: it forwards whatever it receives with the
client's credentials, which must not become an open relay on a network.

Nothing is buffered without a bound: a request body is capped (``MAX_REQUEST_BODY``, else 413), an
answer passes through chunk by chunk with an idle timeout per read, a cap on its total size and a
deadline for the whole answer (``kvswitch.core.http``); past a limit the client's connection is
closed, so the client sees a cut answer instead of waiting forever.
"""

from __future__ import annotations

import contextlib
import http.client
import itertools
import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from kvswitch.core.errors import UsageError
from kvswitch.core.http import (
    MB,
    Deadline,
    DeadlineExceeded,
    NetworkLimitError,
    ResponseTooLarge,
    SocketCutter,
    check_timeout,
    check_url_port,
    iter_bounded,
)
from kvswitch.core.models import Profile, validate_base_url
from kvswitch.core.redact import mask_headers
from kvswitch.core.strictparse import loads as strict_json
from kvswitch.verify.capture import MASKED_HEADERS, Capture, response_reading
from kvswitch.verify.diagnose import diagnose_requests
from kvswitch.verify.probe import is_loopback_host

__all__ = ["MASKED_HEADERS", "Capture", "Recorder", "mask_headers", "parse_listen", "routed_profile"]

HOP_BY_HOP = (
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailers",
    "transfer-encoding",
    "upgrade",
    "proxy-connection",
)
RESPONSE_SAMPLE = 4 << 20  # bytes of each answer kept to read its cache numbers
#: twice the largest request body a hosted Messages API accepts (32 MB); Claude Code's are a few hundred KB
MAX_REQUEST_BODY = 64 * MB
#: far above any model answer, low enough that an endless upstream cannot fill a disk or a client
MAX_RESPONSE_BODY = 512 * MB
#: one answer may stream this long in total (a long agent turn on a slow CPU takes minutes)
MAX_RESPONSE_SECONDS = 3 * 3600.0
#: a client connection that sends nothing this long is closed (a dead client must not hold a thread)
CLIENT_IDLE_SECONDS = 600.0


def parse_listen(text: str, allow_remote: bool = False) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6); refuses a non-loopback host unless allowed."""
    host, sep, port_text = text.rpartition(":")
    digits = port_text.isascii() and port_text.isdigit()
    if not sep or not digits or not 0 <= int(port_text) <= 65535:
        raise UsageError(f"--listen {text!r}: expected HOST:PORT, e.g. 127.0.0.1:8089")
    host = host.strip("[]") or "127.0.0.1"
    if not allow_remote and not is_loopback_host(host):
        raise UsageError(
            f"--listen {text!r}: the recorder forwards your credentials, so it listens on loopback "
            "only; pass --allow-remote to listen on another address"
        )
    return host, int(port_text)


def routed_profile(profile: Profile, recorder_url: str) -> Profile:
    """The same profile sent through a recorder whose upstream is the profile's own base URL."""
    return profile.model_copy(update={"base_url": validate_base_url(recorder_url)}, deep=True)


class Recorder:
    """Start with ``start()`` (a background thread), stop with ``stop()``; ``url`` is where clients go.

    ``on_capture(capture)`` is called from the proxy's threads after each request has been answered.
    """

    def __init__(
        self,
        upstream: str,
        captures_dir: Path,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        allow_remote: bool = False,
        on_capture: Callable[[Capture], None] | None = None,
        upstream_timeout: float = 900.0,
        max_response_seconds: float = MAX_RESPONSE_SECONDS,
        max_response_bytes: int = MAX_RESPONSE_BODY,
        client_idle_timeout: float = CLIENT_IDLE_SECONDS,
    ):
        try:
            self.upstream = check_url_port(validate_base_url(upstream))
            #: idle time allowed between two chunks of an answer (a model may think a long time)
            self.upstream_timeout = check_timeout(upstream_timeout, "upstream timeout")
            self.max_response_seconds = check_timeout(max_response_seconds, "answer time limit")
            self.client_idle_timeout = check_timeout(client_idle_timeout, "client idle timeout")
        except ValueError as exc:
            raise UsageError(f"--upstream: {exc}") from None
        self.max_response_bytes = max_response_bytes
        if not allow_remote and not is_loopback_host(host):
            raise UsageError(f"refusing to listen on {host}: not a loopback address (use allow_remote)")
        self.captures_dir = Path(captures_dir)
        self.host, self.requested_port = host, port
        self.on_capture = on_capture
        self.captures: list[Capture] = []
        self._counter = itertools.count(1)
        self._lock = threading.Lock()
        self._last_by_path: dict[str, tuple[int, Any]] = {}
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._active = 0
        self._idle = threading.Condition(self._lock)

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("recorder not started")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def start(self) -> Recorder:
        try:
            self.captures_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(
                f"cannot create the captures directory {self.captures_dir}: {exc.strerror}"
            ) from None
        handler = _make_handler(self)
        server_class = _IPv6Server if ":" in self.host else ThreadingHTTPServer
        try:
            self._httpd = server_class((self.host, self.requested_port), handler)
        except OSError as exc:
            raise UsageError(
                f"cannot listen on {self.host}:{self.requested_port}: {exc.strerror or exc}"
            ) from None
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.1,), name="kvswitch-recorder", daemon=True
        )
        self._thread.start()
        return self

    def stop(self, drain: float = 5.0) -> None:
        """Stop listening, then give requests in flight up to ``drain`` seconds to finish and be stored."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        with self._idle:
            self._idle.wait_for(lambda: self._active == 0, timeout=drain)
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> Recorder:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- called from handler threads ------------------------------------------------------------
    def record(
        self,
        method: str,
        path: str,
        headers: dict[str, str],
        raw: bytes,
        status: int | None,
        response_sample: bytes,
        first_byte_ms: float | None = None,
    ) -> Capture:
        with self._lock:
            number = next(self._counter)
        try:
            body: Any = strict_json(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", errors="replace")
        data = {
            "n": number,
            "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "method": method,
            "path": path,
            "headers": mask_headers(headers),
            "body": body,
            "response_status": status,
        }
        file = self.captures_dir / f"request_{number:04d}.json"
        with contextlib.suppress(OSError):
            file.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        diagnosis, previous = None, None
        route = path.split("?")[0]
        if isinstance(body, dict):
            with self._lock:
                prior = self._last_by_path.get(route)
                self._last_by_path[route] = (number, body)
            if prior is not None:
                previous = prior[0]
                with contextlib.suppress(Exception):  # a diagnosis must never break the proxy
                    diagnosis = diagnose_requests(prior[1], body)
        capture = Capture(
            number,
            method,
            path,
            data["headers"],
            body,
            file,
            status,
            response_reading(response_sample),
            diagnosis,
            previous,
            response_sample,
            first_byte_ms,
        )
        with self._lock:
            self.captures.append(capture)
        if self.on_capture is not None:
            with contextlib.suppress(Exception):
                self.on_capture(capture)
        return capture


class _IPv6Server(ThreadingHTTPServer):
    import socket as _socket

    address_family = _socket.AF_INET6


def _make_handler(recorder: Recorder) -> type[BaseHTTPRequestHandler]:
    upstream = urlsplit(recorder.upstream)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = recorder.client_idle_timeout  # per read from the client; keep-alive clients reconnect

        def log_message(self, *args: object) -> None:
            pass

        def _body(self) -> bytes:
            """The request body, at most MAX_REQUEST_BODY bytes (``ResponseTooLarge`` beyond);
            ``ValueError`` for a malformed length or chunk header."""
            if "chunked" in (self.headers.get("transfer-encoding") or "").lower():
                chunks, total = [], 0
                while True:
                    size = int(self.rfile.readline(1024).split(b";")[0].strip() or b"0", 16)
                    if size == 0:
                        self.rfile.readline(1024)
                        break
                    total += size
                    if size < 0 or total > MAX_REQUEST_BODY:
                        raise ResponseTooLarge(MAX_REQUEST_BODY, "the client")
                    chunks.append(self.rfile.read(size))
                    self.rfile.readline(1024)
                return b"".join(chunks)
            length = int(self.headers.get("content-length") or 0)
            if length < 0 or length > MAX_REQUEST_BODY:
                raise ResponseTooLarge(MAX_REQUEST_BODY, "the client")
            return self.rfile.read(length) if length else b""

        def _refuse(self, status: int, message: str) -> None:
            data = json.dumps({"type": "error", "error": {"type": "proxy_error", "message": message}})
            with contextlib.suppress(OSError):
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(data.encode())
            self.close_connection = True

        def _proxy(self) -> None:
            with recorder._idle:
                recorder._active += 1
            try:
                self._forward()
            finally:
                with recorder._idle:
                    recorder._active -= 1
                    recorder._idle.notify_all()

        def _forward(self) -> None:
            try:
                raw = self._body()
            except ResponseTooLarge as exc:
                self._refuse(413, f"recorder: {exc}")
                return
            except ValueError:
                self._refuse(400, "recorder: malformed request body framing")
                return
            headers = {k: v for k, v in self.headers.items()}
            forward = {
                k: v for k, v in headers.items() if k.lower() not in HOP_BY_HOP and k.lower() != "host"
            }
            forward["Host"] = upstream.netloc
            if raw or self.command in ("POST", "PUT", "PATCH"):
                forward["Content-Length"] = str(len(raw))
            target = upstream.path.rstrip("/") + self.path
            conn_class = (
                http.client.HTTPSConnection if upstream.scheme == "https" else http.client.HTTPConnection
            )
            conn = conn_class(upstream.hostname or "", upstream.port, timeout=recorder.upstream_timeout)
            sample = bytearray()
            status: int | None = None
            first_byte_ms: float | None = None
            started = time.monotonic()
            what = f"upstream {recorder.upstream}"
            deadline = Deadline(recorder.max_response_seconds, what)
            cutter = SocketCutter(deadline).__enter__()  # also ends a header read dripping forever
            try:
                conn.connect()
                cutter.register(conn.sock)
                conn.request(self.command, target, body=raw or None, headers=forward)
                response = conn.getresponse()
                deadline.check()  # a head cut short by the cutter parses as complete: not an answer
                status = response.status
                self.send_response_only(response.status, response.reason)
                for name, value in response.getheaders():
                    if name.lower() not in HOP_BY_HOP and name.lower() != "content-length":
                        self.send_header(name, value)
                length = response.getheader("content-length")
                bodiless = self.command == "HEAD" or response.status in (204, 304) or response.status < 200
                if bodiless:
                    if length is not None:
                        self.send_header("Content-Length", length)
                    chunked = False
                elif length is not None and "chunked" not in (response.getheader("transfer-encoding") or ""):
                    self.send_header("Content-Length", length)
                    chunked = False
                else:
                    self.send_header("Transfer-Encoding", "chunked")
                    chunked = True
                self.end_headers()
                # each read1 waits at most upstream_timeout (idle); the whole answer is capped too
                pieces = iter(lambda: b"" if bodiless else response.read1(65536), b"")
                for piece in iter_bounded(pieces, recorder.max_response_bytes, deadline, what=what):
                    if first_byte_ms is None:
                        first_byte_ms = (time.monotonic() - started) * 1000
                    if len(sample) < RESPONSE_SAMPLE:
                        sample.extend(piece[: RESPONSE_SAMPLE - len(sample)])
                    self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n" if chunked else piece)
                    self.wfile.flush()
                deadline.check()  # the cutter ended the read: the answer is cut, never pass it as whole
                if chunked:
                    self.wfile.write(b"0\r\n\r\n")
                    self.wfile.flush()
            except (OSError, http.client.HTTPException, NetworkLimitError) as exc:
                if status is None:
                    status = 502
                    why = DeadlineExceeded(deadline.seconds, what) if deadline.expired else exc
                    self._refuse(502, f"recorder: upstream {recorder.upstream} failed: {why}")
                else:
                    self.close_connection = True
            finally:
                cutter.__exit__()
                conn.close()
                recorder.record(self.command, self.path, headers, raw, status, bytes(sample), first_byte_ms)

        do_GET = _proxy
        do_POST = _proxy
        do_PUT = _proxy
        do_PATCH = _proxy
        do_DELETE = _proxy
        do_HEAD = _proxy
        do_OPTIONS = _proxy

    return Handler
