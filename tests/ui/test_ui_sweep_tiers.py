"""The sweep chart of a sweep that started a cache tier (``kvswitch sweep --tier-cmd``): under the bars,
each measured setting's L1 hit, L2 hit and computed tokens as the sweep's own history writer stored them;
a sweep without a tier shows no such line. (The real LMCache sweep that writes such rows is
``tests/realserver/test_real_lmcache_sweep.py``, which checks ``tier_numbers`` against its rows.)"""

from __future__ import annotations

from typing import Any

from kvswitch.core.models import Profile, ProfileKind
from kvswitch.verify import sweep
from kvswitch.verify.history import VerifyHistory


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
