"""Bounded network reads: every answer a peer sends is capped in bytes and in time.

A per-read socket timeout bounds nothing: a server that sends headers and then bytes without end,
or one byte a second, never trips it, and reading "the whole body" then takes unbounded time and
memory. Everything KV Switch reads from a network peer therefore goes through these helpers:
a ``Deadline`` for the whole operation (all its requests, not each read), checked after every
chunk, and a byte cap on what is read or passed through. Exceeding either raises a
``NetworkLimitError`` whose message says which limit and how big it was.

Pure Python, no HTTP library: callers hand in any iterator of byte chunks (httpx ``iter_bytes``,
``http.client`` ``read1``), so the CLI, the window and the recorder share one set of limits.
Undoing ``Content-Encoding`` within these caps is ``core.content_coding``'s; whether an address is
local and a URL's port usable, ``core.addresses``'.
"""

from __future__ import annotations

import contextlib
import math
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Self

from kvswitch.core.errors import KvSwitchError

MB = 1 << 20
#: the longest whole-operation timeout accepted anywhere (a day); beyond that it is a typo
MAX_TIMEOUT = 86400.0


class NetworkLimitError(KvSwitchError):
    """A peer's answer broke a limit (size or time); ``kvswitch verify`` reports it as ERROR."""

    exit_code = 4


class ResponseTooLarge(NetworkLimitError):
    """More bytes than the cap for this kind of answer."""

    def __init__(self, limit: int, what: str = "the server", after: str = ""):
        self.limit = limit
        after = f" {after}" if after else ""
        super().__init__(f"{what} sent more than {format_size(limit)}{after}; stopped reading")


class LineTooLong(ResponseTooLarge):
    """A line-framed stream (SSE, NDJSON) sent a line longer than the cap, with no newline in sight."""

    def __init__(self, limit: int, what: str = "the server"):
        self.limit = limit
        message = f"{what} sent a line longer than {format_size(limit)}; stopped reading"
        NetworkLimitError.__init__(self, message)


class DeadlineExceeded(NetworkLimitError):
    """The whole operation ran past its deadline."""

    def __init__(self, seconds: float, what: str = ""):
        self.seconds = seconds
        prefix = f"{what}: " if what else ""
        super().__init__(f"{prefix}no complete answer within the {seconds:g} s timeout")


class HeadersTooSlow(DeadlineExceeded):
    """The status line and headers did not arrive within their own deadline."""

    def __init__(self, seconds: float, what: str = ""):
        self.seconds = seconds
        prefix = f"{what}: " if what else ""
        NetworkLimitError.__init__(self, f"{prefix}no response headers within {seconds:g} s")


def format_size(size: int) -> str:
    if size >= MB and size % MB == 0:
        return f"{size // MB} MB"
    if size >= 1024 and size % 1024 == 0:
        return f"{size // 1024} KB"
    return f"{size} bytes"


def check_timeout(value: float, name: str = "timeout") -> float:
    """``value`` if it is a finite number of seconds in (0, MAX_TIMEOUT]; ``ValueError`` otherwise.

    ``inf`` would overflow the clocks and socket calls below, ``nan`` compares false with every
    deadline (so it would never expire), and 0 or less can never succeed.
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{name} must be a number of seconds")
    if math.isnan(value) or math.isinf(value):
        raise ValueError(f"{name} must be a finite number of seconds, not {value}")
    if value <= 0:
        raise ValueError(f"{name} must be greater than 0 seconds")
    if value > MAX_TIMEOUT:
        raise ValueError(f"{name} must be at most {MAX_TIMEOUT:g} seconds (one day)")
    return float(value)


class Deadline:
    """One point in time by which a whole operation (every request and read in it) must be done."""

    def __init__(self, seconds: float, what: str = "", clock: Callable[[], float] = time.monotonic):
        self.seconds = check_timeout(seconds)
        self.what = what
        self._clock = clock
        self.at = clock() + self.seconds

    def now(self) -> float:
        return self._clock()

    def remaining(self) -> float:
        return max(0.0, self.at - self._clock())

    @property
    def expired(self) -> bool:
        return self._clock() >= self.at

    def check(self) -> None:
        if self.expired:
            raise DeadlineExceeded(self.seconds, self.what)

    def socket_timeout(self, cap: float | None = None, floor: float = 0.05) -> float:
        """A per-read timeout that never outlives the deadline (``floor`` keeps it usable)."""
        left = self.remaining()
        return max(floor, min(left, cap) if cap is not None else left)


class SocketCutter:
    """Shuts its sockets down when the deadline passes (or ``cancel`` is set): a blocked read ends at once.

    Checking the deadline between chunks is not enough on its own: a peer that drips header bytes
    just faster than the per-read timeout keeps one read-headers call going for hours, and a blocked
    read cannot see a cancel button. Use as a context manager (a watcher thread runs inside it);
    register sockets with ``register`` or, for httpx, ``trace`` (its ``trace`` request extension).
    ``tripped`` says why it cut: ``"cancelled"``, ``"timeout"``, ``"headers"`` (``expect_headers``) or None.
    """

    #: how often a cancel flag is looked at
    CANCEL_POLL = 0.05

    def __init__(self, deadline: Deadline, cancel: threading.Event | None = None):
        self.clock = deadline
        self.cancel = cancel
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._tripped: str | None = None
        self._watcher: threading.Thread | None = None
        self._headers_by: float | None = None
        #: the header allowance of the request last started (for the message when it trips)
        self.header_seconds = 0.0

    def __enter__(self) -> Self:
        self._watcher = threading.Thread(target=self._watch, name="kvswitch-socket-cutter", daemon=True)
        self._watcher.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._wake.set()
        if self._watcher is not None:
            self._watcher.join(timeout=2)

    def expect_headers(self, seconds: float) -> None:
        """A request starts: until ``headers_arrived``, cut its socket ``seconds`` from now as well.

        The whole-operation deadline still applies; this one ends a peer that drips its status line
        and headers sooner, since nothing useful can come of such an answer.
        """
        with self._lock:
            self.header_seconds = seconds
            self._headers_by = self.clock.now() + seconds
        self._wake.set()

    def headers_arrived(self) -> None:
        with self._lock:
            self._headers_by = None

    def _header_time_left(self) -> float | None:
        with self._lock:
            by = self._headers_by
        return None if by is None else by - self.clock.now()

    def _watch(self) -> None:
        while not self._stop.is_set():
            wait = self.clock.remaining()
            header_left = self._header_time_left()
            if header_left is not None:
                wait = min(wait, max(0.0, header_left))
            if self.cancel is not None:
                wait = min(wait, self.CANCEL_POLL)
            self._wake.wait(wait)
            self._wake.clear()
            if self._stop.is_set():
                return
            if self.cancel is not None and self.cancel.is_set():
                self.cut("cancelled")
                return
            if self.clock.expired:  # still waiting for headers: that is what the peer failed to send
                self.cut("headers" if self._header_time_left() is not None else "timeout")
                return
            header_left = self._header_time_left()
            if header_left is not None and header_left <= 0:
                self.cut("headers")
                return

    @property
    def tripped(self) -> str | None:
        """``"cancelled"``, ``"timeout"`` (the whole deadline), ``"headers"`` (header deadline) or None."""
        if self.cancel is not None and self.cancel.is_set():
            return "cancelled"
        if self._tripped is None and self.clock.expired:
            return "timeout"
        return self._tripped

    def limit_error(self, what: str = "") -> NetworkLimitError | None:
        """The error for the limit that made this cutter cut (None when it did not, or on cancel)."""
        why = self.tripped
        if why == "timeout":
            return DeadlineExceeded(self.clock.seconds, what)
        if why == "headers":
            return HeadersTooSlow(self.header_seconds, what)
        return None

    def register(self, sock: object) -> None:
        if not isinstance(sock, socket.socket):
            return
        with self._lock:
            self._sockets.append(sock)
            tripped = self._tripped
        if tripped is not None:
            self.cut(tripped)

    def trace(self, event: str, info: Mapping[str, Any]) -> None:
        if event == "connection.connect_tcp.complete":
            stream = info.get("return_value")
            self.register(stream.get_extra_info("socket") if stream is not None else None)

    def cut(self, why: str = "timeout") -> None:
        with self._lock:
            if self._tripped is None:
                self._tripped = why
            sockets, self._sockets = self._sockets, []
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


def iter_bounded(
    chunks: Iterable[bytes],
    limit: int,
    deadline: Deadline | None = None,
    *,
    what: str = "the server",
    check: Callable[[], None] | None = None,
) -> Iterator[bytes]:
    """Pass ``chunks`` through while their total stays within ``limit`` bytes and the deadline holds.

    ``check`` (e.g. a cancel test) runs after every chunk too. Nothing is buffered here: memory is
    one chunk, whatever the peer sends.
    """
    total = 0
    for chunk in chunks:
        total += len(chunk)
        if total > limit:
            raise ResponseTooLarge(limit, what)
        if deadline is not None:
            deadline.check()
        if check is not None:
            check()
        yield chunk
    if deadline is not None:
        deadline.check()  # a read ended by a cut socket looks like a normal end: only the clock tells


def read_bounded(
    chunks: Iterable[bytes],
    limit: int,
    deadline: Deadline | None = None,
    *,
    what: str = "the server",
    check: Callable[[], None] | None = None,
) -> bytes:
    """The whole body, at most ``limit`` bytes, read before the deadline; raises otherwise."""
    return b"".join(iter_bounded(chunks, limit, deadline, what=what, check=check))


def read_prefix(chunks: Iterable[bytes], limit: int, deadline: Deadline | None = None) -> bytes:
    """The first ``limit`` bytes (the rest is not read): for error bodies, where a prefix is enough."""
    kept = bytearray()
    for chunk in chunks:
        kept += chunk[: limit - len(kept)]
        if len(kept) >= limit or (deadline is not None and deadline.expired):
            break
    return bytes(kept)


def iter_lines_bounded(
    chunks: Iterable[bytes], max_line: int, *, what: str = "the server"
) -> Iterator[bytes]:
    """Lines (without their ``\\n``/``\\r\\n``) from a byte stream, none longer than ``max_line``.

    A generic line splitter keeps everything up to the next newline in memory, so a stream that
    never sends one grows without end; this one raises ``ResponseTooLarge`` instead.
    """
    pending = bytearray()
    for chunk in chunks:
        pending += chunk
        start = 0
        while (end := pending.find(b"\n", start)) >= 0:
            yield bytes(pending[start:end]).rstrip(b"\r")
            start = end + 1
        del pending[:start]
        if len(pending) > max_line:
            raise LineTooLong(max_line, what)
    if pending:
        yield bytes(pending).rstrip(b"\r")
