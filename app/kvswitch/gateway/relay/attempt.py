"""One upstream tried, as the relay and the record both see it: the answer's status, its timing, what
reached the client and a bounded sample of the body.

Its own module so that ``forward`` (which fills it) and ``upstream`` (which reads the head into it) and
the per-request record (which reads it) all import it without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: the answer's last bytes kept for the record (beside its head): enough to read a final usage event
TAIL_BYTES = 64 * 1024


@dataclass
class Attempt:
    """One upstream tried: what it answered (or why it failed), and what reached the client."""

    url: str
    status: int | None = None
    error: str | None = None
    #: the status line went to the client: this attempt's answer is final
    committed: bool = False
    #: the answer was cut (a limit, the upstream or the client went away) after it was committed
    cut: str | None = None
    first_byte_ms: float | None = None
    #: the body's first bytes, read before the commit (``relay.upstream``): relayed first
    early: bytes = b""
    #: loop time by which the head and first body byte had to arrive
    head_deadline: float | None = None
    #: the first-byte deadline lapsed (a 504 when no profile is left, not a 502)
    timed_out: bool = False
    #: the answer went idle past ``Limits.upstream_idle`` after the commit (its row: 504)
    idle: bool = False
    elapsed_ms: float | None = None
    bytes_out: int = 0
    head: bytearray = field(default_factory=bytearray)
    tail: bytearray = field(default_factory=bytearray)
    error_body: bytes = b""

    def sample(self) -> bytes:
        """The kept head and tail of the answer (the tail only when it goes beyond the head)."""
        return bytes(self.head) + (b"\n" + bytes(self.tail) if self.tail else b"")

    def keep(self, piece: bytes, head_limit: int) -> None:
        room = head_limit - len(self.head)
        if room > 0:
            self.head.extend(piece[:room])
            piece = piece[room:]
        if piece:
            self.tail.extend(piece)
            if len(self.tail) > TAIL_BYTES:
                del self.tail[: len(self.tail) - TAIL_BYTES]
