"""Token diagnosis without a server able to render: a clear fallback to bytes, saying so."""

from __future__ import annotations

import http.server
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from kvswitch.cli import main
from kvswitch.servers.llama_cpp_messages import anthropic_to_chat, normalise_billing_header
from kvswitch.verify.tokendiag import locate_part
from support.net import free_port, serving

CAPTURES = Path(__file__).resolve().parents[1] / "fixtures" / "claude-code-2.1.332"


def test_conversion_matches_the_server_rules() -> None:
    body = {
        "system": [
            {"type": "text", "text": "x-anthropic-billing-header: cch=ab12c; v=1"},
            {"type": "text", "text": "S"},
        ],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "q"}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "hm"},
                    {"type": "tool_use", "id": "t1", "name": "Read", "input": {"b": 1, "a": "é"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "ok"}]}
                ],
            },
        ],
        "tools": [{"name": "Read", "description": "read", "input_schema": {"type": "object"}}],
        "tool_choice": {"type": "any"},
        "max_tokens": 5,
    }
    chat = anthropic_to_chat(body)
    assert chat["messages"][0] == {"role": "system", "content": "x-anthropic-billing-header: cch=fffff; v=1S"}
    assistant = chat["messages"][2]
    assert assistant["content"] == ""
    assert assistant["reasoning_content"] == "hm"
    assert assistant["tool_calls"][0]["function"]["arguments"] == '{"a":"é","b":1}'
    assert chat["messages"][3] == {"role": "tool", "tool_call_id": "t1", "content": "ok"}
    assert chat["tools"][0]["function"]["parameters"] == {"type": "object"}
    assert chat["tool_choice"] == "required"
    assert "max_tokens" not in chat


def test_billing_header_without_cch_is_left_alone() -> None:
    text = "x-anthropic-billing-header: cc_version=2.1.332.0b8; cc_entrypoint=sdk-cli;"
    assert normalise_billing_header(text) == text


def test_locate_part_names_the_part_or_the_template_between() -> None:
    body = {
        "messages": [{"role": "user", "content": "first question"}, {"role": "user", "content": "second one"}]
    }
    rendered = "<|im_start|>user\nfirst question<|im_end|>\n<|im_start|>user\nsecond one<|im_end|>\n"
    assert locate_part(body, rendered, rendered.index("question")) == "messages[0].content"
    assert locate_part(body, rendered, rendered.index("second") + 2) == "messages[1].content"
    assert locate_part(body, rendered, rendered.index("<|im_end|>")).startswith("template text between")


@pytest.fixture
def not_a_llama_server() -> Iterator[str]:
    """A real HTTP server that knows no render route (404 for everything), on loopback."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), http.server.SimpleHTTPRequestHandler)
    with serving(server) as url:
        yield url


def test_server_that_cannot_render_falls_back_to_bytes(
    not_a_llama_server: str, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = CAPTURES / "request_attribution_0_1.json", CAPTURES / "request_attribution_0_3.json"
    assert main(["diagnose", str(a), str(b), "--server", not_a_llama_server, "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["units"] == "bytes"
    assert "cannot render" in data["bytes_note"]
    assert "bytes, not tokens" in data["bytes_note"]


def test_closed_port_falls_back_within_the_deadline(capsys: pytest.CaptureFixture[str]) -> None:
    a = CAPTURES / "request_attribution_0_1.json"
    url = f"http://127.0.0.1:{free_port()}"
    assert main(["diagnose", str(a), str(a), "--server", url, "--server-timeout", "5"]) == 0
    out = capsys.readouterr().out
    assert "identical" in out
    assert "bytes, not tokens" in out


def test_without_server_the_json_says_bytes(capsys: pytest.CaptureFixture[str]) -> None:
    a = CAPTURES / "request_attribution_0_1.json"
    assert main(["diagnose", str(a), str(a), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["units"] == "bytes"
    assert "--server" in data["bytes_note"]
