"""Sweeps read back from the verify history as runs (what the window's sweep chart draws), from rows
written by the sweep's own history writer (``sweep.history_entry`` + ``VerifyHistory.append``)."""

from __future__ import annotations

from pathlib import Path

from kvswitch.core.models import Profile, ProfileKind
from kvswitch.verify import sweep
from kvswitch.verify.history import HistoryEntry, VerifyHistory
from kvswitch.verify.sweep_history import latest_sweep, sweep_runs

PROFILE = Profile(name="local", kind=ProfileKind.LLAMA_CPP, base_url="http://127.0.0.1:8080", model="tiny",
                  targets=["bash"])


def _row(values: dict[str, str], verdict: str, ratio: float) -> tuple[sweep.SweepRow, sweep.Measurement]:
    setting = ", ".join(f"{flag} {value}" for flag, value in values.items())
    row = sweep.SweepRow(setting=setting, values=values, command=f"llama-server {setting}",
                         status=sweep.MEASURED, verdict=verdict, reuse_ratio=ratio,
                         cached_tokens=int(ratio * 1000), prompt_tokens=1000, ttft_cold_ms=900.0,
                         ttft_warm_ms=900.0 * (1 - ratio) + 10)
    return row, sweep.Measurement(verdict=verdict)


def _store(store: VerifyHistory, *rows: tuple[sweep.SweepRow, sweep.Measurement]) -> None:
    for row, measured in rows:
        store.append(sweep.history_entry(PROFILE, row, measured))


def test_consecutive_rows_of_one_grid_are_one_run_and_a_repeat_starts_the_next(tmp_path: Path) -> None:
    store = VerifyHistory(tmp_path)
    first = [_row({"-np": "1"}, "MISS", 0.0), _row({"-np": "4"}, "HIT", 0.99)]
    _store(store, *first)
    store.append(HistoryEntry(time="2026-12-01T10:00:00+00:00", profile="local", check="synthetic",
                              verdict="HIT"))
    again = [_row({"-np": "1"}, "MISS", 0.01), _row({"-np": "4"}, "HIT", 0.98)]
    _store(store, *again)
    _store(store, _row({"-np": "1"}, "MISS", 0.02))  # the same grid once more: a new run
    runs = sweep_runs(store.load("local"))
    assert [[e.setting for e in run.entries] for run in runs] == [["-np 1", "-np 4"], ["-np 1", "-np 4"],
                                                                  ["-np 1"]]
    assert [e.reuse_ratio for e in runs[1].entries] == [0.01, 0.98]
    assert runs[0].flags == ("-np",)
    newest = latest_sweep(store, "local")
    assert newest is not None
    assert [e.reuse_ratio for e in newest.entries] == [0.02]


def test_a_different_grid_is_a_different_run_and_no_sweep_is_none(tmp_path: Path) -> None:
    store = VerifyHistory(tmp_path)
    assert latest_sweep(store, "local") is None
    _store(store, _row({"-np": "1"}, "MISS", 0.0), _row({"--cache-ram": "0"}, "MISS", 0.0),
           _row({"--cache-ram": "default"}, "HIT", 0.97))
    runs = sweep_runs(store.load("local"))
    assert [run.flags for run in runs] == [("-np",), ("--cache-ram",)]
    assert [len(run.entries) for run in runs] == [1, 2]
