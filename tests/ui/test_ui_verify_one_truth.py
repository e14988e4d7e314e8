"""Verify's card and the tray make one judgement (issue 38, item 7), against a real llama-server whose log
the window follows.

The Claude Code-shaped replay sends ~14k-token prompts; on a 2-core CI machine the tiny model takes about
25 s for one (the probe's cold ~12k-token request about 17 s), so with the window's own 30 s timeout the
replay times out while the probe has its hit — the run the issue describes. On a machine fast enough
for the replay to finish, the same checks hold for the finished run: card and tray green alike.
Such a run is not shown as a success (amber card, the replay row marked, the reason said), and the tray
says the same. The requests the verify sent itself — its cold request, and the replay request the server
finishes after the client gave up — are not the user's: they never turn the tray red. A request of the
user's afterwards still decides the tray.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.ui.uihelpers import make_profile

from kvswitch.ui.cache_state import CacheState, VerifyTraffic
from support.llama import RunningServer
from support.llama import llama_server as start_llama_server

SAFE = {"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"}


@pytest.fixture
def llama(tmp_path: Path) -> Iterator[RunningServer]:
    with start_llama_server(tmp_path, context=32768, log_file=str(tmp_path / "llama-server.log")) as server:
        yield server


def _idle(server: RunningServer) -> bool:
    slots = httpx.get(f"{server.url}/slots", timeout=5).json()
    return not any(slot.get("is_processing") for slot in slots)


@pytest.mark.real_server
def test_a_timed_out_replay_is_no_success_and_the_verifys_requests_leave_the_tray_alone(
        qtbot: Any, window: Any, store: Any, llama: RunningServer) -> None:
    store.add(make_profile("tiny", base_url=llama.url, env=SAFE, targets=["claude"], context_window=32768,
                           log={"kind": "file", "path": str(llama.log_file)}))
    assert window.apply_profile("tiny", review=False)
    controller = window.controller
    assert controller.verify_timeout_s == 30.0  # the window's own, as in the issue
    states: list[str] = []
    controller.cache_state_changed.connect(states.append)
    with qtbot.waitSignal(controller.verify_finished, timeout=90_000) as finished:
        assert controller.start_verify("tiny")
    result = finished.args[0]
    assert result.verdict == "HIT", result.message
    assert result.requests_sent >= 3  # cold, warm, and at least one replay request the server was given
    card = window.verify_card
    assert card.verdict_label.text() == "Cache hit"
    judged = CacheState.PARTIAL if result.claude_replay.error else CacheState.HIT
    if result.claude_replay.error:
        assert "timeout" in result.claude_replay.error
        assert card.replay_value.text().startswith("⚠ ")
        assert "did not finish" in card.message_label.text()
    assert card._state == judged  # amber, not green beside a check that did not finish
    assert controller.cache_state == judged  # the tray says the same

    # the server finishes (or drops) what the verify abandoned; the window reads all of its log
    qtbot.waitUntil(lambda: _idle(llama), timeout=120_000)
    listed = window.log_panel.events_model.rowCount()
    qtbot.waitUntil(lambda: window.log_panel.events_model.rowCount() >= 2, timeout=10_000)
    qtbot.wait(1500)
    assert window.log_panel.events_model.rowCount() >= listed
    assert "miss" in [str(e.verdict) for e in window.log_panel.events_model.events()]  # the cold one
    assert controller.cache_state == judged
    assert CacheState.MISS not in states

    # the user's own request, once the verify's are accounted for, decides the tray again
    time.sleep(max(0.0, controller.verify_timeout_s - 1.0))
    with qtbot.waitSignal(window.log_panel.requests_seen, timeout=30_000):
        httpx.post(f"{llama.url}/completion", json={"prompt": "a user's own question, new words " * 20,
                                                    "n_predict": 1, "cache_prompt": True}, timeout=60)
    assert controller.cache_state == CacheState.MISS


def test_the_verifys_own_requests_are_counted_out_and_the_users_are_kept() -> None:
    now = [0.0]
    traffic = VerifyTraffic(clock=lambda: now[0])
    traffic.started()
    assert traffic.users([("miss", 1), ("hit", 1)]) == []  # while it runs: all its own
    traffic.finished(4, grace_s=30)  # it made the server process four: two are still to come
    assert traffic.users([("miss", 1)]) == []
    assert traffic.users([("partial", 1), ("miss", 1)]) == ["miss"]  # the last of the four, then the user's
    traffic.started()
    traffic.finished(3, grace_s=30)
    now[0] = 31.0  # the server dropped the abandoned request instead: after the grace, requests are users'
    assert traffic.users([("miss", 1)]) == ["miss"]
