"""What of a request's and an answer's headers may cross the gateway: hop-by-hop headers stay on their
hop, and a header the gateway cannot relay byte for byte (a control character, a line break, bytes
that are not UTF-8) is refused by name instead of being altered or dropped on the way.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from multidict import CIMultiDict

HOP_BY_HOP = frozenset({
    "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer", "trailers",
    "transfer-encoding", "upgrade", "proxy-connection",
})


class BodyRefused(Exception):
    """The client's body broke the cap or its framing; ``status`` and ``message`` are the answer."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


#: what HTTP forbids in a field (RFC 9110 5.5: controls other than HTAB, and DEL); aiohttp refuses to
#: write them, so a header holding one cannot be relayed
_FORBIDDEN_IN_HEADER = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
#: bytes that were not UTF-8 on the wire (the parser keeps them as lone surrogates): aiohttp's writer
#: drops them without a word, so ``caf\xe9`` would leave as ``caf``
_NOT_UTF8 = re.compile("[\udc80-\udcff]")


def unrelayable_header(name: str, value: str) -> str | None:
    """Why a header cannot go on byte for byte (``None``: it can).

    RFC 9110 allows obs-text (bytes 0x80-0xFF) in a value, but the one writer the gateway has encodes
    text as UTF-8, so a non-UTF-8 byte can neither pass unchanged nor be dropped unseen: it is refused
    with its name, like a control byte."""
    if _FORBIDDEN_IN_HEADER.search(name) or _FORBIDDEN_IN_HEADER.search(value):
        return "carries a control character or line break"
    if _NOT_UTF8.search(name) or _NOT_UTF8.search(value):
        return "carries bytes that are not UTF-8 (the gateway forwards headers unchanged or not at all)"
    return None


def shown_name(name: str) -> str:
    """A header name as an error text may show it (its raw bytes, escaped)."""
    return ascii(name.encode("utf-8", "surrogateescape").decode("latin-1"))


def upstream_headers(
    headers: Iterable[tuple[str, str]], *, drop: Iterable[str] = (), add: dict[str, str] | None = None
) -> CIMultiDict[str]:
    """The client's headers minus hop-by-hop ones (and those its ``Connection`` lists), ``Host``,
    ``Content-Length`` and ``drop``; plus ``add``. Values arrive unfolded from the parser and are
    re-validated here, so a header never carries a line break upstream."""
    items = list(headers)
    listed = {
        token.strip().lower()
        for name, value in items if name.lower() == "connection"
        for token in value.split(",")
    }
    # ``Expect: 100-continue`` was answered here already: the whole body goes on in one piece
    dropped = HOP_BY_HOP | listed | {"host", "content-length", "expect"} | {name.lower() for name in drop}
    out: CIMultiDict[str] = CIMultiDict()
    for name, value in items:
        if name.lower() in dropped:
            continue
        why = unrelayable_header(name, value)
        if why is not None:
            raise BodyRefused(400, f"header {shown_name(name)} {why}")
        out.add(name, value)
    for name, value in (add or {}).items():
        out[name] = value
    return out
