"""Failover decisions: which answers may be retried on the next profile, and a circuit breaker that
skips an upstream that keeps failing for a while, then lets one request try it again.

Retrying is only ever decided before the first byte of an answer went to the client: after that,
the answer belongs to the upstream that started it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

#: statuses that mean "this upstream cannot serve now" rather than "this request is wrong"
RETRYABLE_STATUSES = frozenset({429, 500, 502, 503, 504, 520, 521, 522, 523, 524, 529})


def retryable(status: int | None) -> bool:
    """A connection failure (``None``), a 5xx or a 429."""
    return status is None or status in RETRYABLE_STATUSES or 500 <= status < 600


@dataclass
class _State:
    failures: int = 0
    opened_at: float | None = None
    trial: bool = False


class CircuitBreaker:
    """After ``threshold`` failures in a row an upstream is skipped for ``cooldown`` seconds; then one
    request may try it (half-open): success closes the circuit, failure opens it again."""

    def __init__(self, threshold: int = 3, cooldown: float = 30.0,
                 clock: Callable[[], float] = time.monotonic):
        self.threshold = threshold
        self.cooldown = cooldown
        self._clock = clock
        self._states: dict[str, _State] = {}
        self._lock = threading.Lock()

    def available(self, name: str) -> bool:
        with self._lock:
            state = self._states.get(name)
            if state is None or state.opened_at is None:
                return True
            if self._clock() - state.opened_at >= self.cooldown and not state.trial:
                state.trial = True
                return True
            return False

    def success(self, name: str) -> None:
        with self._lock:
            self._states.pop(name, None)

    def failure(self, name: str) -> None:
        with self._lock:
            state = self._states.setdefault(name, _State())
            state.failures += 1
            state.trial = False
            if state.failures >= self.threshold or state.opened_at is not None:
                state.opened_at = self._clock()

    def open_circuits(self) -> list[str]:
        """Upstreams skipped right now (``gateway status``, the tray)."""
        with self._lock:
            now = self._clock()
            return sorted(name for name, s in self._states.items()
                          if s.opened_at is not None and now - s.opened_at < self.cooldown)
