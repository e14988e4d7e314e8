"""Storing texts found elsewhere as prompt presets: each client's memory file, or CC Switch's prompt rows.

``kvswitch prompt import`` and the window's Prompts page both import through here, so a text already
stored is kept once, names are chosen and an unreadable memory file is skipped the same way in both;
each caller only words the outcome (the command's lines or JSON, the window's message bar).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from kvswitch.core.ccswitch_library import CcPrompt
from kvswitch.core.errors import KvSwitchError, UsageError
from kvswitch.core.paths import AppPaths
from kvswitch.core.prompts import PromptStore, check_entry_name, decode_prompt, memory_file
from kvswitch.targets.memory_switch import MemoryWriter


@dataclass(frozen=True)
class MemoryImport:
    """One client's memory file: the preset holding its text (``new`` when stored now), or ``problem``
    (why it could not be read) with no preset."""

    client: str
    preset: str = ""
    new: bool = False
    problem: str = ""


@dataclass(frozen=True)
class RowImport:
    """One CC Switch prompt row and the preset holding its text (``new`` when stored now)."""

    row: CcPrompt
    preset: str
    new: bool


def import_memory_files(paths: AppPaths, store: PromptStore, clients: Iterable[str],
                        name: str | None = None) -> list[MemoryImport]:
    """Each client's memory file as a preset (``name``, or one free name after the client); clients
    without a file are left out, an unreadable one is reported and the others still imported."""
    writer = MemoryWriter(paths, os.environ, {p.text for p in store.presets()})
    done = []
    for client in clients:
        try:
            text, _ = writer.read(client)
            if text is None:
                continue
            where = memory_file(client, os.environ)
            text = decode_prompt(text.encode("utf-8", "surrogateescape"), where)
        except KvSwitchError as exc:
            done.append(MemoryImport(client, problem=str(exc)))
            continue
        same = store.find_text(text)
        if same is not None:
            done.append(MemoryImport(client, same.name))
            continue
        preset = name or store.free_name(client)
        store.add(preset, text, f"imported from {where}")
        done.append(MemoryImport(client, preset, new=True))
    return done


def import_cc_switch_rows(store: PromptStore, rows: Iterable[CcPrompt],
                          db: Path | None = None) -> list[RowImport]:
    """CC Switch's prompt rows (``core.ccswitch_library.read_prompts``) as presets, named as there when
    the name is a valid preset name (else ``cc-switch-<app>``); ``db``, when given, is named in the
    decode error and in the preset's note."""
    done = []
    for row in rows:
        where = f"{db if db is not None else 'CC Switch'} [{row.app}: {row.name}]"
        text = decode_prompt(row.content.encode("utf-8", "surrogateescape"), where)
        same = store.find_text(text)
        if same is not None:
            done.append(RowImport(row, same.name, new=False))
            continue
        try:
            preset = store.free_name(check_entry_name(row.name, "prompt preset"))
        except UsageError:
            preset = store.free_name(f"cc-switch-{row.app}")
        origin = f"{db}, " if db is not None else ""
        store.add(preset, text, f"imported from CC Switch ({origin}{row.app}: {row.name})")
        done.append(RowImport(row, preset, new=True))
    return done
