"""Import profiles from Claude Code's settings or CC Switch into the store, with a one-line outcome."""

from __future__ import annotations

import logging
from typing import Any

from PySide6.QtCore import QCoreApplication

from kvswitch.core.errors import KvSwitchError

log = logging.getLogger("kvswitch.ui.import")


def _unique_name(store: Any, name: str) -> str:
    taken = {p.name.casefold() for p in store.profiles()}
    if name.casefold() not in taken:
        return name
    number = 2
    while f"{name} ({number})".casefold() in taken:
        number += 1
    return f"{name} ({number})"


def import_profiles(store: Any, source: str) -> tuple[str, bool]:
    """Run an importer and add what it found; returns (message, success). Never raises for user errors."""
    try:
        from kvswitch.core import importers  # noqa: PLC0415
    except ImportError:
        return QCoreApplication.translate("importing", "Importing is not available in this build."), False
    try:
        found = importers.import_claude() if source == "claude" else importers.import_cc_switch()
    except KvSwitchError as exc:
        return str(exc), False
    profiles = found if isinstance(found, list) else ([found] if found is not None else [])
    if not profiles:
        return QCoreApplication.translate("importing", "Nothing to import: no backend settings found."), False
    added = []
    for profile in profiles:
        name = _unique_name(store, profile.name)
        if name != profile.name:
            data = profile.model_dump(context={"secrets": True})
            data["name"] = name
            profile = type(profile).model_validate(data)
        try:
            store.add(profile)
        except KvSwitchError as exc:
            log.warning("import of %s skipped: %s", profile.name, exc)
            continue
        added.append(name)
    if not added:
        return QCoreApplication.translate("importing", "Nothing was imported."), False
    message = QCoreApplication.translate("importing", "Imported %1 profile(s): %2.")
    message = message.replace("%1", str(len(added)))
    return message.replace("%2", ", ".join(added)), True
