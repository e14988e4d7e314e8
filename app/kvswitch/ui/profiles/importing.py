"""Import profiles from Claude Code's settings or CC Switch into the store, with a one-line outcome.

Before anything is saved the user sees every incoming profile's targets and dangerous env names
(``review_import``); profiles that need a yes (PATH, LD_*, NODE_OPTIONS..., project folders) are only
added when ``confirm`` returns True.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QMessageBox

from kvswitch.core.errors import KvSwitchError

log = logging.getLogger("kvswitch.ui.import")

Confirm = Callable[[str], bool]


def _unique_name(store: Any, name: str) -> str:
    """``deepseek``, then ``deepseek-2``, ``deepseek-3``: as ``kvswitch import`` numbers them."""
    taken = {p.name.casefold() for p in store.profiles()}
    if name.casefold() not in taken:
        return name
    number = 2
    while f"{name}-{number}".casefold() in taken:
        number += 1
    return f"{name}-{number}"


def ask_user(review: str) -> bool:
    """The default ``confirm``: a Yes/No box listing what the risky profiles would do."""
    title = QCoreApplication.translate("importing", "Import risky profiles?")
    text = QCoreApplication.translate(
        "importing", "Some profiles set environment variables that change how shells or Claude Code "
        "run programs, or write into project folders:\n\n%1\n\nImport them only if you trust the source."
    ).replace("%1", review)
    answer = QMessageBox.question(None, title, text)
    return answer == QMessageBox.StandardButton.Yes


def import_profiles(store: Any, source: str, confirm: Confirm = ask_user,
                    current_out: dict[str, str] | None = None) -> tuple[str, bool]:
    """Run an importer and add what it found; returns (message, success). Never raises for user errors.

    ``current_out`` receives what is live now per client (``claude`` / ``codex`` → the stored name):
    Claude Code's own settings are what Claude Code runs; CC Switch says which provider is current per
    app. The window marks those live at once (``AppController.mark_imported_live``)."""
    try:
        from kvswitch.platform import importers  # noqa: PLC0415
    except ImportError:
        return QCoreApplication.translate("importing", "Importing is not available in this build."), False
    current: dict[str, str] = {}
    try:
        if source == "claude":
            found: Any = importers.import_claude(allow_dangerous_env=True)
            if found is not None:
                current["claude"] = found.name
        else:
            read = importers.read_cc_switch(allow_dangerous_env=True)
            found, current = read.profiles, dict(read.current)
    except KvSwitchError as exc:
        return str(exc), False
    profiles = found if isinstance(found, list) else ([found] if found is not None else [])
    if not profiles:
        return QCoreApplication.translate("importing", "Nothing to import: no backend settings found."), False
    review = importers.review_import(profiles)
    if review.risky and not confirm(review.text()):
        return QCoreApplication.translate("importing", "Nothing was imported."), False
    added = []
    for profile in importers.confirmed_imports(profiles):
        name = _unique_name(store, profile.name)
        if name != profile.name:
            current = {app: (name if was == profile.name else was) for app, was in current.items()}
            profile = profile.model_copy(update={"name": name})
        try:
            store.add(profile)
        except KvSwitchError as exc:
            log.warning("import of %s skipped: %s", profile.name, exc)
            continue
        added.append(name)
    if not added:
        return QCoreApplication.translate("importing", "Nothing was imported."), False
    if current_out is not None:
        current_out.update({app: name for app, name in current.items() if name in added})
    message = QCoreApplication.translate("importing", "Imported %1 profile(s): %2.")
    message = message.replace("%1", str(len(added)))
    return message.replace("%2", ", ".join(added)), True
