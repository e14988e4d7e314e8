"""Prefix diagnosis on real Claude Code captures and on hand-made bodies for each named cause."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kvswitch.core.errors import UsageError
from kvswitch.verify.diagnose import diagnose_requests, load_request, serialise


def _capture(fixtures_dir: Path, name: str) -> dict:
    return load_request(fixtures_dir / "claude-code-2.1.332" / f"request_attribution_{name}.json")


def test_billing_header_is_named_with_its_fix(fixtures_dir: Path) -> None:
    a, b = _capture(fixtures_dir, "default_1"), _capture(fixtures_dir, "default_3")
    diag = diagnose_requests(a, b)
    assert diag.part == "system[0]"
    assert diag.cause == "billing_header"
    assert diag.fix_env == {"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"}
    assert diag.snippet_common.endswith("cc_version=2.1.332.")
    assert diag.snippet_a.startswith("0b8;")
    assert diag.snippet_b.startswith("6c6;")
    canon = serialise(b)
    assert canon[: diag.offset] == serialise(a)[: diag.offset]
    assert canon[diag.offset : diag.offset + 3] == b"6c6"
    assert diag.identical_share < 0.01
    assert "messages[0].content[1]" in diag.other_parts
    assert any("metadata" in note for note in diag.notes)


def test_without_header_the_user_message_before_the_environment_block_is_named(fixtures_dir: Path) -> None:
    diag = diagnose_requests(_capture(fixtures_dir, "0_1"), _capture(fixtures_dir, "0_3"))
    assert diag.part == "messages[0].content[1]"
    assert diag.cause == "user_before_system"
    assert "messages[1].content[0]" in (diag.cause_text or "")
    assert diag.fix_env is None
    assert diag.snippet_a.startswith('i"')
    assert diag.snippet_b.startswith("ello to the whole team")
    assert 0.5 < diag.identical_share < 0.95


def test_recorder_capture_and_bare_body_compare_equal(fixtures_dir: Path, tmp_path: Path) -> None:
    capture = json.loads((fixtures_dir / "claude-code-2.1.332" / "request_attribution_0_1.json").read_text())
    body_file = tmp_path / "body.json"
    body_file.write_text(json.dumps(capture["body"], indent=4))
    diag = diagnose_requests(capture, load_request(body_file))
    assert diag.identical
    assert diag.identical_share == 1.0


def _chat(system: str, user: str, tools: list | None = None, **extra: object) -> dict:
    body: dict = {
        "model": "m",
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
        **extra,
    }
    if tools is not None:
        body["tools"] = tools
    return body


def test_date_in_system_prompt() -> None:
    a = _chat("You are helpful. Today is 2026-11-29 10:01:02. Be brief.", "hi")
    b = _chat("You are helpful. Today is 2026-11-29 10:05:13. Be brief.", "hi")
    diag = diagnose_requests(a, b)
    assert diag.cause == "date_time"
    assert diag.part == "messages[0].content"
    assert diag.snippet_common.endswith("2026-11-29 10:0")


def test_whitespace_only() -> None:
    diag = diagnose_requests(_chat("Be brief.\n\nAnswer well.", "hi"), _chat("Be brief.\nAnswer well.", "hi"))
    assert diag.cause == "whitespace"


def test_tools_changed_names_the_tool() -> None:
    tool = {"type": "function", "function": {"name": "read", "parameters": {}}}
    other = {"type": "function", "function": {"name": "write", "parameters": {}}}
    diag = diagnose_requests(_chat("s", "u", [tool]), _chat("s", "u", [tool, other]))
    assert diag.part == "tools"
    assert diag.cause == "tools_changed"
    assert "added write" in (diag.cause_text or "")
    reordered = diagnose_requests(_chat("s", "u", [tool, other]), _chat("s", "u", [other, tool]))
    assert "different order" in (reordered.cause_text or "")


def test_new_turn_is_append_only() -> None:
    a = _chat("sys", "hi")
    b = {
        **a,
        "messages": [
            *a["messages"],
            {"role": "assistant", "content": "hello"},
            {"role": "user", "content": "more"},
        ],
    }
    diag = diagnose_requests(a, b)
    assert diag.extends
    assert not diag.identical
    assert diag.identical_bytes == len(serialise(a))


def test_completion_prompt_growing_is_append_only_and_model_change_is_noted() -> None:
    diag = diagnose_requests({"prompt": "abc", "model": "x"}, {"prompt": "abcdef", "model": "y"})
    assert diag.extends
    assert any("model differs" in n for n in diag.notes)


def test_cache_control_moves_are_ignored() -> None:
    a = {"system": [{"type": "text", "text": "S", "cache_control": {"type": "ephemeral"}}], "messages": []}
    b = {"system": [{"type": "text", "text": "S"}], "messages": []}
    assert diagnose_requests(a, b).identical


def test_bad_inputs_are_usage_errors(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    with pytest.raises(UsageError, match="no such file"):
        load_request(missing)
    html = tmp_path / "page.json"
    html.write_text("<html>")
    with pytest.raises(UsageError, match="not JSON"):
        load_request(html)
    arr = tmp_path / "arr.json"
    arr.write_text("[1, 2]")
    with pytest.raises(UsageError, match="JSON object"):
        load_request(arr)
    cap = tmp_path / "cap.json"
    cap.write_text(json.dumps({"method": "POST", "path": "/x", "headers": {}, "body": "not json"}))
    with pytest.raises(UsageError, match="not JSON"):
        load_request(cap)


_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40)


@given(
    system=st.lists(_text, min_size=1, max_size=4),
    user=_text,
    index=st.integers(min_value=0),
    replacement=_text,
)
@settings(max_examples=150, deadline=None)
def test_reported_offset_is_the_first_differing_byte(
    system: list[str], user: str, index: int, replacement: str
) -> None:
    a = {
        "system": [{"type": "text", "text": t} for t in system],
        "messages": [{"role": "user", "content": user}],
    }
    b = json.loads(json.dumps(a))
    block = b["system"][index % len(system)]
    block["text"] = block["text"] + replacement
    ser_a, ser_b = serialise(a), serialise(b)
    diag = diagnose_requests(a, b)
    assert ser_a[: diag.offset] == ser_b[: diag.offset]
    assert (
        diag.offset == len(ser_b)
        or ser_a[diag.offset : diag.offset + 1] != ser_b[diag.offset : diag.offset + 1]
    )
    assert 0.0 <= diag.identical_share <= 1.0
    assert diagnose_requests(b, b).identical
