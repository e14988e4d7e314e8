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
- the Cache log takes the gateway's verdict for each request the gateway relayed (its usage row, matched
  on the server's own prompt and cached tokens): the log's own rule cannot know the sessions, and was
  measured calling C's opening "partial" and B's evicted turn a "shared prefix" when Claude Code sent no
  side request between conversations;
- the tray, told each request as the Cache log lists it and then each gateway row as it arrives (the
  window's own model, panel wiring and controller), says what the Cache log says after every request,
  and is green after B's opening.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

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
from kvswitch.core.gateway_config import usage_db
from kvswitch.core.paths import AppPaths
from kvswitch.logs.model import CacheEvent
from kvswitch.usage.queries import query
from kvswitch.usage.schema import UsageRow
from support.claude import claude_binary
from support.gateway import gateway_process
from support.llama import llama_server
from support.net import free_port

if TYPE_CHECKING:
    from kvswitch.ui.logs.events_model import ReuseTotals

pytestmark = [pytest.mark.real_server, pytest.mark.timeout(1500)]

#: the main conversation's requests (Claude Code's side requests are small)
MAIN = 5000


def _cache_log(log_file: Path, gateway_rows: list[UsageRow], capsys: pytest.CaptureFixture[str]
               ) -> tuple[list[tuple[int, int, str]], ReuseTotals]:
    """(prompt, cached, display verdict) per request, and the summary strip's totals, as the Cache log tab
    shows the server's log once the gateway's rows arrived: the log engine's events (``kvswitch log scan
    --jsonl``) in the tab's own model, given every row of the gateway's usage file."""
    from kvswitch.ui.logs.events_model import CacheEventsModel  # noqa: PLC0415 - the tab's model

    capsys.readouterr()
    assert main(["log", "scan", str(log_file), "--jsonl"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
    events = [CacheEvent.from_json(line) for line in lines if "prompt_tokens" in line and "verdict" in line]
    model = CacheEventsModel()
    model.add_events(events)
    model.take_gateway_rows(gateway_rows)
    return ([(e.prompt_tokens, e.cached_tokens, model.verdict_at(n)) for n, e in enumerate(events)],
            model.totals)


def _tray_states(log_file: Path, rows: list[UsageRow], qtbot: object) -> list[str]:
    """The tray's state after each request, as the window's Cache log lists the server's log line and
    then the gateway's row for it arrives (``window_tabs`` wires the panel to the controller so)."""
    from kvswitch.core.store import ProfileStore  # noqa: PLC0415
    from kvswitch.logs.scan import scan_file  # noqa: PLC0415
    from kvswitch.ui.control.controller import AppController  # noqa: PLC0415
    from kvswitch.ui.logs.log_panel import LogPanel  # noqa: PLC0415

    paths = AppPaths.default()
    controller = AppController(paths, store=ProfileStore(paths))
    panel = LogPanel()
    panel.requests_seen.connect(controller.note_log_requests)
    panel.verdict_revised.connect(controller.note_gateway_verdict)
    states = []
    try:
        for event, row in zip(scan_file(log_file), rows, strict=True):
            panel._unlisted.append(event)
            panel._list_unlisted()  # the server's log line, listed
            panel.take_gateway_rows([row])  # the gateway's row for it, seconds later
            states.append(str(controller.cache_state))
    finally:
        panel.deleteLater()
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
            shown, totals = _cache_log(server.log_file, query(usage_db(paths)), capsys)
            tray = _tray_states(server.log_file, rows, qtbot)
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

    # a request is a loss in the Cache log exactly when it is one in the Usage tab (side requests too)
    differ = [(_dump([row]), verdict) for row, (_prompt, _cached, verdict) in zip(rows, shown, strict=True)
              if (row.verdict in ("MISS", "PARTIAL")) != (verdict in ("miss", "partial"))]
    assert not differ, differ
    # the Cache log's strip counts as lost the tokens the gateway found reusable and the server did not
    # reuse, on the requests the gateway called losses only: none of an opening's own new words
    assert totals.reprocessed == sum(max(0, min(r.reusable_tokens or 0, r.input_tokens or 0)
                                         - (r.cached_tokens or 0))
                                     for r in rows if r.verdict in ("MISS", "PARTIAL")), _dump(rows)
    assert totals.reprocessed > 0
