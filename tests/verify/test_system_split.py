"""The split-system-prompt trap, read from the request body: the real OpenCode 1.18.33 requests
(captured by the recorder, see tests/fixtures/README.md) carry one system message and get no note; a
body with its system prompt in two messages, as an open OpenCode change sends it (no released client
here does), is named, and the note reaches the client report."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from kvswitch.core.models import Profile, ProfileKind
from kvswitch.verify.client_report import build_report
from kvswitch.verify.client_run import ClientRequest, ClientSession
from kvswitch.verify.system_split import split_system_note, system_messages

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "opencode-1.18.33"


def _body(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text())


def test_real_opencode_requests_have_one_system_message() -> None:
    for name in ("chat_request.json", "title_request.json"):
        body = _body(name)
        assert system_messages(body) == 1
        assert split_system_note(body) is None


def test_a_split_system_prompt_is_named_in_the_report() -> None:
    split = copy.deepcopy(_body("chat_request.json"))
    system = split["messages"][0]["content"]
    half = len(system) // 2
    split["messages"][:1] = [{"role": "system", "content": system[:half]},
                             {"role": "system", "content": system[half:]}]
    assert system_messages(split) == 2
    assert "2 system messages" in (split_system_note(split) or "")
    requests = [ClientRequest(1, 1, 1, 7766, 0, 900.0, 200, split),
                ClientRequest(1, 2, 2, 7796, 0, 950.0, 200, split)]
    profile = Profile(name="local", kind=ProfileKind.LLAMA_CPP, base_url="http://127.0.0.1:8080")
    report = build_report(profile, ClientSession("opencode", "1.18.33", requests, []), None)
    assert len(report.notes) == 2
    assert report.to_json()["notes"][0].startswith("conversation 1 turn 1: the request carries")
    assert "Note: conversation 1 turn 2" in report.describe()
