"""Session-affine slots (``--session-slots``) with the real Claude Code 2.1.332 through ``kvswitch gateway
run`` to a real llama-server b11434 with two slots and no host-RAM prompt cache: a conversation's turn,
then another session's request (a real Claude Code 2.1.332 request of another conversation, from the
captured fixtures, with a session id of its own), then the conversation's next turn. The server's own
numbers (``/metrics`` around each request, by the independent recorder) say what the next turn reused:
with the option off the other session lands on the conversation's slot (the server picks the slot whose
prompt looks most like the request's: Claude Code's shared system prompt) and the next turn reuses only
the shared start; with it on each session has its slot and the next turn is a HIT."""

from __future__ import annotations

import contextlib
import json
import logging
import re
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from tests.e2e.test_e2e_live_cache import (
    MetricsRecorder,
    Served,
    _add,
    _check_against_recorder,
    _claude,
    _conversation_rows,
    _dump,
    _rows,
)

from kvswitch.cli import main
from kvswitch.core.gateway_config import ensure_token, usage_db
from kvswitch.core.paths import AppPaths
from kvswitch.usage.queries import query
from kvswitch.usage.schema import UsageRow
from support.claude import claude_binary
from support.gateway import gateway_process
from support.llama import REPO, RunningServer, llama_server
from support.net import free_port

pytestmark = [pytest.mark.real_server, pytest.mark.timeout(1500)]
log = logging.getLogger(__name__)

#: a real Claude Code 2.1.332 request of another conversation ("Complete a security review ...")
OTHER = REPO / "tests" / "fixtures" / "claude-code-2.1.332" / "request_attribution_0_1.json"
#: 32K tokens a slot (Claude Code truncates its own prompt below about 28K), no host-RAM prompt cache:
#: what a slot holds is all the server can reuse
TWO_SLOTS = ("-c", "65536", "--cache-ram", "0")
_RELEASE = re.compile(r"slot\s+release: id\s+(\d+)")


def _other_session(gateway: str, token: str) -> str:
    """One request of another Claude Code session through the gateway; its session id."""
    captured = json.loads(OTHER.read_text())
    session = str(uuid.uuid4())
    headers = {k: v for k, v in captured["headers"].items()
               if k.lower() not in ("host", "content-length", "authorization", "x-api-key",
                                    "x-claude-code-session-id", "accept-encoding")}
    headers |= {"x-api-key": token, "x-claude-code-session-id": session}
    body = {**captured["body"], "max_tokens": 16}
    answer = httpx.post(f"{gateway}/claude/v1/messages?beta=true", json=body, headers=headers, timeout=600)
    assert answer.status_code == 200, answer.text[:2000]
    return session


def _main_turns(rows: list[UsageRow], session: str) -> list[UsageRow]:
    return [r for r in rows if r.session == session and (r.input_tokens or 0) > 5000]


def _slots_sent(served: list[Served]) -> list[int | None]:
    return [json.loads(s.body).get("id_slot") if s.body.startswith(b"{") else None for s in served]


def _releases(server_log: Path, count: int) -> list[int]:
    """The slot of every request the server finished, in order (its ``slot release: id N`` lines), once
    the log holds ``count`` of them (it is written as the server goes)."""
    deadline = time.monotonic() + 20
    while True:
        found = [int(n) for n in _RELEASE.findall(server_log.read_text(errors="replace"))]
        if len(found) >= count or time.monotonic() > deadline:
            return found
        time.sleep(0.1)  # waiting for the server's log writer


@contextlib.contextmanager
def _off_and_on(home: Path, tmp_path: Path) -> Iterator[tuple[RunningServer, MetricsRecorder, int]]:
    """The real Claude Code, a ``kvswitch gateway run``, a two-slot llama-server without host-RAM cache
    and the independent recorder between them; profiles ``off`` and ``on`` (``--session-slots``)."""
    claude_binary()
    port = free_port()
    with (
        llama_server(tmp_path / "server", *TWO_SLOTS, parallel=2) as server,
        gateway_process(home, port, tmp_path / "gateway.log"),
    ):
        recorder = MetricsRecorder(server.url)
        try:
            _add("off", recorder.url)
            _add("on", recorder.url, "--session-slots")
            yield server, recorder, port
        finally:
            recorder.close()


def test_session_slots_keep_the_main_conversation_on_its_slot(fake_home: Path, tmp_path: Path) -> None:
    paths = AppPaths.default()
    with _off_and_on(fake_home, tmp_path) as (server, recorder, port):
        gateway = f"http://127.0.0.1:{port}"
        token = ensure_token(paths)
        #: per mode: the conversation's first request after the other session's, as the server saw it
        # (its row, the recorder's numbers, the slot the server ran it on), and the requests' range
        found: dict[str, tuple[UsageRow, Served, int]] = {}
        spans: dict[str, range] = {}
        for mode in ("off", "on"):
            assert main(["use", mode]) == 0
            before = {r.session for r in query(usage_db(paths))}
            first = len(recorder.served)
            _claude(fake_home, tmp_path / mode, "say hi")
            ours = {r.session for r in query(usage_db(paths))} - before
            assert len(ours) == 1
            other = _other_session(gateway, token)
            _claude(fake_home, tmp_path / mode, "say more", resume=True)
            rows = _conversation_rows(query(usage_db(paths)))
            _check_against_recorder(rows, recorder.served)
            spans[mode] = range(first, len(recorder.served))
            at_other = next(i for i, r in enumerate(rows) if r.session == other)
            at = next(i for i in range(at_other, len(rows)) if rows[i].session in ours)
            found[mode] = (rows[at], recorder.served[at], at)
        releases = _releases(server.log_file, len(recorder.served))
        assert len(releases) == len(recorder.served), releases
        sent = _slots_sent(recorder.served)
        measured = {mode: (seen.prompt, seen.cached, row.verdict, row.reason, releases[at])
                    for mode, (row, seen, at) in found.items()}
        log.info("measured (prompt, cached, verdict, reason, slot): %s; id_slot sent %s, "
                 "slot released %s", measured, sent, releases)
        rows = _conversation_rows(query(usage_db(paths)))

        # off: the server put the other session on the conversation's slot (its prompt looks most
        # like the request's: Claude Code's shared system prompt), and the next turn re-processed
        # all but the shared start
        row, seen, at = found["off"]
        assert all(slot is None for slot in sent[spans["off"].start:spans["off"].stop])
        other_at = next(i for i in spans["off"] if rows[i].session != row.session)
        assert releases[other_at] == releases[at]
        assert seen.cached < seen.prompt / 2, measured
        if row.verdict is not None:  # b11434 sometimes streams a Messages answer without its counts
            assert (row.verdict, row.reason) == ("PARTIAL", "evicted"), _dump(rows)

        # on: the conversation kept its slot, the other session got the other one, and the next turn
        # is a HIT by the server's numbers (the chat answers always carry them)
        row, seen, at = found["on"]
        on = spans["on"]
        assert [releases[i] for i in on] == [sent[i] for i in on]  # the server honoured id_slot
        # its main-conversation requests (with tools; a request without is a side request: another lane)
        mine = {sent[i] for i in on
                if rows[i].session == row.session and b'"tools"' in recorder.served[i].body}
        theirs = {sent[i] for i in on if rows[i].session != row.session}
        assert len(mine) == 1
        assert len(theirs) == 1
        assert mine != theirs
        assert seen.cached >= seen.prompt * 0.95, measured
        assert row.verdict == "HIT", _dump(rows)


#: a skill Claude Code 2.1.332 runs as a forked subagent (``context: fork``): the user starts it, so a
#: random tiny model needs to call no tool; the subagent sends the session's id and no agent id of its own
FORKED_SKILL = ("---\nname: sidecheck\ndescription: Look around the project in a forked agent.\n"
                "context: fork\nagent: general-purpose\n---\nList the files in this project.\n")


def test_a_forked_subagent_gets_a_slot_of_its_own(fake_home: Path, tmp_path: Path) -> None:
    """The real Claude Code 2.1.332: a conversation's turn, then a forked skill (a live subagent of the
    same session, with its own system prompt), then the conversation's next turn, on two slots with no
    host-RAM cache. With the option on the subagent runs on the other slot and the next turn is a HIT by
    the server's own numbers; with it off the figures are logged (the server chooses the slot)."""
    paths = AppPaths.default()
    with _off_and_on(fake_home, tmp_path) as (server, recorder, _port):
        #: per mode: the recorder's indexes of the main turn, the subagent's requests and the next turn
        runs: dict[str, list[range]] = {}
        for mode in ("off", "on"):
            assert main(["use", mode]) == 0
            project = tmp_path / mode
            skill = project / ".claude" / "skills" / "sidecheck"
            skill.mkdir(parents=True)
            (skill / "SKILL.md").write_text(FORKED_SKILL)
            runs[mode] = []
            for prompt, resume in (("say hi", False), ("/sidecheck", True), ("say more", True)):
                first = len(recorder.served)
                _claude(fake_home, project, prompt, resume=resume)
                runs[mode].append(range(first, len(recorder.served)))
        rows = _rows(paths, recorder)
        _check_against_recorder(rows, recorder.served)
        releases = _releases(server.log_file, len(recorder.served))
        sent = _slots_sent(recorder.served)
        measured = {}
        for mode, (turn, fork, after) in runs.items():
            assert fork, f"{mode}: the forked skill sent no request"
            next_turn = recorder.served[after.start]
            measured[mode] = {
                "turn slots": [releases[i] for i in turn], "fork slots": [releases[i] for i in fork],
                "fork prompts": [recorder.served[i].prompt for i in fork],
                "next turn": (next_turn.prompt, next_turn.cached, rows[after.start].verdict,
                              rows[after.start].reason, releases[after.start])}
        log.info("forked subagent, measured: %s; id_slot sent %s", measured, sent)
        # the subagent is the same session, with no agent id of its own, and another system prompt
        for mode, (turn, fork, _after) in runs.items():
            assert {rows[i].session for i in (*turn, *fork)} == {rows[turn.start].session}, mode
            assert all(rows[i].agent is None for i in fork), mode

        turn, fork, after = runs["on"]
        main_slots = {sent[i] for i in (*turn, *after) if b'"tools"' in recorder.served[i].body}
        fork_slots = {sent[i] for i in fork}
        assert len(main_slots) == 1, measured
        assert not main_slots & fork_slots, measured
        next_turn = recorder.served[after.start]
        assert next_turn.cached >= next_turn.prompt * 0.95, measured
        assert rows[after.start].verdict == "HIT", _dump(rows)
