""""Which settings matter?" in the Verify tab: ``verify --ablate`` with the real Codex 0.169 through a
profile to a real llama-server b11434, shown as the CLI's table and exported as its CSV."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from uihelpers import make_profile

from support.claude import eos_token_id
from support.clients import CODEX_VERSION, codex_binary
from support.llama import llama_server

KEY = "local-dummy-key-6161"


@pytest.mark.real_server
@pytest.mark.timeout(900)
def test_ablate_with_real_codex_shows_the_table_and_exports_csv(
        qtbot: Any, window: Any, store: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KVSWITCH_CODEX_BIN", str(codex_binary()))
    with llama_server(tmp_path / "srv", "-l", f"{eos_token_id()}+100", "--cache-ram", "0") as server:
        # one setting that has nothing to do with the cache: the subtraction must say so
        store.add(make_profile("local", base_url=server.url, api_key=KEY, model="tiny",
                               targets=["codex", "bash"], context_window=32768,
                               env={"KVSWITCH_ABLATE_NOTE": "1"}))
        window._select("local")
        assert window.controller.apply("local")
        view = window.verify_card.ablate_view
        view.client_combo.setCurrentIndex(view.client_combo.findData("codex"))
        with qtbot.waitSignal(window.controller.ablate_finished, timeout=800_000) as blocker:
            qtbot.mouseClick(view.run_button, Qt.MouseButton.LeftButton)
            assert not view.run_button.isEnabled()
            assert not window.verify_card.cancel_button.isHidden()
    report = blocker.args[0]
    assert report.client == "codex"
    assert report.baseline.client_version == CODEX_VERSION
    assert [row.setting for row in report.rows] == ["KVSWITCH_ABLATE_NOTE"]
    assert not report.rows[0].matters
    assert view.table.rowCount() == 1
    assert view.table.item(0, 0).text() == "KVSWITCH_ABLATE_NOTE=1"
    assert view.table.item(0, 5).text().startswith("does not matter")
    assert "Settings that matter: none" in view.summary_label.text()
    # the chart: without and with the setting, each the new conversation's cached share by the server
    row = report.rows[0]
    assert [(p.reuse_ratio, p.prompt_ms) for p in view.chart.points] == [
        ((m.new_conversation_cached or 0) / m.new_conversation_prompt, m.ttft_new_ms)
        for m in (row.without, row.with_it)]
    assert not view.chart.isHidden()
    view.chart.grab()
    assert window.verify_card.cancel_button.isHidden()
    assert view.run_button.isEnabled()
    assert view.export_button.isEnabled()
    written = view.export_csv(tmp_path / "ablate.csv")
    rows = list(csv.reader(written.open(encoding="utf-8")))
    assert rows[0][:4] == ["setting", "value", "in_profile", "matters"]
    assert rows[1][:4] == ["KVSWITCH_ABLATE_NOTE", "1", "True", "False"]
    assert written.read_bytes() == report.to_csv().encode("utf-8")  # exactly the CLI's --csv
