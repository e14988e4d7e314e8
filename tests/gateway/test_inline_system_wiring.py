"""The profile option ``inline_system_as_user`` through a running gateway: what reaches the upstream,
for which profiles, and what ``profile add``/``show``/``edit`` say of it. The real server's side (a
chat template that refuses the messages, the real Claude Code) is ``tests/e2e/test_e2e_inline_system.py``."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx
import pytest
from gateway_support import Responder, ScriptedUpstream, add_profiles, json_answer, stored_rows

from kvswitch.cli import main
from kvswitch.core.models import Profile
from kvswitch.core.paths import AppPaths
from kvswitch.gateway.bridges.inline_system import CLOSE, OPEN
from kvswitch.gateway.relay.server import GatewayServer

Make = Callable[[Responder], ScriptedUpstream]
ANSWER = json.dumps({"type": "message", "role": "assistant", "content": [],
                     "usage": {"input_tokens": 5, "output_tokens": 1}}).encode()
BODY = {"model": "m", "max_tokens": 4, "messages": [
    {"role": "user", "content": "hi"}, {"role": "system", "content": "env: linux"}]}


def _send(gateway: GatewayServer, token: str) -> None:
    answer = httpx.post(gateway.url + "/claude/v1/messages", json=BODY, timeout=30,
                        headers={"x-api-key": token, "anthropic-version": "2023-06-01"})
    assert answer.status_code == 200, answer.text


@pytest.mark.parametrize(("kind", "option", "rewritten"), [
    ("llama.cpp", True, True), ("llama.cpp", False, False), ("anthropic", True, False)])
def test_what_the_upstream_receives(paths: AppPaths, gateway: GatewayServer, token: str, upstreams: Make,
                                    kind: str, option: bool, rewritten: bool) -> None:
    upstream = upstreams(json_answer(ANSWER))
    add_profiles(paths, Profile(name="p", kind=kind, base_url=upstream.url, model="m",
                                inline_system_as_user=option), route="p")
    _send(gateway, token)
    received = json.loads(upstream.seen[-1].body)
    if rewritten:
        assert received["messages"] == [{"role": "user", "content": "hi"},
                                        {"role": "user", "content": OPEN + "env: linux" + CLOSE}]
    else:
        assert received["messages"] == BODY["messages"]
    assert received["model"] == "m"


def test_cli_inline_system_as_user(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["profile", "add", "loc", "--kind", "llama.cpp", "--inline-system-as-user"]) == 0
    capsys.readouterr()
    assert main(["profile", "show", "loc"]) == 0
    assert "inline system messages as user: on" in capsys.readouterr().out
    assert main(["profile", "edit", "loc", "--no-inline-system-as-user"]) == 0
    capsys.readouterr()
    assert main(["profile", "show", "loc"]) == 0
    assert "inline system messages" not in capsys.readouterr().out
    assert main(["profile", "add", "cloud", "--kind", "anthropic", "--inline-system-as-user"]) == 0
    capsys.readouterr()
    assert main(["profile", "show", "cloud"]) == 0
    assert "inline system messages as user: set, but off: only for local backends" in capsys.readouterr().out


def test_a_refused_request_keeps_the_servers_words_cause_first_and_masked(
        paths: AppPaths, gateway: GatewayServer, token: str, upstreams: Make) -> None:
    """A template's trace ends with its cause; the row leads with it, and a key in it is masked."""
    trace = ("Jinja error in source:\n  {%- if message.role == 'system' %}\n"
             "key sk-ant-api03-SECRETSECRETSECRETSECRET\nError: System message must be at the beginning.")
    refusal = json.dumps({"error": {"code": 500, "message": trace, "type": "server_error"}}).encode()
    upstream = upstreams(json_answer(refusal, status=500))
    add_profiles(paths, Profile(name="p", kind="llama.cpp", base_url=upstream.url, model="m"), route="p")
    answer = httpx.post(gateway.url + "/claude/v1/messages", json=BODY, timeout=30,
                        headers={"x-api-key": token, "anthropic-version": "2023-06-01"})
    assert answer.status_code == 500
    row = stored_rows(paths)[0]
    assert row.status == 500
    assert (row.error or "").startswith("Error: System message must be at the beginning. | Jinja error")
    assert "SECRETSECRET" not in (row.error or "")
    # and it names the option that avoids it
    assert "`kvswitch profile edit p --inline-system-as-user`" in (row.notes or ""), row.notes
