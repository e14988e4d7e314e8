"""The one bounded HTTP reader (``core.http`` + ``core.http_client``), in-process: every content-coding
layer decoded within the cap, refusals that say what was refused, the header deadline, and the rule
that nothing else in KV Switch reads an httpx body (where its automatic decompression has no cap)."""

from __future__ import annotations

import gzip
import re
import time
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest

from kvswitch.core import http_client
from kvswitch.core.content_coding import UndecodableBody, iter_decoded
from kvswitch.core.http import MB, DeadlineExceeded, HeadersTooSlow, ResponseTooLarge
from support.hostile_servers import HostileServer, double_gzip_bomb

APP = Path(__file__).resolve().parents[2] / "app" / "kvswitch"
BODY = b'{"data": [' + b'{"id": "model"},' * 20_000 + b'{"id": "last"}]}'


def _pieces(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


@pytest.mark.parametrize(("coding", "encoded"), [
    (None, BODY),
    ("identity", BODY),
    ("gzip", gzip.compress(BODY)),
    ("x-gzip", gzip.compress(BODY)),
    ("deflate", zlib.compress(BODY)),
    ("deflate", zlib.compress(BODY)[2:-4]),  # raw deflate, as some servers send it
    ("gzip, gzip", gzip.compress(gzip.compress(BODY))),
    ("GZIP , identity", gzip.compress(BODY)),
    ("gzip", gzip.compress(BODY[:100]) + gzip.compress(BODY[100:])),  # two members
])
@pytest.mark.parametrize("piece", [7, 65536])
def test_every_layer_is_decoded(coding: str | None, encoded: bytes, piece: int) -> None:
    assert b"".join(iter_decoded(_pieces(encoded, piece), coding, MB)) == BODY


def test_byte_by_byte_through_two_layers() -> None:
    encoded = gzip.compress(gzip.compress(BODY))
    assert b"".join(iter_decoded(_pieces(encoded, 1), "gzip, gzip", MB)) == BODY


def test_the_cap_applies_to_the_decoded_size_of_every_layer() -> None:
    started = time.monotonic()
    with pytest.raises(ResponseTooLarge, match=r"more than 8 MB once decompressed \(gzip\)"):
        for _ in iter_decoded(_pieces(double_gzip_bomb(), 1000), "gzip, gzip", 8 * MB):
            pass
    assert time.monotonic() - started < 5  # 4 GiB would take a minute to inflate, and 4 GiB of memory


@pytest.mark.parametrize(("coding", "said"), [
    ("br", "Content-Encoding 'br', which KV Switch does not decode"),
    ("compress", "'compress'"),
    ("gzip, gzip, gzip", "compressed 3 times over"),
    ("zstd, gzip", "'zstd'"),
])
def test_unknown_codings_and_too_many_layers_are_refused(coding: str, said: str) -> None:
    with pytest.raises(UndecodableBody, match=re.escape(said)):
        b"".join(iter_decoded([b"x"], coding, MB))


def test_a_corrupt_layer_is_named() -> None:
    with pytest.raises(UndecodableBody, match="corrupt"):
        b"".join(iter_decoded([b"\x1f\x8b\x08\x00 not gzip"], "gzip", MB))
    with pytest.raises(UndecodableBody, match="cut short or corrupt"):
        b"".join(iter_decoded([gzip.compress(BODY)[:200]], "gzip", MB))


def test_the_wire_is_capped_too() -> None:
    with pytest.raises(ResponseTooLarge, match="more than 1 KB"):
        b"".join(iter_decoded(_pieces(b"x" * 5000, 100), None, 1024))


def test_headers_one_byte_a_second_end_at_the_header_deadline(
    hostile_server: Callable[[str], HostileServer],
) -> None:
    server = hostile_server("slow_headers")
    started = time.monotonic()
    with pytest.raises(HeadersTooSlow, match="no response headers within 1.5 s"), http_client.request(
        "GET", server.url + "/v1/models", timeout=30, limit=MB, header_timeout=1.5
    ):
        pass
    elapsed = time.monotonic() - started
    assert elapsed < 20, elapsed  # 1.5 s and the time a loaded machine needs to notice


def test_a_body_one_byte_a_second_ends_at_the_total_deadline(
    hostile_server: Callable[[str], HostileServer],
) -> None:
    server = hostile_server("slow_body")
    started = time.monotonic()
    with pytest.raises(DeadlineExceeded, match="within the 2 s timeout"), http_client.request(
        "GET", server.url, timeout=2, limit=MB
    ) as answer:
        answer.read()
    elapsed = time.monotonic() - started
    assert elapsed < 20, elapsed


def test_httpx_automatic_decompression_cannot_be_reached(
    hostile_server: Callable[[str], HostileServer],
) -> None:
    server = hostile_server("double_gzip")
    with pytest.raises(ResponseTooLarge, match="once decompressed"), \
            http_client.request("GET", server.url, timeout=10, limit=MB) as answer:
        answer.read()


#: what reads an httpx body with its automatic, uncapped decompression (or a whole body at once)
_UNCAPPED = re.compile(
    r"\.(iter_bytes|iter_text|iter_lines|aiter_bytes|aiter_text|aiter_lines)\(|\.json\(\)|"
    r"\bhttpx\.(get|post|put|patch|delete|head|request|stream)\(|\bresponse\.(content|text)\b"
)


def test_no_module_reads_a_network_body_but_through_the_bounded_reader() -> None:
    """Everything goes through ``core.http_client.Answer`` (raw bytes, decoded within the cap); the
    gateway's pass-through (aiohttp, ``gateway/relay/forward.py`` and its head, ``gateway/relay/upstream.py``)
    reads raw chunks under its own caps and
    never decodes (its client session has ``auto_decompress=False``, checked here)."""
    offenders = []
    forward = (APP / "gateway" / "relay" / "forward.py").read_text(encoding="utf-8")
    assert "auto_decompress=False" in forward
    for path in sorted(APP.rglob("*.py")):
        relative = path.relative_to(APP).as_posix()
        if relative == "core/http_client.py":
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            # raw chunks, never decoded, under the callers' own caps (EARLY_LIMIT, ERROR_BODY_LIMIT)
            raw_relay = relative in ("gateway/relay/forward.py", "gateway/relay/upstream.py") and any(
                read in line for read in ("response.content.iter_any()", "response.content.readany()"))
            if _UNCAPPED.search(line) and "answer.iter_bytes()" not in line and not raw_relay:
                offenders.append(f"{relative}:{number}: {line.strip()}")
            if re.search(r"\burllib\.request\b|\burlopen\(", line):
                offenders.append(f"{relative}:{number}: {line.strip()}")
    assert offenders == []
