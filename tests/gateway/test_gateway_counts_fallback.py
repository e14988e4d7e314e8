"""An answer that carries no prompt counts still gets the server's own numbers and a verdict (issue 25),
with a real ``kvswitch gateway run`` in front of a real llama-server b11434.

b11434 sends a streamed Messages answer's ``message_start`` (the event with the prompt's counts) with
the first token's chunk, and holds that chunk back when the token is an incomplete UTF-8 sequence. The
tiny model's byte tokens make that happen on demand: a logit bias on byte 0xE4 (a lead byte of a
three-byte sequence) makes every answer start with one. The numbers the rows must carry are read by the
test itself from the server's ``/metrics``, around each request, one request at a time.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from kvswitch.cli import main
from kvswitch.core.gateway_config import ensure_token, usage_db
from kvswitch.core.paths import AppPaths
from kvswitch.gateway.truth.counts_fallback import FILLED_NOTE
from kvswitch.usage.queries import query
from kvswitch.usage.schema import UsageRow
from support.gateway import gateway_process
from support.llama import RunningServer, llama_server
from support.net import free_port

pytestmark = [pytest.mark.real_server, pytest.mark.timeout(300)]

#: token 228 is byte 0xE4 in the tiny model (its first 256 tokens are the bytes, in order)
LEAD_BYTE_BIAS = ("-l", "228+100")
_METRIC = re.compile(r"^llamacpp:(prompt_tokens_total|prompt_tokens_cached_total) (\S+)$", re.M)
SYSTEM = "You are a careful assistant who answers briefly. " * 60


def _counters(server: RunningServer) -> tuple[int, int]:
    found = dict(_METRIC.findall(httpx.get(f"{server.url}/metrics", timeout=10).text))
    return int(float(found["prompt_tokens_total"])), int(float(found["prompt_tokens_cached_total"]))


def _body(*turns: str) -> dict[str, object]:
    messages = [{"role": "user" if i % 2 == 0 else "assistant", "content": text}
                for i, text in enumerate(turns)]
    return {"model": "tiny", "max_tokens": 6, "stream": True, "system": SYSTEM, "messages": messages}


def _ask(port: int, token: str, body: dict[str, object], session: str) -> bytes:
    headers = {"x-api-key": token, "anthropic-version": "2023-06-01", "x-claude-code-session-id": session,
               "user-agent": "claude-cli/2.1.332 (external, sdk-cli)"}
    with httpx.stream("POST", f"http://127.0.0.1:{port}/claude/v1/messages", json=body, headers=headers,
                      timeout=120) as answer:
        assert answer.status_code == 200
        return answer.read()


def _rows(paths: AppPaths, count: int) -> list[UsageRow]:
    """The gateway's rows once there are ``count``: a row waiting for the server's counters is stored
    when they are read, a moment after its answer ended."""
    deadline = time.monotonic() + 15
    while True:
        rows = [r for r in query(usage_db(paths)) if r.upstream and r.upstream.endswith("/v1/messages")]
        if len(rows) >= count or time.monotonic() > deadline:
            return rows
        time.sleep(0.1)  # the gateway is another process


@pytest.fixture
def gateway(fake_home: Path, tmp_path: Path) -> Iterator[int]:
    port = free_port()
    with gateway_process(fake_home, port, tmp_path / "gateway.log"):
        yield port


def _profile(server: RunningServer) -> str:
    assert main(["profile", "add", "local", "--kind", "llama.cpp", "--base-url", server.url, "--model",
                 "tiny", "--target", "claude", "--via-gateway"]) == 0
    assert main(["use", "local"]) == 0
    return ensure_token(AppPaths.default())


def test_an_answer_without_counts_gets_the_servers_numbers_and_a_verdict(gateway: int,
                                                                         tmp_path: Path) -> None:
    paths = AppPaths.default()
    with llama_server(tmp_path / "server", *LEAD_BYTE_BIAS, "--cache-ram", "0") as server:
        token = _profile(server)
        expected = []
        turns = [("say hi",), ("say hi", "hi", "say more")]
        for count, turn in enumerate(turns, start=1):
            before = _counters(server)
            sent = _ask(gateway, token, _body(*turn), "session-one")
            # the server's own behaviour this test is about: an answer with no message_start, no counts
            assert b"message_start" not in sent, sent[:400]
            assert b"input_tokens" not in sent
            rows = _rows(paths, count)
            after = _counters(server)
            processed, cached = after[0] - before[0], after[1] - before[1]
            expected.append((processed + cached, cached))
        assert [(r.input_tokens, r.cached_tokens) for r in rows] == expected, [r.notes for r in rows]
        assert all(FILLED_NOTE in (r.notes or "") for r in rows)
        first, second = rows
        assert (first.verdict, first.reason) == ("COLD", "cold")
        # the continued turn extends the first one whole: the server reused its prompt
        assert expected[1][1] > 0.9 * expected[0][0], expected
        assert second.verdict == "HIT", (second.verdict, second.reason, second.reason_detail)
        assert second.session == "session-one"
        assert second.reusable_tokens


def test_back_to_back_requests_each_get_their_own_numbers(gateway: int, tmp_path: Path) -> None:
    """The next request leaves the moment an answer ends (as Claude Code sends its next one): its own
    before reading is the previous one's after reading, and each row still carries its own numbers."""
    paths = AppPaths.default()
    with llama_server(tmp_path / "server", *LEAD_BYTE_BIAS, "--cache-ram", "0") as server:
        token = _profile(server)
        before = _counters(server)
        for n in range(4):
            _ask(gateway, token, _body(f"say hi {n}"), f"s{n}")
        rows = _rows(paths, 4)
        after = _counters(server)
        assert all(FILLED_NOTE in (r.notes or "") for r in rows), [r.notes for r in rows]
        # the four rows add up to the server's own count over the four requests, each a new prompt
        assert sum(r.input_tokens or 0 for r in rows) == (after[0] - before[0]) + (after[1] - before[1])
        assert sum(r.cached_tokens or 0 for r in rows) == after[1] - before[1]
        assert all((r.input_tokens or 0) > 2000 for r in rows)


def test_requests_side_by_side_keep_no_numbers_and_say_why(gateway: int, tmp_path: Path) -> None:
    paths = AppPaths.default()
    with llama_server(tmp_path / "server", *LEAD_BYTE_BIAS, parallel=2) as server:
        token = _profile(server)

        async def both() -> None:
            await asyncio.gather(*(asyncio.to_thread(_ask, gateway, token, _body(f"say hi {n}"), f"s{n}")
                                   for n in (1, 2)))

        asyncio.run(both())
        rows = _rows(paths, 2)
        assert len(rows) == 2
        for row in rows:
            # a difference of the counters over two requests is neither one's: none is made up
            assert (row.input_tokens, row.cached_tokens, row.verdict) == (None, None, None)
            assert "prompt counts not known: another request ran on the server at the same time" in (
                row.notes or ""), row.notes


def test_a_server_without_metrics_is_named_in_the_row(gateway: int, tmp_path: Path) -> None:
    paths = AppPaths.default()
    with llama_server(tmp_path / "server", *LEAD_BYTE_BIAS, metrics=False) as server:
        token = _profile(server)
        for count in (1, 2):  # the second request does not ask the page again, and says why too
            _ask(gateway, token, _body("say hi"), "s")
            rows = _rows(paths, count)
        assert [r.input_tokens for r in rows] == [None, None]
        for row in rows:
            assert f"prompt counts not known: {server.url}/metrics did not answer (HTTP 501" in (
                row.notes or ""), row.notes
