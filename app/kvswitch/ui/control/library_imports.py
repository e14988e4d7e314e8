"""The Prompts page's import report: what ``targets.prompt_imports`` (the same imports ``kvswitch prompt
import`` makes) did, one line per memory file or CC Switch row for the window's message bar. No Qt: the
controller runs these on a worker.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kvswitch.core.prompts import PromptStore
from kvswitch.targets.prompt_imports import import_cc_switch_rows
from kvswitch.targets.prompt_imports import import_memory_files as store_memory_files


def import_memory_files(paths: Any, store: PromptStore, clients: Iterable[str]) -> list[str]:
    """Each client's memory file as a preset named after the client; an unreadable one is named and
    skipped, the others still imported."""
    lines = []
    for done in store_memory_files(paths, store, clients):
        if done.problem:
            lines.append(f"{done.client}: not imported: {done.problem}")
        elif done.new:
            lines.append(f"{done.client}: imported as preset {done.preset!r}")
        else:
            lines.append(f"{done.client}: already stored as preset {done.preset!r}")
    return lines


def import_cc_switch(store: PromptStore, rows: Iterable[Any]) -> list[str]:
    """CC Switch's prompt rows (``core.ccswitch_library.read_prompts``) as presets, named as there."""
    lines = []
    for done in import_cc_switch_rows(store, rows):
        verb = "imported as preset" if done.new else "already stored as preset"
        lines.append(f"CC Switch {done.row.app} {done.row.name!r}: {verb} {done.preset!r}")
    return lines
