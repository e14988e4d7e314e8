"""The live panel's ``/metrics`` source for vLLM profiles, on the paths no vLLM is needed for: which
profiles get it, a port nobody listens on, and a real server whose page is not vLLM's (llama-server
b11434 with ``--metrics``). The vLLM path itself is tested against the real vLLM 0.32.0 in
``tests/realserver/test_real_vllm.py``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kvswitch.core.models import Profile, ProfileKind
from kvswitch.ui.logs.log_panel import LogPanel
from kvswitch.ui.logs.metrics_follower import metrics_url
from support.net import free_port

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_only_vllm_profiles_are_followed_by_their_counters() -> None:
    vllm = Profile(name="v", kind=ProfileKind.VLLM, base_url="http://127.0.0.1:8000/v1", model="tiny",
                   targets=["codex"])
    llama = Profile(name="l", kind=ProfileKind.LLAMA_CPP, base_url="http://127.0.0.1:8080", model="tiny",
                    targets=["codex"])
    assert metrics_url(vllm) == "http://127.0.0.1:8000/metrics"
    assert metrics_url(llama) is None
    assert metrics_url(None) is None


def test_a_closed_port_is_a_waiting_status_and_no_request(qtbot: Any) -> None:
    panel = LogPanel()
    qtbot.addWidget(panel)
    url = f"http://127.0.0.1:{free_port()}/metrics"
    panel.bind(None, "vllm", url)
    try:
        assert "Reading the server's counters" in panel.status_label.text()
        qtbot.waitUntil(lambda: panel.status_label.text() == f"waiting for {url}", timeout=20_000)
        assert panel.events_model.rowCount() == 0
        panel.bind(None, "vllm", url)  # the same source again: still following, nothing restarted
        assert panel.status_label.text() == f"waiting for {url}"
    finally:
        panel.stop()


@pytest.mark.real_server
def test_a_page_that_is_not_vllms_says_so(qtbot: Any, tmp_path: Path) -> None:
    from support.llama import llama_server  # noqa: PLC0415

    with llama_server(tmp_path) as server:
        url = f"{server.url}/metrics"
        panel = LogPanel()
        qtbot.addWidget(panel)
        panel.bind(None, "vllm", url)
        try:
            qtbot.waitUntil(lambda: "has no request counters" in panel.status_label.text(),
                            timeout=30_000)
            assert panel.events_model.rowCount() == 0
        finally:
            panel.stop()


def test_a_log_with_a_line_per_request_stops_the_counters(qtbot: Any, tmp_path: Path) -> None:
    """A vLLM profile whose log has per-request lines (LMCache's in-process connector) would list each
    request twice, once from the log and once from ``/metrics``: the first logged request stops the
    counters, and the status says so."""
    from kvswitch.core.models import LogSource  # noqa: PLC0415

    lines = [line for line in (FIXTURES / "pasted-lines" / "lmcache_vllm.log").read_text().splitlines()
             if "LMCache hit tokens" in line]
    assert lines
    log_file = tmp_path / "vllm.log"
    log_file.write_text("")
    panel = LogPanel()
    qtbot.addWidget(panel)
    panel.bind(LogSource(kind="file", path=str(log_file)), "vllm", f"http://127.0.0.1:{free_port()}/metrics")
    try:
        assert panel._metrics is not None
        assert panel._metrics.alive
        qtbot.waitUntil(lambda: "following" in panel.status_label.text(), timeout=10_000)
        with log_file.open("a", encoding="utf-8") as handle:
            handle.write("\n".join(lines) + "\n")
        qtbot.waitUntil(lambda: panel.events_model.rowCount() == len(lines), timeout=20_000)
        qtbot.waitUntil(lambda: panel._metrics is None, timeout=5_000)
        assert "no longer read" in panel.status_label.text()
        assert {event.server for event in panel.events_model.events()} == {"lmcache"}
    finally:
        panel.stop()
