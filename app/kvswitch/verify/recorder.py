"""The recorder as ``kvswitch record`` and ``verify --client`` use it: the gateway's recording mode
(``kvswitch.gateway.recorder``) plus, for each request, where it diverges from the previous request
to the same path, so a cache-breaking change shows up live.

The proxy itself lives in the gateway (one proxy in the codebase); this module only adds the verify
layer's prefix diagnosis to each capture.
"""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path
from typing import Any

from kvswitch.core.redact import mask_headers
from kvswitch.gateway.recorder import RESPONSE_SAMPLE, BaseRecorder, Recorded, routed_profile
from kvswitch.gateway.relay.forward import MAX_REQUEST_BODY, MAX_RESPONSE_BODY, MAX_RESPONSE_SECONDS
from kvswitch.gateway.relay.server import parse_listen as _parse_listen
from kvswitch.verify.capture import MASKED_HEADERS, Capture
from kvswitch.verify.diagnose import diagnose_requests

__all__ = ["MASKED_HEADERS", "MAX_REQUEST_BODY", "MAX_RESPONSE_BODY", "MAX_RESPONSE_SECONDS",
           "RESPONSE_SAMPLE", "Capture", "Recorder", "mask_headers", "parse_listen", "routed_profile"]


def parse_listen(text: str, allow_remote: bool = False) -> tuple[str, int]:
    """``HOST:PORT`` for ``kvswitch record --listen``; loopback only unless allowed."""
    return _parse_listen(text, allow_remote, what="the recorder")


class Recorder(BaseRecorder[Capture]):
    """``Recorder(upstream, captures_dir, on_capture=...)``; ``start``/``stop`` or ``with``; ``url``,
    ``captures`` (``Capture``: masked request, cache reading, divergence from the previous one)."""

    def __init__(self, upstream: str, captures_dir: Path, **options: Any):
        super().__init__(upstream, captures_dir, **options)
        self._last_by_path: dict[str, tuple[int, Any]] = {}
        self._path_lock = threading.Lock()

    def make_capture(self, recorded: Recorded) -> Capture:
        diagnosis, previous = None, None
        route = recorded.path.split("?")[0]
        if isinstance(recorded.body, dict):
            with self._path_lock:
                prior = self._last_by_path.get(route)
                self._last_by_path[route] = (recorded.number, recorded.body)
            if prior is not None:
                previous = prior[0]
                with contextlib.suppress(Exception):  # a diagnosis must never break the proxy
                    diagnosis = diagnose_requests(prior[1], recorded.body)
        return Capture(
            recorded.number, recorded.method, recorded.path, recorded.headers, recorded.body,
            recorded.file, recorded.status, recorded.cache, diagnosis, previous,
            recorded.response_sample, recorded.first_byte_ms,
        )
