"""The sweeps in a profile's verify history, back as runs: what the window's sweep chart shows.

``kvswitch sweep`` appends one ``HistoryEntry`` per setting (``check`` "sweep", ``setting`` its flags,
``server["values"]`` the flag values) as each setting finishes, so one sweep is a run of consecutive
sweep entries. A run ends where a non-sweep entry comes, where the flags varied change, or where a
setting comes again (the next sweep of the same grid). Nothing is stored twice: this reads the same
history file the CLI and the Verify tab read.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kvswitch.verify.history import HistoryEntry, VerifyHistory


@dataclass(frozen=True)
class SweepRun:
    """One sweep: its settings in the order they were measured."""

    profile: str
    entries: tuple[HistoryEntry, ...]

    @property
    def started(self) -> str:
        return self.entries[0].time

    @property
    def flags(self) -> tuple[str, ...]:
        return _flags(self.entries[0])


def _flags(entry: HistoryEntry) -> tuple[str, ...]:
    values = entry.server.get("values") if isinstance(entry.server, dict) else None
    return tuple(sorted(values)) if isinstance(values, dict) else ()


def sweep_runs(entries: Iterable[HistoryEntry]) -> list[SweepRun]:
    """The sweeps among ``entries`` (a profile's history, oldest first), oldest first."""
    runs: list[SweepRun] = []
    current: list[HistoryEntry] = []

    def close() -> None:
        if current:
            runs.append(SweepRun(current[0].profile, tuple(current)))
            current.clear()

    for entry in entries:
        if entry.check != "sweep":
            close()
            continue
        if current and (_flags(entry) != _flags(current[0])
                        or entry.setting in {e.setting for e in current}):
            close()
        current.append(entry)
    close()
    return runs


def latest_sweep(history: VerifyHistory, profile: str) -> SweepRun | None:
    """The profile's newest sweep, or None when it was never swept (reads the file: off the GUI thread)."""
    runs = sweep_runs(history.load(profile))
    return runs[-1] if runs else None
