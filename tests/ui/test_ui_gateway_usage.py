"""The gateway in the window: the shell starts it for a gateway profile and restarts it when it died, the
tray says where it runs and who serves Claude Code, the Usage tab shows the requests that went through
it with a real llama-server b11434's own token counts (its ``/metrics`` deltas), and the low-reuse alert
fires from the gateway's usage rows.

Real components: the gateway on loopback in the window's process, a real llama-server (tiny model), the
SQLite usage store in a temporary HOME, real windows offscreen."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from PySide6.QtWidgets import QApplication
from uihelpers import make_profile

from kvswitch.core.gateway_config import ensure_token, read_routes, write_routes
from kvswitch.ui.shell.shell import AppShell
from support.llama import RunningServer, llama_server
from support.net import free_port

pytestmark = pytest.mark.real_server


def _metrics(server: RunningServer) -> tuple[int, int]:
    """(prompt tokens processed, prompt tokens served from the cache) so far, by the server's counters."""
    text = httpx.get(f"{server.url}/metrics", timeout=10).text
    found = dict(re.findall(r"^(llamacpp:prompt_tokens(?:_cached)?_total) (\S+)$", text, re.M))
    return (int(float(found["llamacpp:prompt_tokens_total"])),
            int(float(found["llamacpp:prompt_tokens_cached_total"])))


def _ask(url: str, token: str, text: str) -> dict[str, Any]:
    body = {"model": "tiny", "max_tokens": 4, "messages": [{"role": "user", "content": text}]}
    answer = httpx.post(url + "/v1/messages", json=body, headers={"x-api-key": token}, timeout=120,
                        trust_env=False)
    assert answer.status_code == 200, answer.text[:500]
    return dict(answer.json())


@pytest.fixture
def shell(qtbot: Any, paths: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(QApplication, "quit", staticmethod(lambda: None))
    routes = read_routes(paths)
    routes.port = free_port()  # never the default port another gateway on this machine may hold
    write_routes(paths, routes)
    app_shell = AppShell(paths, None, tray_available=True)
    qtbot.addWidget(app_shell.window)
    yield app_shell
    app_shell.shutdown()


def _wait_running(qtbot: Any, controller: Any) -> dict[str, Any]:
    def running() -> None:
        assert controller.gateway_status.get("running"), controller.gateway_status

    controller.check_gateway()
    qtbot.waitUntil(running, timeout=20000)
    return dict(controller.gateway_status)


def test_gateway_started_restarted_and_usage_shown(qtbot: Any, shell: Any, paths: Any,
                                                   tmp_path: Path) -> None:
    controller = shell.controller
    with llama_server(tmp_path / "srv") as server:
        controller.store.add(make_profile("local", base_url=server.url, model="tiny", via_gateway=True,
                                          env={"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"}))
        assert controller.apply("local")
        controller.watch_gateway(interval_ms=60000)
        status = _wait_running(qtbot, controller)
        assert status["started_here"] is True
        assert status["routes"] == {"claude": "local"}

        # requests through the window's gateway: the usage tab sums them to the server's own counts
        token = ensure_token(paths)
        before = _metrics(server)
        prefix = "Count the apples in this basket. " * 60
        for turn in range(3):
            _ask(status["client_urls"]["claude"], token, prefix + f"turn {turn}")
        after = _metrics(server)

        shell.tray._update_tooltip()
        tooltip = shell.tray.icon.toolTip()
        assert f"Gateway: running at {status['url']}" in tooltip
        assert "Claude Code → local" in tooltip

        shell.window.build_tabs()
        view = shell.window.usage_view
        shell.window.show()
        shell.window.tabs.setCurrentWidget(view)  # shown: it loads at once, then every REFRESH_MS
        assert view.timer.isActive()

        def three_rows() -> None:  # the gateway writes its rows on its own thread: poll until there
            view.refresh()
            assert len(view.loaded_rows) == 3
            assert view.log is not None
            assert len(view.log.requests) == 3  # the request log read them too

        qtbot.waitUntil(three_rows, timeout=10000)
        local = view.summary["local"]
        assert local["requests"] == 3
        # the server counts what it processed and, apart, what it took from the cache
        assert int(local["input_tokens"] - local["cached_tokens"]) == after[0] - before[0]
        assert int(local["cached_tokens"]) == after[1] - before[1]
        assert local["cached_tokens"] > 0  # turns 2 and 3 reuse the shared prefix
        assert view.profile_table.rowCount() == 1
        assert view.profile_table.item(0, 0).text() == "local"
        assert view.profile_table.item(0, 1).text() == "3"
        assert view.day_table.rowCount() == 1
        assert sum(bar.requests for bar in view.chart.days) == 3  # over the whole period
        assert "3 requests" in view.totals_label.text()
        view.grab()  # the trend chart paints with real rows

        # the gateway dies under the window: the next check starts a new one on the same address
        from kvswitch.gateway import control

        dead = controller._gateway_server
        control.stop_background(paths, dead)
        controller.gateway_status = {}
        again = _wait_running(qtbot, controller)
        assert controller._gateway_server is not dead
        assert again["url"] == status["url"]
        assert _ask(again["client_urls"]["claude"], token, "hello")["type"] == "message"


def test_low_reuse_alert_fires_from_gateway_usage(qtbot: Any, shell: Any, paths: Any, tmp_path: Path) -> None:
    """Three large prompts with nothing in common: the server caches none of them, the rows say so,
    and the tray is told (this is how it works for a cloud vendor, whose log KV Switch cannot read)."""
    controller = shell.controller
    with llama_server(tmp_path / "srv") as server:
        controller.store.add(make_profile("local", base_url=server.url, model="tiny", via_gateway=True,
                                          env={"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"}))
        assert controller.apply("local")
        controller.watch_gateway(interval_ms=60000)
        status = _wait_running(qtbot, controller)
        token = ensure_token(paths)
        before = _metrics(server)
        for n, word in enumerate(("pear", "plum", "fig")):
            _ask(status["client_urls"]["claude"], token, f"{n} " + f"{word} and {word} again, " * 300)
        after = _metrics(server)
        processed, cached = after[0] - before[0], after[1] - before[1]
        assert processed > 3 * 1024
        assert cached < 0.5 * (processed + cached)  # the server's word: the prompts were mostly missed
        alerts: list[tuple[str, str]] = []
        controller.alert_raised.connect(lambda title, text: alerts.append((title, text)))
        controller.poll_gateway_usage()
        qtbot.waitUntil(lambda: bool(alerts), timeout=10000)
        title, text = alerts[0]
        assert title == "Prompt cache keeps missing"
        assert "through the gateway (local)" in text


def test_tray_names_the_fallback_serving_when_the_routed_server_is_down(
        qtbot: Any, shell: Any, paths: Any, tmp_path: Path) -> None:
    """A's server is not running (a refused connection, as a stopped server gives): the window's gateway
    serves Claude Code from A's fallback B, and the tray says which backend is serving."""
    controller = shell.controller
    with llama_server(tmp_path / "srv") as server:
        safe = {"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"}
        controller.store.add(make_profile("B", base_url=server.url, model="tiny", via_gateway=True, env=safe))
        controller.store.add(make_profile("A", base_url=f"http://127.0.0.1:{free_port()}", model="tiny",
                                          via_gateway=True, fallbacks=["B"], env=safe))
        assert controller.apply("A")
        controller.watch_gateway(interval_ms=60000)
        status = _wait_running(qtbot, controller)
        answer = _ask(status["client_urls"]["claude"], ensure_token(paths), "hello")
        assert answer["type"] == "message"
        controller.gateway_status = {}
        status = _wait_running(qtbot, controller)
        assert status["routes"] == {"claude": "A"}
        assert status["serving"] == {"claude": "B"}
        tooltip = shell.tray.icon.toolTip()
        assert "Claude Code → B (fallback for A)" in tooltip
        shell.tray.menu.aboutToShow.emit()
        assert shell.tray.gateway_action is not None
        assert "Claude Code → B (fallback for A)" in shell.tray.gateway_action.text()
