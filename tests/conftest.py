"""Every test runs in a temporary HOME: no test can touch the real user's configs.

Under ``CI=true`` a skipped test fails unless it cannot apply here (``support.require.not_applicable``)
or is a documented parse-only line: CI installs every real component, so any other skip would hide one.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from support.require import NOT_APPLICABLE, PARSE_ONLY, under_ci


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return reason.removeprefix("Skipped: ")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Under CI, a skip without an allowed reason becomes a failure that names it."""
    outcome = yield
    report: pytest.TestReport = outcome.get_result()  # type: ignore[attr-defined]
    if not (report.skipped and under_ci()) or hasattr(report, "wasxfail"):
        return
    reason = _skip_reason(report)
    if reason.startswith(NOT_APPLICABLE) or PARSE_ONLY in reason:
        return
    report.outcome = "failed"
    report.longrepr = (f"CI=true: {item.nodeid} was skipped ({reason}); under CI only a test that cannot "
                       "apply here (support.require.not_applicable) or a documented parse-only line may skip")


@pytest.fixture(autouse=True)
def _collected_on_the_gui_thread(request: pytest.FixtureRequest) -> Iterator[None]:
    """In a test with Qt (``qtbot``/``qapp``), cycles are collected on the GUI thread only, as in the
    app (``kvswitch.ui.gui_collector``): a widget or controller an earlier test left is never freed by a
    worker's allocation (Qt objects destroyed off their thread crash the run). Set up before the Qt
    tests' own fixtures and torn down after them (after the thread check has joined the workers): what
    the test left is collected here, then CPython gets collection back."""
    if not {"qtbot", "qapp"} & set(request.fixturenames):
        yield
        return
    request.getfixturevalue("qapp")
    from kvswitch.ui.gui_collector import GuiThreadCollector  # noqa: PLC0415 - Qt tests only

    collector = GuiThreadCollector()
    collector.start()
    yield
    collector.stop()


@pytest.fixture(autouse=True)
def fake_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("USERPROFILE", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("APPDATA", str(home / "AppData" / "Roaming"))
    monkeypatch.setenv("LOCALAPPDATA", str(home / "AppData" / "Local"))
    monkeypatch.setenv("KVSWITCH_CONFIG_DIR", str(home / ".config" / "kvswitch"))
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "ZDOTDIR", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN",
                "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    return home


FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture
def fixtures_dir() -> Path:
    """The real captures committed under ``tests/fixtures`` (see its README for how each was made)."""
    return FIXTURES
