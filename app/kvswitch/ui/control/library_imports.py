"""Imports for the Prompts page, as ``kvswitch prompt import`` makes them: each client's memory file, or
CC Switch's prompt rows, stored as presets (a text already stored is kept once). No Qt: the controller
runs these on a worker. Lines are the report shown in the window's message bar.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from kvswitch.core.errors import KvSwitchError, UsageError
from kvswitch.core.prompts import PromptStore, check_entry_name, decode_prompt, memory_file
from kvswitch.targets.memory_switch import MemoryWriter


def import_memory_files(paths: Any, store: PromptStore, clients: Iterable[str]) -> list[str]:
    """Each client's memory file as a preset named after the client; an unreadable one is named and
    skipped, the others still imported."""
    writer = MemoryWriter(paths, os.environ, {p.text for p in store.presets()})
    lines = []
    for client in clients:
        try:
            text, _ = writer.read(client)
            if text is None:
                continue
            text = decode_prompt(text.encode("utf-8", "surrogateescape"), memory_file(client, os.environ))
        except KvSwitchError as exc:
            lines.append(f"{client}: not imported: {exc}")
            continue
        same = store.find_text(text)
        if same is not None:
            lines.append(f"{client}: already stored as preset {same.name!r}")
            continue
        name = store.free_name(client)
        store.add(name, text, f"imported from {memory_file(client, os.environ)}")
        lines.append(f"{client}: imported as preset {name!r}")
    return lines


def import_cc_switch(store: PromptStore, rows: Iterable[Any]) -> list[str]:
    """CC Switch's prompt rows (``core.ccswitch_library.read_prompts``) as presets, named as there."""
    lines = []
    for row in rows:
        where = f"CC Switch [{row.app}: {row.name}]"
        text = decode_prompt(row.content.encode("utf-8", "surrogateescape"), where)
        same = store.find_text(text)
        if same is not None:
            lines.append(f"CC Switch {row.app} {row.name!r}: already stored as preset {same.name!r}")
            continue
        try:
            name = store.free_name(check_entry_name(row.name, "prompt preset"))
        except UsageError:
            name = store.free_name(f"cc-switch-{row.app}")
        store.add(name, text, f"imported from CC Switch ({row.app}: {row.name})")
        lines.append(f"CC Switch {row.app} {row.name!r}: imported as preset {name!r}")
    return lines
