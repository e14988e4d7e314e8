"""The Usage tab's period and words (issue 38, item 8): a 24-hour range in hourly bars as the default,
ticks that say the day of an earlier day's hours, and verdicts and clients in the window's language."""

from __future__ import annotations

import time
from typing import Any

from PySide6.QtWidgets import QApplication
from test_ui_usage_log import _loaded, usage_rows

from kvswitch.ui import i18n
from kvswitch.ui.control.usage_log import TrendBar
from kvswitch.ui.usage.usage_view import UsageTrend, UsageView

__all__ = ["usage_rows"]  # the fixture: four rows written by the gateway's own UsageStore


def test_the_default_period_is_the_last_24_hours_in_hourly_bars(qtbot: Any, controller: Any,
                                                                 usage_rows: None) -> None:
    view = UsageView(controller)
    qtbot.addWidget(view)
    view.resize(1000, 700)
    view.show()
    assert view.period.currentText() == "Last 24 hours"
    _loaded(qtbot, view)
    assert view.chart.bucket_s == 3600
    assert 24 <= len(view.chart.days) <= 26  # one bar an hour, the whole day long
    assert sum(bar.requests for bar in view.chart.days) == 4
    assert [view.period.itemData(i) for i in range(view.period.count())] == [1, 7, 30, 0]


def test_hour_ticks_carry_the_date_on_an_earlier_day(qtbot: Any) -> None:
    chart = UsageTrend()
    qtbot.addWidget(chart)
    chart.bucket_s = 3600.0
    midnight = time.mktime(time.strptime("2026-12-07 00:00", "%Y-%m-%d %H:%M"))
    chart.set_days([TrendBar(midnight + hour * 3600) for hour in range(-3, 3)])
    chart.now = midnight + 2.5 * 3600
    assert chart.ticks() == ["12-06 21:00", "12-06 22:00", "12-06 23:00", "00:00", "01:00", "02:00"]
    chart.bucket_s = 86400.0
    assert chart.ticks()[-1] == "12-07"


def test_verdicts_and_clients_are_in_the_window_language(qtbot: Any, controller: Any,
                                                         usage_rows: None) -> None:
    app = QApplication.instance()
    assert app is not None
    i18n.install(app, "zh_CN")
    try:
        view = UsageView(controller)
        qtbot.addWidget(view)
        view.show()
        _loaded(qtbot, view)
        log = view.request_log
        table = log.requests_table
        verdicts = {table.item(r, 8).text() for r in range(table.rowCount())}
        assert "命中" in verdicts
        assert not verdicts & {"HIT", "MISS", "COLD"}, verdicts
        assert {table.item(r, 1).text() for r in range(table.rowCount())} == {"Claude Code"}
        assert {log.sessions_table.item(r, 1).text() for r in range(log.sessions_table.rowCount())} == {
            "Claude Code"}
        combo = [log.verdict_combo.itemText(i) for i in range(1, log.verdict_combo.count())]
        assert not set(combo) & {"HIT", "PARTIAL", "MISS", "COLD"}, combo
        assert [log.verdict_combo.itemData(i) for i in range(1, 5)] == ["HIT", "PARTIAL", "MISS", "COLD"]
        assert log.client_combo.findText("Claude Code") > 0
        assert view.period.currentText() != "Last 24 hours"  # translated too
    finally:
        i18n.install(app, "en")
