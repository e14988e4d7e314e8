"""One recorded request: what the client sent (credentials masked) and what the answer said about the cache.

Kept apart from the proxy so the capture format and its one-line summary can be read and tested
without a server running.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kvswitch.core.redact import SECRET_HEADERS
from kvswitch.core.text import printable
from kvswitch.servers.answers import response_reading
from kvswitch.verify.diagnose import PrefixDiagnosis
from kvswitch.verify.evidence import Reading

MASKED_HEADERS = tuple(sorted(SECRET_HEADERS))

__all__ = ["MASKED_HEADERS", "Capture", "response_reading"]


@dataclass(frozen=True)
class Capture:
    """One recorded request (headers already masked) and what the answer said about the cache."""

    number: int
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    file: Path
    status: int | None = None
    cache: Reading | None = None
    diagnosis: PrefixDiagnosis | None = None
    previous: int | None = None
    #: the first bytes of the answer exactly as the upstream sent them (up to 4 MiB)
    response_sample: bytes = b""
    #: from forwarding the request to the answer's first body bytes: for a streamed answer the time to
    #: the first token, which on a local server is mostly the prompt's processing
    first_byte_ms: float | None = None

    def summary(self) -> str:
        size = len(json.dumps(self.body)) if self.body is not None else 0
        line = f"#{self.number} {self.method} {self.path} {size / 1024:.1f} KB -> {self.status}"
        if self.cache is not None and self.cache.cached is not None:
            line += f", cached {self.cache.cached} of {self.cache.prompt} ({self.cache.source})"
        if self.diagnosis is not None and self.previous is not None:
            d = self.diagnosis
            if d.identical or d.extends:
                line += f"\n    vs #{self.previous}: prefix kept ({d.identical_bytes} bytes identical)"
            else:
                line += (
                    f"\n    vs #{self.previous}: first divergence {d.part} at byte {d.part_offset} "
                    f"({d.identical_share:.1%} identical)"
                )
                if d.cause_text:
                    line += f"\n    cause: {d.cause_text}"
        return printable(line)  # the path and the snippets come from the client's request
