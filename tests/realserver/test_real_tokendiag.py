"""Token-level diagnosis against a real llama-server: its prediction equals what the server reuses.

Real Claude Code 2.1.332 requests (``tests/fixtures/claude-code-2.1.332``) are replayed one after the
other to a one-slot server without a host-RAM cache; the cached tokens the server reports for the second
request of each pair must equal ``shared_tokens`` (within one token: a fully cached prompt still
evaluates its last token).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from kvswitch.cli import main
from kvswitch.verify.diagnose import diagnose_requests, load_request
from kvswitch.verify.tokendiag import ServerRenderer, diagnose_tokens
from support.llama import RunningServer

pytestmark = pytest.mark.real_server

CAPTURES = Path(__file__).resolve().parents[1] / "fixtures" / "claude-code-2.1.332"
PAIRS = [("default_1", "default_3"), ("0_1", "0_3"), ("0_3", "0_1"), ("default_3", "0_3")]


def _capture(name: str) -> dict[str, Any]:
    return load_request(CAPTURES / f"request_attribution_{name}.json")


def _cached_after(server: RunningServer, first: dict[str, Any], second: dict[str, Any]) -> int:
    """Send ``first`` then ``second`` to the server; the cached tokens it reports for ``second``."""
    usage: dict[str, Any] = {}
    for body in (first, second):
        request = {**body, "max_tokens": 1, "stream": False}
        answer = httpx.post(f"{server.url}/v1/messages", json=request, timeout=120)
        answer.raise_for_status()
        usage = answer.json()["usage"]
    return int(usage["cache_read_input_tokens"])


@pytest.mark.parametrize(("a", "b"), PAIRS)
def test_shared_tokens_equal_what_the_server_reuses(
    single_slot_server: RunningServer, a: str, b: str
) -> None:
    body_a, body_b = _capture(a), _capture(b)
    diagnosis = diagnose_tokens(ServerRenderer(single_slot_server.url, timeout=120), body_a, body_b)
    assert diagnosis.checked, "the rendering must match the server's own token count"
    cached = _cached_after(single_slot_server, body_a, body_b)
    assert abs(diagnosis.shared_tokens - cached) <= 1, (diagnosis.shared_tokens, cached)


def test_billing_header_named_at_its_token(single_slot_server: RunningServer) -> None:
    diagnosis = diagnose_tokens(
        ServerRenderer(single_slot_server.url, timeout=120), _capture("default_1"), _capture("default_3")
    )
    assert diagnosis.part == "system[0]"
    assert diagnosis.cause == "billing_header"
    assert diagnosis.fix_env == {"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"}
    assert diagnosis.shared_tokens < 100 < diagnosis.tokens_b


def test_user_message_before_environment_named(single_slot_server: RunningServer) -> None:
    diagnosis = diagnose_tokens(
        ServerRenderer(single_slot_server.url, timeout=120), _capture("0_1"), _capture("0_3")
    )
    assert diagnosis.part is not None
    assert diagnosis.part.startswith("messages[0].content")
    assert diagnosis.cause == "user_before_system"
    assert 0.3 < diagnosis.shared_tokens / diagnosis.tokens_b < 0.6


def test_content_as_string_renders_the_same_and_claims_no_cause(single_slot_server: RunningServer) -> None:
    """A message whose content list becomes the equivalent string: the JSON differs, the tokens don't."""
    a = _capture("0_1")
    b = copy.deepcopy(a)
    last = b["messages"][-1]
    last["content"] = "".join(block["text"] for block in last["content"] if block.get("type") == "text")
    assert not diagnose_requests(a, b).identical
    diagnosis = diagnose_tokens(ServerRenderer(single_slot_server.url, timeout=120), a, b)
    assert diagnosis.identical
    assert diagnosis.cause is None
    assert diagnosis.cause_text is None
    assert diagnosis.shared_tokens == diagnosis.tokens_a == diagnosis.tokens_b


def test_added_content_block_is_not_called_whitespace(single_slot_server: RunningServer) -> None:
    a = _capture("0_1")
    b = copy.deepcopy(a)
    b["messages"][0]["content"].insert(1, {"type": "text", "text": "Also: keep answers short."})
    diagnosis = diagnose_tokens(ServerRenderer(single_slot_server.url, timeout=120), a, b)
    assert not diagnosis.reusable
    assert diagnosis.cause != "whitespace"
    assert diagnosis.part is not None
    assert diagnosis.part.startswith("messages[0]")
    assert "Also: keep" in diagnosis.snippet_b


def test_cli_json_counts_tokens(
    single_slot_server: RunningServer, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = CAPTURES / "request_attribution_0_1.json", CAPTURES / "request_attribution_0_3.json"
    assert main(["diagnose", str(a), str(b), "--server", single_slot_server.url, "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["units"] == "tokens"
    assert data["shared_tokens"] > 0
    assert data["tokens_b"] > data["shared_tokens"]
    assert data["cause"] == "user_before_system"


def test_recorder_says_what_the_server_can_reuse_in_its_tokens(
    single_slot_server: RunningServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """``kvswitch record`` in front of a server that renders: each request against the one before, in
    the server's own tokens, and that number is what the server then reports as cached."""
    import re
    import threading

    from support.net import free_port

    port = free_port()
    result: list[int] = []
    argv = [
        "record",
        "--listen",
        f"127.0.0.1:{port}",
        "--upstream",
        single_slot_server.url,
        "--max-requests",
        "3",  # the health probe below is the first
    ]
    thread = threading.Thread(target=lambda: result.append(main(argv)))
    thread.start()
    url = f"http://127.0.0.1:{port}"
    for _ in range(100):
        try:
            httpx.get(f"{url}/health", timeout=1)
            break
        except httpx.HTTPError:
            threading.Event().wait(0.1)
    for name in ("0_1", "0_3"):
        body = {**_capture(name), "max_tokens": 1, "stream": False}
        httpx.post(f"{url}/v1/messages", json=body, timeout=120).raise_for_status()
    thread.join(timeout=180)
    assert result == [0]
    out = capsys.readouterr().out
    said = re.search(r"#(\d+) vs #\d+ in the server's tokens: (\d+) of (\d+) reusable", out)
    assert said is not None, out
    cached = re.search(rf"#{said.group(1)} POST /v1/messages .*cached (\d+) of", out)
    assert cached is not None, out
    assert abs(int(said.group(2)) - int(cached.group(1))) <= 1
