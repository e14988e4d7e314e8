"""The live log panel on a real temporary log file: highlighted lines, per-request rows, filter, vanish."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QGuiApplication
from uihelpers import make_profile

from kvswitch.ui.logs.events_model import COL_CACHED, COL_VERDICT
from kvswitch.ui.profiles.diff_dialog import ApplyDialog
from kvswitch.ui.widgets import theme

DEMO_LOG = Path(__file__).resolve().parent / "data" / "llama_server_demo.log"


@pytest.fixture
def demo_lines() -> list[str]:
    return DEMO_LOG.read_text().splitlines()


@pytest.fixture
def followed(qtbot: Any, window: Any, store: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The active profile follows ``server.log`` (created empty)."""
    log_file = tmp_path / "server.log"
    log_file.write_text("")
    store.add(make_profile("local", env={"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"},
                           log={"kind": "file", "path": str(log_file)}))
    monkeypatch.setattr(ApplyDialog, "ask", staticmethod(lambda *a: True))
    window._select("local")
    assert window.apply_profile("local")
    assert window.log_panel.following
    qtbot.waitUntil(lambda: "following" in window.log_panel.status_label.text(), timeout=10000)
    return log_file


def _append(path: Path, lines: list[str]) -> None:
    with path.open("a") as handle:
        handle.write("\n".join(lines) + "\n")


def _block_colors(panel: Any, needle: str) -> set[str]:
    block = panel.view.document().begin()
    while block.isValid():
        if needle in block.text():
            return {r.format.foreground().color().name() for r in block.layout().formats()}
        block = block.next()
    raise AssertionError(f"{needle!r} not shown")


def test_appended_lines_are_highlighted_and_tabulated(qtbot: Any, window: Any, followed: Path,
                                                      demo_lines: list[str]) -> None:
    panel = window.log_panel
    _append(followed, demo_lines[:23])  # cold request, then a hit
    qtbot.waitUntil(lambda: panel.events_model.rowCount() == 2, timeout=10000)
    model = panel.events_model
    assert model.index(0, COL_VERDICT).data().startswith("cold")  # nothing to reuse yet: not a miss
    assert model.index(1, COL_VERDICT).data().startswith("hit")
    assert model.index(1, COL_CACHED).data() == "1,536"
    assert "prompt eval time" in panel.shown_text()
    timing = _block_colors(panel, "task 9 | prompt eval time")
    assert theme.timing_color().name() in timing
    assert window.controller.cache_state == "hit"

    _append(followed, demo_lines[23:30])  # the changed prompt: a miss
    qtbot.waitUntil(lambda: model.rowCount() == 3, timeout=10000)
    assert model.index(2, COL_VERDICT).data().startswith("miss")
    assert window.controller.cache_state == "miss"


def test_filter_pause_search_and_copy(qtbot: Any, window: Any, followed: Path, demo_lines: list[str]) -> None:
    panel = window.log_panel
    _append(followed, demo_lines)
    qtbot.waitUntil(lambda: panel.events_model.rowCount() == 13, timeout=10000)
    assert "llama_server: model loaded" in panel.shown_text()
    panel.cache_only_box.setChecked(True)
    assert "model loaded" not in panel.shown_text()
    assert "prompt eval time" in panel.shown_text()
    panel.cache_only_box.setChecked(False)
    assert "model loaded" in panel.shown_text()

    panel.pause_box.setChecked(True)
    _append(followed, ["0.01.000.000 I srv  llama_server: a line written while paused"])
    qtbot.waitUntil(lambda: any("while paused" in line.text for line in panel._history), timeout=10000)
    assert "while paused" not in panel.shown_text()
    panel.pause_box.setChecked(False)
    assert "while paused" in panel.shown_text()

    assert panel.find_text("task 22")
    assert "task 22" in panel.view.textCursor().selectedText()
    panel.copy_lines()
    assert QGuiApplication.clipboard().text() == "task 22"


def test_follow_scrolls_only_when_at_bottom(qtbot: Any, window: Any, followed: Path,
                                            demo_lines: list[str]) -> None:
    panel = window.log_panel
    window.tabs.setCurrentWidget(panel)
    _append(followed, demo_lines * 3)
    qtbot.waitUntil(lambda: panel.view.document().blockCount() >= 300, timeout=10000)
    bar = panel.view.verticalScrollBar()
    assert bar.maximum() > 0
    qtbot.waitUntil(lambda: bar.value() == bar.maximum(), timeout=2000)
    bar.setValue(0)  # the user scrolls up to read
    _append(followed, demo_lines)
    qtbot.waitUntil(lambda: panel.view.document().blockCount() >= 400, timeout=10000)
    assert bar.value() == 0
    bar.setValue(bar.maximum())  # back at the bottom: following resumes
    _append(followed, demo_lines)
    qtbot.waitUntil(lambda: panel.view.document().blockCount() >= 500, timeout=10000)
    qtbot.waitUntil(lambda: bar.value() == bar.maximum(), timeout=2000)


def test_vanished_file_shows_waiting(qtbot: Any, window: Any, followed: Path, demo_lines: list[str]) -> None:
    panel = window.log_panel
    _append(followed, demo_lines[:8])
    qtbot.waitUntil(lambda: "model loaded" in panel.shown_text(), timeout=10000)
    followed.unlink()
    qtbot.waitUntil(lambda: "waiting for file" in panel.status_label.text(), timeout=10000)
    _append(followed, demo_lines[8:16])
    qtbot.waitUntil(lambda: panel.events_model.rowCount() == 1, timeout=10000)


def test_profile_without_log_source_says_so(qtbot: Any, window: Any) -> None:
    window.log_panel.bind(None, None)
    assert "No log source" in window.log_panel.status_label.text()
    assert not window.log_panel.following


def test_memory_is_bounded(qtbot: Any, window: Any) -> None:
    from kvswitch.logs import LogAnalyzer
    from kvswitch.ui.logs import log_panel as module

    panel = window.log_panel
    analyzer = LogAnalyzer("llama.cpp")
    lines = DEMO_LOG.read_text().splitlines()
    batch_lines = []
    events = []
    for number in range(module.MAX_KEPT_LINES // len(lines) + 20):
        for offset, text in enumerate(lines):
            result = analyzer.feed(text, number * len(lines) + offset)
            batch_lines.append(result.line)
            events.extend(result.events)
    from kvswitch.ui.logs.log_worker import LogBatch

    for start in range(0, len(batch_lines), 1000):
        panel._flush(LogBatch(batch_lines[start:start + 1000], []))
    panel._flush(LogBatch([], events * 40))
    assert len(panel._history) == module.MAX_KEPT_LINES
    assert panel.view.document().blockCount() <= module.MAX_VIEW_LINES
    assert panel.events_model.rowCount() == module.MAX_EVENTS


def test_highlighting_many_lines_keeps_none_alive(qtbot: Any) -> None:
    """PySide6 6.12 loses a reference to None per void call; kvswitch.ui gives None a surplus."""
    import sys

    from PySide6.QtWidgets import QPlainTextEdit

    from kvswitch.ui import qtcompat
    from kvswitch.ui.logs.log_highlighter import LogHighlighter

    view = QPlainTextEdit()
    qtbot.addWidget(view)
    LogHighlighter(view.document(), "llama.cpp")
    text = "\n".join(DEMO_LOG.read_text().splitlines() * 60)
    view.setPlainText(text)  # tens of thousands of setFormat calls: aborted the interpreter before
    assert sys.getrefcount(None) > 1 << 30 or sys.version_info >= (3, 12) \
        or qtcompat.none_refs_lost_per_call() == 0


def test_emitting_many_signals_keeps_true_alive(qtbot: Any) -> None:
    """PySide6 6.12 loses a reference to True per Signal.emit; kvswitch.ui gives True a surplus."""
    import sys

    from kvswitch.ui import qtcompat
    from kvswitch.ui.logs.log_panel import LogPanel

    panel = LogPanel()
    qtbot.addWidget(panel)
    seen: list[int] = []
    panel.lines_appended.connect(seen.append)
    for _ in range(5000):  # more than True's own count: aborted the interpreter before
        panel.lines_appended.emit(1)
    assert len(seen) == 5000
    assert sys.getrefcount(True) > 1 << 30 or sys.version_info >= (3, 12) \
        or qtcompat.true_refs_lost_per_emit() == 0


def _block(task: int, prompt: int, new: int, gen: int = 8) -> list[str]:
    """One llama-server request as b11434 logs it: ``new`` tokens evaluated of a ``prompt``-token prompt."""
    slot = f"0.09.000.000 I slot launch_slot_: id  0 | task {task} |"
    head = f"0.09.000.000 I slot print_timing: id  0 | task {task} |"
    release = f"0.09.000.000 I slot      release: id  0 | task {task} |"
    return [
        f"{slot} processing task, is_child = 0",
        f"{head} prompt eval time =      50.00 ms /  {new} tokens (    0.05 ms per token, 19416.98 "
        "tokens per second)",
        f"{head}        eval time =      10.50 ms /     {gen} tokens (    1.50 ms per token,   666.60 "
        "tokens per second)",
        f"{head}       total time =      60.50 ms /  {new + gen} tokens",
        f"{release} stop processing: n_tokens = {prompt + gen - 1}, truncated = 0",
    ]


def test_cold_and_shared_prefix_are_not_red(qtbot: Any, window: Any, followed: Path,
                                            demo_lines: list[str]) -> None:
    """First sight of a prompt: cold. A shorter prompt (a new conversation) that reused its first 1,000
    tokens: shared prefix. A prompt that grew and lost everything: still a miss, red."""
    from PySide6.QtCore import Qt

    panel = window.log_panel
    _append(followed, demo_lines[:23] + _block(100, 1200, 200) + _block(101, 1300, 1300))
    model = panel.events_model
    qtbot.waitUntil(lambda: model.rowCount() == 4, timeout=10000)
    texts = [model.index(row, COL_VERDICT).data() for row in range(4)]
    assert texts == ["cold 0%", "hit 99%", "shared prefix 83%", "miss 0%"]
    neutral = theme.state_color("unknown").name()
    colors = [model.index(row, COL_VERDICT).data(Qt.ItemDataRole.ForegroundRole).name() for row in range(4)]
    assert colors == [neutral, theme.state_color("hit").name(), neutral, theme.state_color("miss").name()]
    # the chart draws the same display verdicts; the engine's own verdicts are unchanged
    assert [p.verdict for p in model.points()] == ["cold", "hit", "shared_prefix", "miss"]
    assert [e.verdict for e in model.events()] == ["miss", "hit", "partial", "miss"]
    panel.chart.repaint()


def test_low_reuse_in_a_row_raises_one_tray_alert_naming_the_cause(
        qtbot: Any, window: Any, followed: Path, demo_lines: list[str],
        caplog: pytest.LogCaptureFixture) -> None:
    from kvswitch.ui.shell.tray import TrayIcon

    tray = TrayIcon(window.controller)  # not shown offscreen: its notifications go to the log
    alerts: list[tuple[str, str]] = []
    window.controller.alert_raised.connect(lambda title, text: alerts.append((title, text)))
    panel = window.log_panel
    # cold, hit, then two misses: not yet three in a row
    _append(followed, demo_lines[:23] + _block(101, 1600, 1600) + _block(102, 1700, 1700))
    qtbot.waitUntil(lambda: panel.events_model.rowCount() == 4, timeout=10000)
    assert alerts == []
    caplog.set_level("INFO", logger="kvswitch.ui.shell.tray")
    _append(followed, _block(103, 1800, 1800))
    qtbot.waitUntil(lambda: len(alerts) == 1, timeout=10000)
    title, text = alerts[0]
    assert title == "Prompt cache keeps missing"
    assert text.startswith("The last 3 requests reused less than 50 % of their prompt. Likely cause: ")
    assert "reused nothing from the cache" in text  # the log engine's diagnosis
    assert any("Prompt cache keeps missing" in r.getMessage() for r in caplog.records)
    # three more within the minute: throttled, no second alert
    _append(followed, _block(104, 1900, 1900) + _block(105, 2000, 2000) + _block(106, 2100, 2100))
    qtbot.waitUntil(lambda: panel.events_model.rowCount() == 8, timeout=10000)
    qtbot.wait(300)
    assert len(alerts) == 1
    tray.hide()


def test_alerts_switched_off_in_settings_stay_silent(qtbot: Any, window: Any, followed: Path,
                                                     demo_lines: list[str]) -> None:
    controller = window.controller
    controller.save_settings(controller.settings.model_copy(update={"reuse_alerts": False}))
    alerts: list[str] = []
    controller.alert_raised.connect(lambda _title, text: alerts.append(text))
    panel = window.log_panel
    misses = [line for task in (201, 202, 203) for line in _block(task, 1600, 1600)]
    _append(followed, demo_lines[:23] + misses)
    qtbot.waitUntil(lambda: panel.events_model.rowCount() == 5, timeout=10000)
    qtbot.wait(300)
    assert alerts == []


def test_alert_throttle_and_expected_requests() -> None:
    from kvswitch.logs.model import make_event
    from kvswitch.ui.control.log_alerts import THROTTLE_S, ReuseAlerts

    now = [1000.0]
    alerts = ReuseAlerts(threshold=0.5, requests=3, clock=lambda: now[0])

    def miss(line: int) -> Any:
        return make_event(server="llama.cpp", cached=0, new=2000, first_line=line, last_line=line, slot=0)

    assert alerts.feed(miss(1), "cold") is None  # expected: neither counts nor breaks a run
    assert alerts.feed(miss(2), "miss") is None
    assert alerts.feed(miss(3), "shared_prefix") is None
    assert alerts.feed(miss(4), "miss") is None
    assert alerts.feed(miss(5), "miss") is not None
    for line in (6, 7, 8):
        assert alerts.feed(miss(line), "miss") is None  # within the minute
    now[0] += THROTTLE_S
    hit = make_event(server="llama.cpp", cached=1900, new=100, first_line=9, last_line=9, slot=0)
    assert alerts.feed(hit, "hit") is None  # a hit breaks the run
    assert [alerts.feed(miss(line), "miss") is not None for line in (10, 11, 12)] == [False, False, True]
