"""The tokens before a request's first difference, counted by the real llama-server b11434 itself
(``gateway.truth.rendered_prefix``), against what the same server then reuses.

Two new conversations captured from the real Claude Code 2.1.332 in one project
(``tests/fixtures/claude-code-2.1.332/request_attribution_0_{1,3}.json``, the attribution header off):
they first differ at the user's own words, ``messages[0].content[1]``. The server renders the tools
nowhere and Claude Code's ``system`` message after those words, so far fewer tokens come before them
than the request's characters suggest. Sent one after the other to a one-slot server, the second reuses
what the measure says (the server's ``cache_read_input_tokens``), give or take the few tokens of the
words' own common start ("say h")."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest

from kvswitch import servers
from kvswitch.gateway.truth.digests import part_text
from kvswitch.gateway.truth.rendered_prefix import locate, tokens_before
from support.llama import llama_server

pytestmark = [pytest.mark.real_server]

PART = "messages[0].content[1]"


def _body(fixtures_dir: Path, name: str) -> dict[str, object]:
    captured = json.loads((fixtures_dir / "claude-code-2.1.332" / name).read_text(encoding="utf-8"))
    return captured["body"]  # type: ignore[no-any-return]


def _rendering():  # type: ignore[no-untyped-def]
    rendering = servers.get("llama.cpp").rendering
    assert rendering is not None
    return rendering


def test_the_server_reuses_what_it_renders_before_the_difference(fixtures_dir: Path, tmp_path: Path) -> None:
    first = _body(fixtures_dir, "request_attribution_0_1.json")
    second = _body(fixtures_dir, "request_attribution_0_3.json")
    words = part_text(second, PART)
    assert words == "say hello to the whole team"
    with llama_server(tmp_path, "--cache-ram", "0") as server:
        before = asyncio.run(tokens_before(server.url, _rendering(), second, words, 0))
        usage = [httpx.post(server.url + "/v1/messages", json={**body, "max_tokens": 1, "stream": False},
                            timeout=300).json()["usage"] for body in (first, second)]
    assert usage[0]["cache_read_input_tokens"] == 0
    reused, prompt = usage[1]["cache_read_input_tokens"], usage[1]["cache_read_input_tokens"] + usage[1][
        "input_tokens"]
    assert before is not None
    # the words' own common start ("say h") is all the server reuses past the measure
    assert before <= reused <= before + len("say h")
    # and far less than the characters before the part suggest (the estimate said almost all of it)
    assert before < prompt / 2


def test_a_server_that_cannot_render_leaves_the_estimate(fixtures_dir: Path) -> None:
    body = _body(fixtures_dir, "request_attribution_0_3.json")
    # nothing listens on port 9: the measure says nothing, and quickly
    measured = tokens_before("http://127.0.0.1:9", _rendering(), body, "say hello", 0, timeout=2)
    assert asyncio.run(measured) is None


def test_locate_finds_the_parts_last_rendering_and_refuses_short_texts() -> None:
    prompt = "system: quote 'say hello' here\nuser: say hello to the whole team\n"
    assert locate(prompt, "say hello to the whole team", 0) == prompt.index("say hello to")
    assert locate(prompt, "say hello to the whole team", 4) == prompt.index("say hello to") + 4
    assert locate(prompt, "hi", 0) is None  # too short to be found for sure
    assert locate(prompt, "not in the prompt at all", 0) is None
