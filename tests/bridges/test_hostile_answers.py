"""Issue 28, item 6: what a hostile or sloppy chat upstream (or client) does to the bridges. A lone UTF-16
surrogate (valid JSON: ``"\\ud800"``) in an answer, an error body or a request; ``previous_response_id``
against an upstream that sends no id or the same one twice, or whose entry is evicted while the answer
streams; tool-call pieces of two calls interleaved; tool arguments that are not JSON."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bridges.chat_streams import chunk, events, sse
from kvswitch.gateway.bridges import ResponseStore, dump_body
from kvswitch.gateway.bridges.messages_chat import MessagesToChat
from kvswitch.gateway.bridges.responses_chat import ResponsesToChat

#: the key a ``tool_use`` input keeps unparsed arguments under (``messages_answer.UNPARSED_ARGUMENTS``)
UNPARSED_ARGUMENTS = "_unparsed_arguments"
LONE = b'"a\\ud800b"'  # as an upstream or a client writes it: six ASCII bytes of escape


def _messages(raw: bytes, streaming: bool) -> bytes:
    converter = MessagesToChat().response_converter({"model": "m", "stream": streaming}, streaming=streaming)
    return converter.feed(raw) + converter.close()


def _responses(raw: bytes, streaming: bool, bridge: ResponsesToChat | None = None,
               request: dict[str, Any] | None = None) -> bytes:
    bridge = bridge or ResponsesToChat(ResponseStore())
    converter = bridge.response_converter(request or {"model": "m", "store": False}, streaming=streaming)
    return converter.feed(raw) + converter.close()


# -- lone surrogates --------------------------------------------------------------------------------
def _chat_json(text: bytes) -> bytes:
    return b'{"id":"c","choices":[{"message":{"content":' + text + b'},"finish_reason":"stop"}]}'


def _chat_sse(text: bytes) -> bytes:
    return (b'data: {"id":"c","choices":[{"index":0,"delta":{"content":' + text + b'}}]}\n\n'
            b'data: {"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n')


@pytest.mark.parametrize("convert", [_messages, _responses])
def test_a_lone_surrogate_in_an_answer_keeps_the_answer(convert: Any) -> None:
    whole = json.loads(convert(_chat_json(LONE), False).decode("utf-8"))
    assert "a\ufffdb" in json.dumps(whole, ensure_ascii=False)
    streamed = convert(_chat_sse(LONE), True).decode("utf-8")  # valid UTF-8, not an empty answer
    deltas = [d for _, d in events(streamed.encode())]
    assert "a\ufffdb" in json.dumps(deltas, ensure_ascii=False)
    assert deltas[-1]["type"] in ("message_stop", "response.completed")


def test_a_lone_surrogate_in_an_error_body_is_an_error_answer_not_a_500() -> None:
    error = b'{"error":{"message":' + LONE + b'}}'
    for bridge in (MessagesToChat(), ResponsesToChat(ResponseStore())):
        shown = json.loads(bridge.convert_error(400, error).decode("utf-8"))
        assert "a\ufffdb" in json.dumps(shown, ensure_ascii=False)
    converter = MessagesToChat().response_converter({"model": "m"}, streaming=False)
    converter.feed(error)
    assert "a\ufffdb" in converter.close().decode("utf-8")
    assert converter.failure == "a\ud800b"


def test_a_lone_surrogate_in_a_request_converts_the_same_every_time() -> None:
    body = json.loads(b'{"model":"m","messages":[{"role":"user","content":' + LONE + b'}]}')
    first = dump_body(MessagesToChat().convert_request(body))
    assert first == dump_body(MessagesToChat().convert_request(body))
    assert json.loads(first)["messages"][0]["content"] == "a\ufffdb"
    codex = json.loads(b'{"model":"m","input":' + LONE + b'}')
    assert json.loads(dump_body(ResponsesToChat(ResponseStore()).convert_request(codex)))["messages"][0][
        "content"] == "a\ufffdb"


# -- previous_response_id -----------------------------------------------------------------------------
def _answer_text(text: str, chat_id: str | None) -> bytes:
    head = {"id": chat_id} if chat_id is not None else {}
    return json.dumps({**head, "choices": [{"message": {"content": text}, "finish_reason": "stop"}]}).encode()


@pytest.mark.parametrize("chat_id", [None, "chatcmpl-1"])
def test_two_conversations_never_share_a_response_id(chat_id: str | None) -> None:
    store = ResponseStore()
    ids = []
    for words in ("alice's secret", "bob's question"):
        request = {"model": "m", "input": words}
        bridge = ResponsesToChat(store)
        bridge.convert_request(request)
        answer = _responses(_answer_text(f"re: {words}", chat_id), False, bridge, request)
        ids.append(json.loads(answer)["id"])
    assert ids[0] != ids[1]
    follow = ResponsesToChat(store).convert_request({"model": "m", "previous_response_id": ids[1],
                                                     "input": "more"})
    contents = [m["content"] for m in follow["messages"]]
    assert contents == ["bob's question", "re: bob's question", "more"]  # bob's, never alice's


def test_an_entry_evicted_while_the_answer_streams_still_answers() -> None:
    store = ResponseStore(max_entries=1)
    first = {"model": "m", "input": "hi"}
    bridge = ResponsesToChat(store)
    bridge.convert_request(first)
    previous = json.loads(_responses(_answer_text("hello", None), False, bridge, first))["id"]
    follow = {"model": "m", "previous_response_id": previous, "input": "more", "stream": True}
    bridge = ResponsesToChat(store)
    sent = bridge.convert_request(follow)  # the gateway converts, then waits for the upstream
    store.put("someone-else", [{"role": "user", "content": "x"}])  # ... while others fill the store
    assert store.get(previous) is None
    out = _responses(_chat_sse(b'"sure"'), True, bridge, follow)  # was UnknownPreviousResponse: a 500
    done = events(out)[-1][1]
    assert done["type"] == "response.completed"
    kept = store.get(done["response"]["id"])
    assert kept is not None
    assert kept[:-1] == sent["messages"]


# -- tool calls ---------------------------------------------------------------------------------------
def _call(index: int, **fields: Any) -> dict[str, Any]:
    return chunk({"tool_calls": [{"index": index, **fields}]})


INTERLEAVED = [
    chunk({"role": "assistant", "content": "Two tools."}),
    _call(0, id="call_a", type="function", function={"name": "Read", "arguments": ""}),
    _call(1, id="call_b", type="function", function={"name": "Bash", "arguments": '{"comm'}),
    _call(0, function={"arguments": '{"file_path":'}),
    _call(1, function={"arguments": 'and":"ls"}'}),
    _call(0, function={"arguments": '"/x"}'}),
    chunk({}, "tool_calls"),
]


def test_interleaved_tool_calls_become_two_whole_tool_blocks() -> None:
    evs = events(_messages(sse(INTERLEAVED), True))
    starts = [d["content_block"] for n, d in evs if n == "content_block_start"]
    assert [s["type"] for s in starts] == ["text", "tool_use", "tool_use"]  # no nameless extra blocks
    assert [(s["id"], s["name"]) for s in starts[1:]] == [("call_a", "Read"), ("call_b", "Bash")]
    arguments: dict[int, str] = {}
    for name, data in evs:
        if name == "content_block_delta" and data["delta"]["type"] == "input_json_delta":
            arguments[data["index"]] = arguments.get(data["index"], "") + data["delta"]["partial_json"]
    assert [json.loads(arguments[i]) for i in (1, 2)] == [{"file_path": "/x"}, {"command": "ls"}]
    order = [(n, d.get("index")) for n, d in evs if n and n.startswith("content_block")]
    for index in range(3):  # each block opens, takes its deltas and closes before the next opens
        own = [position for position, (_, i) in enumerate(order) if i == index]
        assert own == list(range(own[0], own[-1] + 1))


def test_interleaved_tool_calls_become_two_function_call_items() -> None:
    evs = events(_responses(sse(INTERLEAVED), True))
    done = [d["item"] for n, d in evs if n == "response.output_item.done"]
    assert [item["type"] for item in done] == ["message", "function_call", "function_call"]
    assert [(i["call_id"], i["name"], json.loads(i["arguments"])) for i in done[1:]] == [
        ("call_a", "Read", {"file_path": "/x"}), ("call_b", "Bash", {"command": "ls"})]
    assert [d["output_index"] for n, d in evs if n == "response.output_item.added"] == [0, 1, 2]


BROKEN = '{"file_path": "/x"'  # the model stopped mid-object


def test_broken_tool_arguments_are_kept_not_a_silent_empty_input() -> None:
    whole = {"id": "c", "choices": [{"finish_reason": "tool_calls", "message": {"tool_calls": [
        {"id": "call_a", "type": "function", "function": {"name": "Read", "arguments": BROKEN}}]}}]}
    answer = json.loads(_messages(json.dumps(whole).encode(), False))
    (block,) = answer["content"]
    assert block["input"] == {UNPARSED_ARGUMENTS: BROKEN}
    streamed = events(_messages(sse([_call(0, id="call_a", function={"name": "Read", "arguments": BROKEN}),
                                     chunk({}, "tool_calls")]), True))
    partial = "".join(d["delta"]["partial_json"] for n, d in streamed
                      if n == "content_block_delta" and d["delta"]["type"] == "input_json_delta")
    assert json.loads(partial) == block["input"]  # streaming and not say the same
    # the Responses protocol carries arguments as text: the model's own text reaches Codex
    codex = json.loads(_responses(json.dumps(whole).encode(), False))
    assert codex["output"][0]["arguments"] == BROKEN
