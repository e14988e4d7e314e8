"""What a memory file or a skill adds to every request, counted by the active local server's tokenizer.

A memory file's text and each skill's listing line sit in the prompt prefix of every request a client
sends, so their size in the server's own tokens is what they cost the cache (and what a change to
them re-processes). Only the server can say that number: when the profile in use is not a local
server that tokenizes (``Server.rendering``), the cost is unknown and shown as such, never guessed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import httpx

from kvswitch import servers
from kvswitch.core import http_client
from kvswitch.core.errors import KvSwitchError
from kvswitch.core.http import Deadline
from kvswitch.core.models import Profile, mask_url
from kvswitch.verify.probe import parse_json

#: a tokenize answer for a memory file of 1 MB (tokens without pieces) is well under this
MAX_ANSWER_BYTES = 16 << 20


@dataclass
class TokenCounts:
    """Token counts per text from one server; ``by`` names it (the kind's label and its URL), ``None``
    when nothing could count, with ``why``."""

    by: str | None
    why: str = ""
    counts: dict[str, int] = field(default_factory=dict)

    def describe(self, text: str) -> str:
        """``~N tokens (counted by <server>)`` or ``unknown (<why>)``."""
        if self.by is not None and text in self.counts:
            return f"~{self.counts[text]:,} tokens (counted by {self.by})"
        return f"unknown ({self.why or 'not counted'})"

    def number(self, text: str) -> int | None:
        return self.counts.get(text) if self.by is not None else None


def count_tokens(profile: Profile | None, texts: Iterable[str], timeout: float = 10.0) -> TokenCounts:
    """Count each of ``texts`` with ``profile``'s server when it is a local one that tokenizes."""
    if profile is None:
        return TokenCounts(None, "no profile is in use")
    server = servers.find(profile.kind.value)
    if server is None or not server.local or server.rendering is None:
        return TokenCounts(None, f"the profile in use, {profile.name!r}, is not a local server that "
                           "tokenizes")
    base = profile.base_url.rstrip("/").removesuffix("/v1")
    route = server.rendering.tokenize_route
    label = f"{server.short_label} at {mask_url(base)}"
    result = TokenCounts(label)
    deadline = Deadline(timeout, "counting tokens")
    for text in dict.fromkeys(texts):
        try:
            with http_client.request("POST", base + route, timeout=deadline, limit=MAX_ANSWER_BYTES,
                                     json={"content": text, "add_special": False},
                                     what=mask_url(base + route)) as answer:
                status, data = answer.status, answer.read()
            tokens = parse_json(data).get("tokens") if status == 200 else None
        except (KvSwitchError, httpx.HTTPError, OSError, ValueError, AttributeError) as exc:
            return TokenCounts(None, f"{label} did not answer {route} ({type(exc).__name__})")
        if not isinstance(tokens, list):
            return TokenCounts(None, f"{label} answered {route} with HTTP {status}, no token list")
        result.counts[text] = len(tokens)
    return result
