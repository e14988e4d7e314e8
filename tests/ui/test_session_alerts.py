"""The tray's session alert follows the gateway's rolling rule (``gateway.cache_truth_alert``): it names
a session whose reused share of the reusable prompt falls below the threshold, with the costliest
reason, once per throttle period, and never for a session that keeps hitting."""

from __future__ import annotations

import pytest

from kvswitch.ui.control.usage_alerts import SESSION_THROTTLE_S, SessionHitAlerts
from kvswitch.usage.schema import UsageRow


def _row(session: str, verdict: str, reusable: int, cached: int, reason: str | None = None) -> UsageRow:
    return UsageRow(1.0, "claude", "local", None, "tiny", 200, input_tokens=reusable + 50,
                    cached_tokens=cached, client_name="Claude Code", session=session, verdict=verdict,
                    reusable_tokens=reusable, reason=reason)


@pytest.mark.usefixtures("qapp")
def test_a_session_losing_its_prefix_is_named_with_its_reason_once_per_throttle() -> None:
    now = [0.0]
    alerts = SessionHitAlerts(threshold=0.8, requests=4, clock=lambda: now[0])
    good = [_row("main-session", "COLD", 0, 0, "cold")] + [_row("main-session", "HIT", 10_000, 9_990)] * 3
    assert alerts.feed_rows(good) == []
    bad = [_row("main-session", "MISS", 10_000, 0, "prefix_changed")] * 3
    texts = alerts.feed_rows(bad)
    assert len(texts) == 1
    assert "main-ses" in texts[0]
    assert "Claude Code" in texts[0]
    assert "prefix changed" in texts[0]
    assert "25%" in texts[0]  # 9,990 of the last 4 requests' 40,000 reusable tokens
    assert alerts.feed_rows(bad[:1]) == []  # throttled
    now[0] += SESSION_THROTTLE_S
    assert len(alerts.feed_rows(bad[:1])) == 1


@pytest.mark.usefixtures("qapp")
def test_cold_starts_and_other_sessions_do_not_raise_an_alert() -> None:
    alerts = SessionHitAlerts(threshold=0.8, requests=4)
    rows = [_row(f"s{n}", "COLD", 0, 0, "cold") for n in range(10)]
    rows += [_row("steady", "HIT", 8_000, 7_990) for _ in range(6)]
    assert alerts.feed_rows(rows) == []


@pytest.mark.usefixtures("qapp")
def test_new_conversations_losing_the_shared_prompt_name_the_profile_and_the_fix() -> None:
    now = [0.0]
    alerts = SessionHitAlerts(threshold=0.8, requests=4, clock=lambda: now[0])
    detail = ('{"prompt":13850,"cached":14,"reusable":13771,"part":"system[0]","looks_like":'
              '"attribution_block","fix":{"CLAUDE_CODE_ATTRIBUTION_HEADER":"0"}}')
    first = [_row("conversation-1", "COLD", 0, 0, "cold"), _row("conversation-1", "HIT", 13_800, 13_800)]
    assert alerts.feed_rows(first) == []
    opening = _row("conversation-2", "MISS", 13_771, 14, "prefix_changed")
    opening.reason_detail = detail
    texts = alerts.feed_rows([opening, _row("conversation-2", "HIT", 13_800, 13_800)])
    assert len(texts) == 1  # the profile's, not the session's: inside the session the cache works
    assert "profile local" in texts[0]
    assert "attribution block (system[0])" in texts[0]
    assert "CLAUDE_CODE_ATTRIBUTION_HEADER=0" in texts[0]
    assert alerts.feed_rows([_row("conversation-3", "MISS", 13_771, 14, "prefix_changed")]) == []  # throttled
    # a new conversation that reuses what it shares raises nothing
    steady = SessionHitAlerts(threshold=0.8, requests=4)
    assert steady.feed_rows([*first, _row("conversation-2", "HIT", 13_771, 13_700)]) == []
