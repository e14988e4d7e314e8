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
