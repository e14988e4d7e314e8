"""The sweep chart of a sweep that started a cache tier (``kvswitch sweep --tier-cmd``): under the bars,
each measured setting's L1 hit, L2 hit and computed tokens as the sweep's own history writer stored them;
a sweep without a tier shows no such line. (The real LMCache sweep that writes such rows is
``tests/realserver/test_real_lmcache_sweep.py``, which checks ``tier_numbers`` against its rows.)"""

from __future__ import annotations

import shlex
import socket
import sys
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from kvswitch.cli import build_parser, main
from kvswitch.core.models import Profile, ProfileKind
from kvswitch.verify import sweep
from kvswitch.verify.history import VerifyHistory
from support.net import free_port


def _store(paths: Any, rows: list[sweep.SweepRow]) -> None:
    profile = Profile(name="lm", kind=ProfileKind.VLLM, base_url="http://127.0.0.1:8000", model="tiny",
                      targets=["bash"])
    history = VerifyHistory(paths.data_dir / "verify-history")
    for row in rows:
        history.append(sweep.history_entry(profile, row, None))


def _row(setting: str, status: str = sweep.MEASURED, **numbers: Any) -> sweep.SweepRow:
    return sweep.SweepRow(setting=setting, values={"lmcache.chunk-size": setting.split()[-1]},
                          command="vllm serve m", status=status, verdict="HIT" if status == sweep.MEASURED
                          else None, **numbers)


def test_a_tier_sweep_lists_each_settings_tokens_by_tier(qtbot: Any, controller: Any, paths: Any) -> None:
    from kvswitch.ui.verify.sweep_chart import SweepView  # noqa: PLC0415

    tier = {"tier_command": "lmcache server --port 6555"}
    _store(paths, [
        _row("lmcache.chunk-size 128", reuse_ratio=0.98, l1_hit_tokens=4992, l2_hit_tokens=0,
             computed_tokens=95, **tier),
        _row("lmcache.chunk-size 256", status=sweep.FAILED_TO_START, reason="LMCache: exited", **tier),
    ])
    view = SweepView(controller)
    qtbot.addWidget(view)
    view.reload("lm")
    qtbot.waitUntil(lambda: view.chart.run is not None, timeout=30_000)
    assert view.tiers.text() == "lmcache.chunk-size 128: L1 hit 4,992, L2 hit 0, computed 95 tokens"
    assert not view.tiers.isHidden()


def test_a_sweep_without_a_tier_has_no_tier_line(qtbot: Any, controller: Any, paths: Any) -> None:
    from kvswitch.ui.verify.sweep_chart import SweepView  # noqa: PLC0415

    _store(paths, [_row("-np 1", reuse_ratio=0.99)])
    view = SweepView(controller)
    qtbot.addWidget(view)
    view.reload("lm")
    qtbot.waitUntil(lambda: view.chart.run is not None, timeout=30_000)
    assert view.tiers.text() == ""
    assert view.tiers.isHidden()


def test_the_dialog_passes_the_tier_command_and_a_busy_tier_port_is_refused(
    qtbot: Any, controller: Any, paths: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The window's sweep takes the cache tier's command too: its terminal equivalent has ``--tier-cmd``,
    and a tier port another program holds stops the sweep before anything starts, as the CLI does."""
    from kvswitch.ui.verify.sweep_dialog import SweepDialog  # noqa: PLC0415

    port = free_port()
    assert main(["profile", "add", "local", "--kind", "vllm", "--base-url", f"http://127.0.0.1:{port}",
                 "--model", "tiny", "--target", "bash"]) == 0
    capsys.readouterr()
    marker = tmp_path / "started"
    server = shlex.join([sys.executable, "-c", f"open({str(marker)!r}, 'w')", "--port", str(port)])
    dialog = SweepDialog(controller, "local")
    qtbot.addWidget(dialog)
    assert "--http-port" in dialog.tier_edit.placeholderText()
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        taken = listener.getsockname()[1]
        tier = f"lmcache server --port {free_port()} --http-port {taken}"
        dialog.server_edit.setText(server)
        dialog.tier_edit.setText(tier)
        dialog.vary_edit.setPlainText("lmcache.chunk-size=128,256")
        words = shlex.split(dialog.command_line())
        assert words[words.index("--tier-cmd") + 1] == tier
        assert build_parser().parse_args(words[1:]).tier_cmd == tier  # what the CLI would run
        qtbot.mouseClick(dialog.start_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: not dialog.running, timeout=30_000)
    assert f"already listening on 127.0.0.1:{taken}" in dialog.step_label.text()
    assert not marker.exists()
