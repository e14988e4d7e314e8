"""Inline system messages as user messages (``inline_system_as_user``) on real Claude Code 2.1.332
sessions: which messages change, that nothing moves, and that turn N's rewritten bytes still start
turn N+1's."""

from __future__ import annotations

import copy

import pytest

from bridges.sessions import claude_turns, first_difference
from kvswitch.core.models import MESSAGES_PROTOCOL, Profile
from kvswitch.gateway.bridges import dump_body
from kvswitch.gateway.bridges.inline_system import CLOSE, OPEN, applies, as_user, remedies


def test_the_environment_block_becomes_a_user_message_in_its_place() -> None:
    body = claude_turns("continue")[1]
    before = copy.deepcopy(body)
    out = as_user(body)
    assert [m["role"] for m in body["messages"]] == ["user", "system", "assistant", "user"]
    assert [m["role"] for m in out["messages"]] == ["user", "user", "assistant", "user"]
    text = out["messages"][1]["content"]
    assert text.startswith(OPEN)
    assert text.endswith(CLOSE)
    assert text[len(OPEN):-len(CLOSE)] == body["messages"][1]["content"]
    # every other message, and everything outside ``messages``, is the client's own
    assert [m for i, m in enumerate(out["messages"]) if i != 1] == [
        m for i, m in enumerate(body["messages"]) if i != 1]
    assert {k: v for k, v in out.items() if k != "messages"} == {
        k: v for k, v in body.items() if k != "messages"}
    assert body == before  # the client's body is not changed in place


def test_a_list_content_keeps_its_blocks_and_wraps_only_the_text() -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA=="}}
    body = {"messages": [{"role": "user", "content": "hi"},
                         {"role": "system", "content": [{"type": "text", "text": "a", "cache_control": {
                             "type": "ephemeral"}}, image]}]}
    out = as_user(body)["messages"][1]
    assert out["role"] == "user"
    assert out["content"] == [{"type": "text", "text": OPEN + "a" + CLOSE,
                               "cache_control": {"type": "ephemeral"}}, image]


def test_a_body_without_inline_system_messages_is_returned_as_it_is() -> None:
    for body in ({"messages": [{"role": "user", "content": "hi"}], "system": "top"},
                 {"messages": "not a list"}, {}):
        assert as_user(body) is body


@pytest.mark.parametrize("session", ["continue", "tool"])
def test_each_rewritten_turn_starts_the_next_one(session: str) -> None:
    """The same inline message becomes the same bytes on every turn, so a continued conversation still
    extends its own prompt: turn N's messages, rewritten, are the start of turn N+1's."""
    turns = [as_user(body) for body in claude_turns(session)]
    assert len(turns) >= 2
    for earlier, later in zip(turns, turns[1:], strict=False):
        kept = len(earlier["messages"]) - 1  # Claude Code appends to the last user message
        head = dump_body(earlier["messages"][:kept])[:-1]
        assert dump_body(later["messages"]).startswith(head), first_difference(
            dump_body(earlier["messages"]), dump_body(later["messages"]))


def test_it_applies_only_when_asked_to_a_local_backend_for_claude_code() -> None:
    assert applies(inline_system_as_user=True, local_backend=True, client=MESSAGES_PROTOCOL)
    assert not applies(inline_system_as_user=False, local_backend=True, client=MESSAGES_PROTOCOL)
    assert not applies(inline_system_as_user=True, local_backend=False, client=MESSAGES_PROTOCOL)
    assert not applies(inline_system_as_user=True, local_backend=True, client="openai_responses")


def test_only_a_local_profile_without_the_option_is_told_about_it() -> None:
    refusal = "Error: Jinja Exception: System message must be at the beginning. | ------------"
    local = Profile(name="l", kind="llama.cpp", base_url="http://127.0.0.1:8080")
    assert remedies(local, refusal)
    assert not remedies(local, "Error: Jinja Exception: Conversation roles must alternate")
    assert not remedies(local.model_copy(update={"inline_system_as_user": True}), refusal)
    assert not remedies(Profile(name="c", kind="anthropic", base_url="https://api.anthropic.com"), refusal)
