"""Undoing a peer's ``Content-Encoding`` within a cap on every layer's decoded size.

An HTTP library's automatic decompression has no cap: 7 KB of ``gzip, gzip`` inflate to 4 GiB in one
call. Here each layer is decoded in bounded steps and the decoded total of each is checked after every
step, under the byte cap and the deadline of ``core.http``, and a coding KV Switch does not decode, a
stack of too many layers or a corrupt layer is refused with a message that names it.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from kvswitch.core.http import Deadline, NetworkLimitError, ResponseTooLarge, iter_bounded


class UndecodableBody(NetworkLimitError):
    """A ``Content-Encoding`` KV Switch does not decode, too many layers of it, or a corrupt layer."""


#: the content codings decoded (RFC 9110 8.4.1); anything else is refused with its name
DECODED_CODINGS = ("gzip", "x-gzip", "deflate")
#: more layers than this is no real server's doing (one is usual): each layer multiplies a bomb's size
MAX_CODING_LAYERS = 2
#: the most one decompression step may produce; the decoded total is checked after each step
DECODE_STEP = 64 * 1024


def content_codings(header: str | None) -> list[str]:
    """The codings of a ``Content-Encoding`` value in the order they were applied (identity dropped);
    ``UndecodableBody`` for a coding KV Switch does not decode, or more than ``MAX_CODING_LAYERS``."""
    codings = [c.strip().lower() for c in (header or "").split(",") if c.strip()]
    codings = [c for c in codings if c != "identity"]
    for coding in codings:
        if coding not in DECODED_CODINGS:
            shown = coding.encode("ascii", "replace").decode()[:40]
            raise UndecodableBody(f"the server sent its answer with Content-Encoding {shown!r}, which "
                                  f"KV Switch does not decode (it decodes {', '.join(DECODED_CODINGS)})")
    if len(codings) > MAX_CODING_LAYERS:
        raise UndecodableBody(f"the server sent its answer compressed {len(codings)} times over "
                              f"(Content-Encoding: {', '.join(codings)}); at most {MAX_CODING_LAYERS} "
                              "layers are decoded")
    return codings


def _decoder(coding: str) -> Any:
    return zlib.decompressobj(zlib.MAX_WBITS | 16 if coding in ("gzip", "x-gzip") else zlib.MAX_WBITS)


def _inflate(chunks: Iterable[bytes], coding: str, limit: int, what: str) -> Iterator[bytes]:
    """One layer decoded in steps of at most ``DECODE_STEP`` bytes; more than ``limit`` in all raises.

    ``decompress`` without ``max_length`` turns 10 KB into gigabytes in one call; with it, the input
    it has not used yet waits in ``unconsumed_tail`` (and output it owes comes on a call with no new
    input). Concatenated gzip members are decoded in turn; ``deflate`` is tried as zlib-wrapped first
    and as raw deflate if that fails (servers send both).
    """
    decoder = _decoder(coding)
    produced = 0
    started = False
    for chunk in chunks:
        data = chunk
        while data or started:
            try:
                out = decoder.decompress(data, DECODE_STEP)
            except zlib.error as exc:
                if coding == "deflate" and not started:
                    coding, decoder = "raw deflate", zlib.decompressobj(-zlib.MAX_WBITS)
                    continue
                raise UndecodableBody(f"{what} sent a corrupt {coding} body ({exc})") from None
            started = True
            produced += len(out)
            if produced > limit:
                raise ResponseTooLarge(limit, what, after=f"once decompressed ({coding})")
            if out:
                yield out
            if decoder.eof:
                data = decoder.unused_data if coding in ("gzip", "x-gzip") else b""
                if not data:
                    break
                decoder = _decoder(coding)  # a next gzip member
                continue
            data = decoder.unconsumed_tail
            if not data and len(out) < DECODE_STEP:
                break
    if started and not decoder.eof:
        raise UndecodableBody(f"{what} sent a {coding} body that is cut short or corrupt")


def iter_decoded(
    raw: Iterable[bytes],
    content_encoding: str | None,
    limit: int,
    deadline: Deadline | None = None,
    *,
    what: str = "the server",
    check: Callable[[], None] | None = None,
) -> Iterator[bytes]:
    """The body as the peer meant it: every ``Content-Encoding`` layer undone, with ``limit`` on the
    bytes on the wire *and* on the decoded bytes of every layer, the deadline checked per chunk.

    ``raw`` is the body as it came off the connection (httpx ``iter_raw``, which undoes only the
    chunked transfer coding): an HTTP library's automatic decompression has no cap of its own.
    """
    codings = content_codings(content_encoding)
    chunks: Iterable[bytes] = iter_bounded(raw, limit, deadline, what=what, check=check)
    for coding in reversed(codings):
        chunks = _inflate(chunks, coding, limit, what)
    yield from chunks
    if deadline is not None:
        deadline.check()
