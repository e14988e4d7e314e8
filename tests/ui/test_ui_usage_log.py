"""The Usage tab as a per-request log, over rows the gateway's own ``UsageStore`` wrote into the usage
database of a temporary HOME: filters, the summary per session, KPI figures, the trend over the whole
period, a miss row opening its reason with the differing bytes, and the empty state's gateway switch."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from tests.ui.uihelpers import make_profile

from kvswitch.ui.usage.usage_view import UsageView

DETAIL = {"part": "system", "first_byte": 1234, "first_token": 311,
          "before": "x-anthropic-billing-header: cc_version=2.1.332.a1b",
          "after": "x-anthropic-billing-header: cc_version=2.1.332.c9f"}


@pytest.fixture
def usage_rows(paths: Any) -> None:
    from kvswitch.gateway import control
    from kvswitch.usage.schema import UsageRow
    from kvswitch.usage.store import UsageStore

    store = UsageStore(control.usage_db_path(paths))
    now = time.time()

    def row(offset: float, session: str, prompt: int, cached: int, verdict: str, **extra: Any) -> UsageRow:
        return UsageRow(time=now - offset, client="claude", profile="local",
                        upstream="http://127.0.0.1:8080", model="qwen3", status=200, input_tokens=prompt,
                        cached_tokens=cached, output_tokens=20, ttft_ms=900.0, client_name="claude-code",
                        client_version="2.1.332", session=session, session_source="header",
                        verdict=verdict, **extra)

    try:
        store.add(row(300, "s-one", 14000, 0, "COLD", reason="cold", reusable_tokens=0))
        store.add(row(200, "s-one", 14500, 14000, "HIT", reusable_tokens=14000))
        store.add(row(100, "s-two", 14000, 200, "MISS", reusable_tokens=13900, reason="prefix_changed",
                      reason_detail=json.dumps(DETAIL)))
        store.add(row(50, "s-one", 15000, 14400, "HIT", reusable_tokens=14500))
    finally:
        store.close()


def _loaded(qtbot: Any, view: UsageView) -> None:
    view.refresh()
    qtbot.waitUntil(lambda: view.log is not None and not view.loading, timeout=10_000)


def _recorded(paths: Any, *rows: Any) -> None:
    """``rows`` written by the gateway's own store into the temporary HOME's usage database."""
    from kvswitch.gateway import control
    from kvswitch.usage.store import UsageStore

    store = UsageStore(control.usage_db_path(paths))
    try:
        for row in rows:
            store.add(row)
    finally:
        store.close()


def _shown(qtbot: Any, controller: Any) -> UsageView:
    """The Usage tab shown and loaded (the caller keeps it: qtbot holds it only weakly)."""
    view = UsageView(controller)
    qtbot.addWidget(view)
    view.show()
    _loaded(qtbot, view)
    return view


def test_the_request_log_filters_sums_sessions_and_explains_a_miss(qtbot: Any, controller: Any,
                                                                    usage_rows: None) -> None:
    view = UsageView(controller)
    qtbot.addWidget(view)
    view.resize(1000, 700)
    view.show()
    _loaded(qtbot, view)
    log = view.request_log
    assert log.requests_table.rowCount() == 4
    assert log.requests_table.item(0, 8).text() == "HIT"  # newest first
    assert log.kpis.values["requests"].text() == "4"
    assert log.kpis.values["misses"].text() == "1"
    sessions = {log.sessions_table.item(r, 0).text(): log.sessions_table.item(r, 4).text()
                for r in range(log.sessions_table.rowCount())}
    assert set(sessions) == {"s-one", "s-two"}
    assert sessions["s-two"] == f"{200 / 14000:.0%}"
    # the trend lies over the whole period (24 hours in hourly slices), not only where requests were
    assert len(view.chart.days) >= 24
    assert sum(bar.requests for bar in view.chart.days) == 4
    view.grab()

    # the miss row opens its reason and the differing bytes
    verdicts = [log.requests_table.item(r, 8).text() for r in range(log.requests_table.rowCount())]
    miss_row = verdicts.index("MISS")
    log.requests_table.setCurrentCell(miss_row, 0)
    text = log.reason_view.toPlainText()
    assert "prefix_changed" in text
    assert "cc_version=2.1.332.a1b" in text
    assert "cc_version=2.1.332.c9f" in text
    assert "1234" in text

    # a filter narrows the log, the sessions and the figures alike
    view.log = None
    log.choose(log.verdict_combo, "HIT")
    qtbot.waitUntil(lambda: view.log is not None and not view.loading, timeout=10_000)
    assert log.requests_table.rowCount() == 2
    assert {log.requests_table.item(r, 8).text() for r in range(2)} == {"HIT"}
    assert log.kpis.values["requests"].text() == "2"
    view.log = None
    log.choose(log.verdict_combo, None)
    log.choose(log.session_combo, "s-two")
    qtbot.waitUntil(lambda: view.log is not None and not view.loading, timeout=10_000)
    assert log.requests_table.rowCount() == 1
    assert log.sessions_table.rowCount() == 1


def test_the_empty_state_offers_the_gateway_switch_itself(qtbot: Any, controller: Any, store: Any,
                                                         fake_home: Any) -> None:
    store.add(make_profile("local", base_url="http://127.0.0.1:8080",
                           env={"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"}))
    view = UsageView(controller)
    qtbot.addWidget(view)
    view.show()
    view.refresh()
    qtbot.waitUntil(lambda: view.body.currentWidget() is view.offer, timeout=10_000)
    assert "kvswitch" not in view.totals_label.text()  # no CLI line to copy
    assert view.offer.profile_combo.currentData() == "local"
    with qtbot.waitSignal(controller.profile_applied, timeout=10_000):
        view.offer.route_button.click()
    assert store.get("local").via_gateway
    settings = json.loads((fake_home / ".claude" / "settings.json").read_text())
    assert settings["env"]["ANTHROPIC_BASE_URL"] != "http://127.0.0.1:8080"  # the gateway's address


def test_a_session_below_the_threshold_is_named_in_the_tray_with_its_reason(qtbot: Any, controller: Any,
                                                                            paths: Any) -> None:
    """Rows the gateway's store wrote: session "s-bad" keeps re-processing its prompt (prefix changed),
    "s-good" keeps hitting; only the bad one is named, with the reason, and only once."""
    from kvswitch.gateway import control
    from kvswitch.usage.schema import UsageRow
    from kvswitch.usage.store import UsageStore

    store = UsageStore(control.usage_db_path(paths))
    now = time.time()
    try:
        for number in range(6):
            for session, cached, reason in (("s-bad", 1000, "prefix_changed"), ("s-good", 13800, None)):
                store.add(UsageRow(time=now - 60 + number, client="claude", profile="local", upstream=None,
                                   model="qwen3", status=200, input_tokens=14000, cached_tokens=cached,
                                   client_name="claude-code", session=session, reusable_tokens=13900,
                                   verdict="MISS" if reason else "HIT", reason=reason))
    finally:
        store.close()
    controller._usage_seen_until = 0.0
    alerts: list[tuple[str, str]] = []
    controller.alert_raised.connect(lambda title, text: alerts.append((title, text)))
    controller.poll_gateway_usage()
    qtbot.waitUntil(lambda: bool(alerts), timeout=10_000)
    assert len(alerts) == 1
    title, text = alerts[0]
    assert "hit rate" in title
    assert "s-bad" in text
    assert "s-good" not in text
    assert "prefix changed" in text
    assert "80%" in text  # the default threshold
    controller._usage_seen_until = 0.0
    controller.poll_gateway_usage()  # the same rows again: named once, not every poll
    qtbot.wait(300)
    tasks_done = not controller.usage_digest._task or not controller.usage_digest._task.running
    assert tasks_done
    assert len([a for a in alerts if "s-bad" in a[1]]) == 1


def test_a_request_the_server_said_it_re_processed_opens_the_servers_words(qtbot: Any, controller: Any,
                                                                           paths: Any) -> None:
    from kvswitch.usage.schema import UsageRow

    # b11434 at -lv 4 (tests/fixtures/llama.cpp-b11434/llama_server_swa_lv4.log)
    said = ("slot   operator(): id  0 | task 655 | forcing full prompt re-processing due to lack of cache "
            "data (likely due to SWA or hybrid/recurrent memory, see "
            "https://github.com/ggml-org/llama.cpp/pull/13194#issuecomment-2868343055)")
    detail = {"server_said": said, "advice": "Start the server with --swa-full (SWA models)",
              "prompt": 15775, "cached": 0, "reusable": 13811}
    _recorded(paths, UsageRow(
        time=time.time() - 10, client="claude", profile="swa", upstream="http://127.0.0.1:8080",
        model="tiny", status=200, input_tokens=15775, cached_tokens=0, output_tokens=224,
        client_name="claude-code", client_version="2.1.332", session="s-swa", session_source="header",
        verdict="MISS", reusable_tokens=13811, reason="server", reason_detail=json.dumps(detail)))
    view = _shown(qtbot, controller)
    log = view.request_log
    assert log.requests_table.rowCount() == 1
    log.requests_table.setCurrentCell(0, 0)
    text = log.reason_view.toPlainText()
    assert "server" in text
    assert "forcing full prompt re-processing" in text
    assert "--swa-full" in text


#: a row as the gateway recorded it (tests/e2e/test_e2e_live_cache.py: Claude Code 2.1.332 through
#: ``kvswitch gateway run`` to llama-server b11434, a new conversation on the header-on profile)
RECORDED_OPENING = {
    "prompt": 13808, "cached": 8, "reusable": 9222,
    "reference": {"session": "c98929db-529b", "agent": None, "same_session": False, "age_s": 3.9,
                  "prompt": 15173, "cached": 14944},
    "part": "system[0]", "kind": "system", "offset": 0, "offset_in_part": 0, "precision": 256,
    "looks_like": "attribution_block",
    "attribution": {"now": "cc_version=2.1.332.0b8; cc_entrypoint=sdk-cli;", "before": "", "differs_at": 0,
                    "fingerprint": {"now": "0b8", "before": None}},
    "fix": {"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"},
    "excerpt": "x-anthropic-billing-header: cc_version=2.1.332.0"}


def test_a_miss_reads_as_words_first_then_as_recorded(qtbot: Any, controller: Any, paths: Any) -> None:
    from kvswitch.usage.schema import UsageRow

    evicted = {"prompt": 15000, "cached": 40, "reusable": 13800,
               "between": [{"who": "another session", "session": "5f0c1e2a-77aa", "agent": None,
                            "requests": 2, "prompt_tokens": 28000}]}
    _recorded(paths,
              UsageRow(time=time.time() - 30, client="claude", profile="on", upstream="http://127.0.0.1:8080",
                       model="tiny", status=200, input_tokens=13808, cached_tokens=8, output_tokens=40,
                       client_name="claude-code", client_version="2.1.332", session="s-new",
                       session_source="header", verdict="MISS", reusable_tokens=9222, reason="prefix_changed",
                       reason_detail=json.dumps(RECORDED_OPENING)),
              UsageRow(time=time.time() - 20, client="claude", profile="on", upstream="http://127.0.0.1:8080",
                       model="tiny", status=200, input_tokens=15000, cached_tokens=40, output_tokens=40,
                       client_name="claude-code", session="s-new", session_source="header", verdict="MISS",
                       reusable_tokens=13800, reason="evicted", reason_detail=json.dumps(evicted)))
    view = _shown(qtbot, controller)
    log = view.request_log
    reasons = {log.requests_table.item(r, 9).text(): log.requests_table.item(r, 9).toolTip()
               for r in range(log.requests_table.rowCount())}
    assert reasons == {"the prompt's prefix changed": "prefix_changed",
                       "the server dropped the cached prefix (evicted)": "evicted"}
    assert log.sessions_table.item(0, 7).text() == "the server dropped the cached prefix (evicted)"

    row = [log.requests_table.item(r, 9).toolTip() for r in range(2)].index("prefix_changed")
    log.requests_table.setCurrentCell(row, 0)
    told, recorded = log.reason_view.toPlainText().split("\nAs recorded:\n")
    assert told.splitlines() == [
        "Why: the prompt's prefix changed (prefix_changed)",
        "Reused: 8 of 9,222 reusable tokens (prompt: 13,808)",
        "Compared with: the request before, of session c98929db-529b (3.9 s earlier)",
        "Where: system[0] (system), at character 0",
        "What changed: Claude Code's attribution block, which differs per conversation",
        "Fix: set CLAUDE_CODE_ATTRIBUTION_HEADER=0 in the profile's environment"]
    assert "looks_like: attribution_block" in recorded
    assert "cc_version=2.1.332.0b8" in recorded

    log.requests_table.setCurrentCell(1 - row, 0)
    told = log.reason_view.toPlainText().split("\nAs recorded:\n")[0]
    assert "Ran in between: another session (2 requests, 28,000 prompt tokens)" in told


def test_the_reason_words_speak_chinese(qtbot: Any, qapp: Any) -> None:
    from kvswitch.ui import i18n
    from kvswitch.ui.control.reason_words import explanation, reason_text

    i18n.install(qapp, "zh_CN")
    try:
        told = dict(explanation("prefix_changed", RECORDED_OPENING))
        english = {"Why", "Reused", "Compared with", "Where", "What changed", "Fix"}
        assert len(told) == len(english)
        assert not english & set(told), told
        assert reason_text("evicted") != "the server dropped the cached prefix (evicted)"
    finally:
        i18n.install(qapp, "en")


#: a new conversation's opening as the gateway recorded it (tests/e2e/test_e2e_live_cache.py's header-off
#: profile: Claude Code 2.1.332 through ``kvswitch gateway run`` to llama-server b11434, a second
#: conversation in the same project); the server's rendering put 6,085 tokens before the user's words
RECORDED_NEW_CONVERSATION = {
    "prompt": 13705, "cached": 6135, "new_conversation": "messages[0].content[1]",
    "reference": {"session": "f11f64d1-52c9", "agent": None, "same_session": False, "age_s": 25.4,
                  "prompt": 14379, "cached": 14147},
    "reusable": 6135, "part": "messages[0].content[1]", "kind": "message 0", "offset": 38849,
    "offset_in_part": 0, "precision": 256, "looks_like": "changed", "excerpt": "say hello to the whole team",
    "estimated_reusable": 11120, "measured_by": "server"}


def test_a_new_conversation_reads_as_expected_and_costs_no_time(qtbot: Any, controller: Any,
                                                                 paths: Any) -> None:
    """Issue 38, item 3: the Usage tab called this request PARTIAL, "the prompt's prefix changed", and
    counted 34 s of time lost, while the Cache log called it a shared prefix. The server reused all it
    could: a HIT, "a new conversation", nothing lost, the measure told in words."""
    from kvswitch.usage.schema import UsageRow

    _recorded(paths, UsageRow(
        time=time.time() - 10, client="claude", profile="off", upstream="http://127.0.0.1:8080",
        model="tiny", status=200, input_tokens=13705, cached_tokens=6135, output_tokens=16, ttft_ms=3400.0,
        client_name="claude-code", client_version="2.1.332", session="s-second", session_source="header",
        verdict="HIT", reusable_tokens=6135, reason=None,
        reason_detail=json.dumps(RECORDED_NEW_CONVERSATION)))
    view = _shown(qtbot, controller)
    log = view.request_log
    assert log.requests_table.rowCount() == 1
    assert log.requests_table.item(0, 8).text() == "HIT"
    assert log.requests_table.item(0, 9).text() == "a new conversation (its own words are new)"
    log.requests_table.setCurrentCell(0, 0)
    text = log.reason_view.toPlainText()
    assert "where the user's own words begin (messages[0].content[1])" in text
    assert "its own 7,570 tokens are new, as expected" in text
    assert "6,135 tokens come before the user's words in the server's own rendering" in text
    assert "11,120" in text
    assert "its text changed" not in text
    sessions = log.sessions_table
    assert sessions.rowCount() == 1
    headers = [sessions.horizontalHeaderItem(i).text() for i in range(sessions.columnCount())]
    lost = sessions.item(0, next(i for i, h in enumerate(headers) if "lost" in h.lower()))
    assert lost.text() == "0 ms"
