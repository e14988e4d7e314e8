"""The prefix stabiliser on real Claude Code 2.1.332 sessions."""

from __future__ import annotations

import copy
import json

from bridges.sessions import claude_turns, first_difference, prefix_through_last_message
from kvswitch.gateway.bridges import dump_body
from kvswitch.gateway.bridges.messages_chat import convert_request
from kvswitch.gateway.bridges.stabilise import applies, stabilise


def _common_prefix(a: bytes, b: bytes) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))


def test_the_environment_block_moves_before_the_first_user_message() -> None:
    body = claude_turns("continue")[0]
    before = copy.deepcopy(body)
    out = stabilise(body)
    assert [m["role"] for m in out["messages"]] == ["system", "user"]
    assert "Primary working directory" in json.dumps(out["messages"][0])
    assert out["messages"][1] == body["messages"][0]
    assert body == before  # the client's body is not changed in place


def _prompt(body: dict) -> bytes:
    """What the server renders into the prompt (the session id in ``metadata`` is not part of it)."""
    return dump_body({key: body[key] for key in ("system", "tools", "messages")})


def test_two_new_conversations_differ_only_at_the_users_words() -> None:
    a, b = claude_turns("continue")[0], claude_turns("other")[0]
    plain = _common_prefix(_prompt(a), _prompt(b))
    stable_a, stable_b = _prompt(stabilise(a)), _prompt(stabilise(b))
    shared = _common_prefix(stable_a, stable_b)
    assert shared > plain
    # after the shared part only the words and the end of the body differ
    assert stable_a[shared:].startswith(b"say hi")
    assert stable_b[shared:].startswith(b"what is in this folder")
    assert stable_a[shared + len(b"say hi") :] == stable_b[shared + len(b"what is in this folder") :]


def test_continued_turns_still_extend_their_prefix_when_stabilised() -> None:
    for session in ("continue", "tool"):
        turns = [convert_request(stabilise(b)) for b in claude_turns(session)]
        for before, after in zip(turns, turns[1:], strict=False):
            prefix, raw = prefix_through_last_message(before), dump_body(after)
            assert raw.startswith(prefix), first_difference(prefix, raw)


def test_reminders_go_before_the_words_and_other_shapes_are_left_alone() -> None:
    body = {
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "words"},
                    {"type": "text", "text": "<system-reminder>r</system-reminder>"},
                ],
            }
        ]
    }
    assert [b["text"] for b in stabilise(body)["messages"][0]["content"]] == [
        "<system-reminder>r</system-reminder>",
        "words",
    ]
    for same in ({"messages": []}, {"messages": [{"role": "assistant", "content": "x"}]}, {"model": "m"}):
        assert stabilise(same) is same
    plain = {"messages": [{"role": "user", "content": "hi"}]}
    assert stabilise(plain) is plain


def test_only_for_local_backends_claude_code_and_when_asked() -> None:
    assert applies(stable_prefix=True, local_backend=True, client="anthropic")
    assert not applies(stable_prefix=True, local_backend=False, client="anthropic")
    assert not applies(stable_prefix=False, local_backend=True, client="anthropic")
    assert not applies(stable_prefix=True, local_backend=True, client="openai_responses")


def test_mcp_tools_are_put_in_name_order_in_their_own_places() -> None:
    """A server listing its tools in another order on each start (issue 36): two starts' tool lists
    become the same; the client's own tools keep their places, and ``body`` is left as it was."""

    def tool(name: str) -> dict[str, object]:
        return {"name": name, "input_schema": {"type": "object"}}

    first = ["Bash", "mcp__s__delta", "mcp__s__alpha", "Read", "mcp__s__charlie"]
    second = ["Bash", "mcp__s__charlie", "mcp__s__delta", "Read", "mcp__s__alpha"]
    bodies = [{"tools": [tool(n) for n in names], "messages": [{"role": "user", "content": "hi"}]}
              for names in (first, second)]
    before = copy.deepcopy(bodies[0])
    done = [stabilise(body) for body in bodies]
    assert done[0]["tools"] == done[1]["tools"]
    assert [t["name"] for t in done[0]["tools"]] == ["Bash", "mcp__s__alpha", "mcp__s__charlie", "Read",
                                                     "mcp__s__delta"]
    assert bodies[0] == before
    ordered = {"tools": done[0]["tools"], "messages": [{"role": "user", "content": "hi"}]}
    assert stabilise(ordered) is ordered  # nothing to change: the same object
