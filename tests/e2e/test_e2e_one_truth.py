"""The two views of the cache tell one truth (issue 38, item 3), with the real Claude Code 2.1.332 through
``kvswitch gateway run`` to a real one-slot llama-server b11434, an independent recorder between them
(the server's ``/metrics`` counters around each request):

- a new conversation A, its continued turn, new conversations B and C in the same project, and B's next
  turn after C ran (on one slot without a host-RAM cache, C's prompt replaced B's: evicted);
- the Usage tab's rows (the gateway's record, as ``kvswitch usage --requests --json`` lists them) and the
  Cache log (the log engine on the server's own log, with the display rule of the Cache log tab) each
  equal the server's numbers, request by request;
- a request is a loss in one view exactly when it is a loss in the other: the second conversation's
  opening is a HIT "new conversation" in the Usage tab and a "shared prefix" in the Cache log, and no time
  is counted lost for it; B's turn after C ran is a loss in both;
- the tray, told each request as the Cache log lists it (the window's own model and controller), says
  what the Cache log says after every request, and is green after B's opening;
- where the Cache log's rule cannot know the sessions (issue 38, still open: see the end of the test),
  a disagreement between the two views is reported as an expected failure naming the requests.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest
from tests.e2e.test_e2e_live_cache import (
    ONE_SLOT,
    MetricsRecorder,
    _add,
    _check_against_recorder,
    _claude,
    _dump,
    _rows,
)

from kvswitch.cli import main
from kvswitch.core.paths import AppPaths
from support.claude import claude_binary
from support.gateway import gateway_process
from support.llama import llama_server
from support.net import free_port

pytestmark = [pytest.mark.real_server, pytest.mark.timeout(1500)]

#: the main conversation's requests (Claude Code's side requests are small)
MAIN = 5000


def _cache_log(log_file: Path, capsys: pytest.CaptureFixture[str]) -> list[tuple[int, int, str]]:
    """(prompt, cached, display verdict) per request, as the Cache log tab shows the server's log: the
    log engine's events (``kvswitch log scan --jsonl``) under the tab's own display rule."""
    from kvswitch.ui.logs.events_model import CacheEventsModel  # noqa: PLC0415 - the tab's rule

    capsys.readouterr()
    assert main(["log", "scan", str(log_file), "--jsonl"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
    events = [SimpleNamespace(**line) for line in lines if "prompt_tokens" in line and "verdict" in line]
    shown, previous = [], None
    for event in events:
        shown.append((event.prompt_tokens, event.cached_tokens,
                      CacheEventsModel._display_verdict(event, previous)))
        previous = event.prompt_tokens
    return shown


def _tray_states(log_file: Path, qtbot: object) -> list[str]:
    """The tray's state after each request, as the window's Cache log model lists the server's log and
    the window's controller takes it (``LogPanel`` wires the one to the other the same way)."""
    from kvswitch.core.store import ProfileStore  # noqa: PLC0415
    from kvswitch.logs.scan import scan_file  # noqa: PLC0415
    from kvswitch.ui.control.controller import AppController  # noqa: PLC0415
    from kvswitch.ui.logs.events_model import CacheEventsModel  # noqa: PLC0415

    paths = AppPaths.default()
    controller = AppController(paths, store=ProfileStore(paths))
    model = CacheEventsModel()
    states = []
    try:
        for event in scan_file(log_file):
            controller.note_log_requests([(verdict, 1) for verdict in model.add_events([event])])
            states.append(str(controller.cache_state))
    finally:
        controller.shutdown()
    return states


def _resume(home: Path, project: Path, prompt: str, session: str) -> None:
    """``claude -p --resume SESSION``: that conversation's next turn, whatever ran last."""
    argv = [str(claude_binary()), "-p", prompt, "--max-turns", "1", "--resume", session]
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8"}
    done = subprocess.run(argv, cwd=project, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=600)
    capped = "output token maximum" in done.stdout  # the tiny model's answers end at the output cap
    assert done.returncode == 0 or capped, done.stderr[-2000:] + done.stdout[-2000:]


def _usage_requests(capsys: pytest.CaptureFixture[str]) -> list[dict[str, object]]:
    capsys.readouterr()
    assert main(["usage", "--requests", "--json", "--since", "all"]) == 0
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


def test_the_usage_tab_and_the_cache_log_agree_request_by_request(
        fake_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], qtbot: object) -> None:
    claude_binary()
    paths = AppPaths.default()
    project = tmp_path / "project"
    with (
        llama_server(tmp_path / "server", *ONE_SLOT) as server,
        gateway_process(fake_home, free_port(), tmp_path / "gateway.log"),
    ):
        recorder = MetricsRecorder(server.url)
        try:
            _add("local", recorder.url, "--env", "CLAUDE_CODE_ATTRIBUTION_HEADER=0")
            assert main(["use", "local"]) == 0
            _claude(fake_home, project, "say hi")  # conversation A
            _claude(fake_home, project, "say more", resume=True)  # A continued
            first_b = len(recorder.served)
            _claude(fake_home, project, "say hello to the whole team")  # conversation B
            b_session = _rows(paths, recorder)[first_b].session
            assert b_session
            _claude(fake_home, project, "say good morning to everyone")  # conversation C
            after_c = len(recorder.served)
            _resume(fake_home, project, "say more", b_session)  # B's next turn, after C ran
            rows = _rows(paths, recorder)
            _check_against_recorder(rows, recorder.served)
            shown = _cache_log(server.log_file, capsys)
            tray = _tray_states(server.log_file, qtbot)
            listed = _usage_requests(capsys)
        finally:
            recorder.close()

    # the Cache log: one event per request the server ran, with the server's own numbers
    served = [(seen.prompt, seen.cached) for seen in recorder.served]
    assert [(prompt, cached) for prompt, cached, _ in shown] == served, (shown, served)
    # the CLI lists the rows the Usage tab shows (newest first), verdicts and reasons as recorded
    assert sorted((r["input_tokens"], r["cached_tokens"], r["verdict"]) for r in listed
                  if r["status"] == 200 and r["input_tokens"]) == sorted(
        (r.input_tokens, r.cached_tokens, r.verdict) for r in rows if r.input_tokens), (listed, _dump(rows))

    # the tray is told each request as the Cache log shows it: green after a hit or a shared prefix, amber
    # or red after a loss, unchanged by a first request
    state, tray_of = "unknown", {"hit": "hit", "shared_prefix": "hit", "partial": "partial", "miss": "miss"}
    for (_prompt, _cached, verdict), told in zip(shown, tray, strict=True):
        state = tray_of.get(verdict, state)
        assert told == state, (shown, tray)

    # conversation B's opening: expected in both views (A's longer prompt ran before it), no time lost
    opening = next(r for r in rows[first_b:] if (r.input_tokens or 0) > MAIN)
    assert opening.verdict == "HIT", _dump([opening])
    assert json.loads(opening.reason_detail or "{}")["new_conversation"] == "messages[0].content[1]"
    assert shown[rows.index(opening)][2] == "shared_prefix", shown
    assert tray[rows.index(opening)] == "hit", tray  # green, as the Usage tab's HIT
    # B's turn after C ran: C's prompt replaced B's on the one slot
    evicted = next(r for r in rows[after_c:] if r.session == b_session and (r.input_tokens or 0) > MAIN)
    assert evicted.verdict in ("MISS", "PARTIAL"), _dump([evicted])
    assert evicted.reason == "evicted", _dump([evicted])
    capsys.readouterr()
    assert main(["sessions", "--source", "gateway", "--json"]) == 0
    sessions = {s["session"]: s for s in json.loads(capsys.readouterr().out)}
    # the session's time lost is its evicted turn's alone: the opening reused all it could
    assert opening.reusable_tokens == opening.cached_tokens, _dump([opening])
    lost = sum((r.ttft_ms or 0) * (min(r.reusable_tokens or 0, r.input_tokens or 0) - (r.cached_tokens or 0))
               / ((r.input_tokens or 0) - (r.cached_tokens or 0))
               for r in rows if r.session == b_session and r is not opening and r.verdict != "COLD"
               and r.ttft_ms is not None and (r.reusable_tokens or 0) > (r.cached_tokens or 0)
               and (r.input_tokens or 0) > (r.cached_tokens or 0))
    assert lost > 0
    assert sessions[b_session]["time_lost_ms"] == pytest.approx(lost, abs=1.0), sessions[b_session]

    # Issue 38 (open): the Cache log judges from the server's log alone, by whether a request's prompt is
    # shorter than the slot's previous one, and cannot tell a new conversation from a continued one whose
    # context was evicted; the Usage tab knows the sessions. Measured here when Claude Code sent no side
    # request between the conversations: C's opening (longer than B's) was a "partial" in the Cache log
    # and a HIT "new conversation" in the Usage tab, and B's evicted turn a "shared prefix" in the Cache
    # log. Every check above holds; the two views' loss verdicts are compared last, and a disagreement
    # marks this test xfail with the requests that differ until the Cache log takes the gateway's
    # judgement for the requests it relayed.
    differ = [(_dump([row]), verdict) for row, (_prompt, _cached, verdict) in zip(rows, shown, strict=True)
              if (row.input_tokens or 0) > MAIN
              and (row.verdict in ("MISS", "PARTIAL")) != (verdict in ("miss", "partial"))]
    if differ:
        pytest.xfail(f"issue 38: the Cache log and the Usage tab disagree on {differ}")
