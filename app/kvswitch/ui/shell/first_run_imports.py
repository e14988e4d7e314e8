"""The setup assistant's imports: Claude Code's settings or CC Switch's providers as profiles, and the
lead button that offers the import there is (CC Switch's providers counted on a worker first).

A mixin of ``FirstRunDialog`` (which owns the buttons, the result line, the store and ``profiles_added``),
split out so the dialog's module stays under the project's 400-line size; its words keep the
``FirstRunDialog`` translation context.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any, cast

from PySide6.QtCore import QCoreApplication

from kvswitch.core.paths import home_dir

if TYPE_CHECKING:
    from PySide6.QtCore import QObject, SignalInstance
    from PySide6.QtWidgets import QLabel, QPushButton

    from kvswitch.core.store import ProfileStore
    from kvswitch.ui.control.controller import AppController

log = logging.getLogger("kvswitch.ui.shell.first_run")


class FirstRunImportsMixin:
    """``FirstRunDialog`` supplies the controller and store, the lead button, the result line, the list
    of names it added and its ``profiles_added`` signal."""

    controller: AppController
    store: ProfileStore
    lead_button: QPushButton
    result_label: QLabel
    added: list[str]
    profiles_added: SignalInstance
    _lead_source: str | None
    _count_task: Any

    def _lead_with(self, claude_settings: bool) -> None:
        """Lead with the import there is: CC Switch's providers (counted on a worker), else Claude
        Code's settings; nothing to lead with, no lead."""
        if (home_dir() / ".cc-switch").is_dir():
            from kvswitch.ui.control.tasks import run_in_background  # noqa: PLC0415

            def count(_cancel: threading.Event, _progress: Any) -> int:
                from kvswitch.platform.importers import read_cc_switch  # noqa: PLC0415

                return len(read_cc_switch(allow_dangerous_env=True).profiles)

            parent = cast("QObject", self)  # the dialog
            self._count_task = run_in_background(parent, count, on_success=self._on_cc_switch_counted,
                                                 on_failure=lambda exc: log.info("CC Switch: %s", exc))
            return
        if claude_settings:
            text = QCoreApplication.translate("FirstRunDialog", "Found Claude Code's settings: import them")
            self._show_lead("claude", text)

    def _on_cc_switch_counted(self, count: object) -> None:
        if isinstance(count, int) and count > 0:
            text = QCoreApplication.translate("FirstRunDialog", "Found CC Switch: import %1 providers")
            text = text.replace("%1", str(count))
            self._show_lead("cc-switch", text)

    def _show_lead(self, source: str, text: str) -> None:
        self._lead_source = source
        self.lead_button.setText(text)
        self.lead_button.show()

    def import_from(self, source: str) -> bool:
        """Import Claude Code's settings (``"claude"``) or CC Switch's providers (``"cc-switch"``)."""
        from kvswitch.ui.profiles.importing import import_profiles  # noqa: PLC0415

        before = {profile.name for profile in self.store.profiles()}
        current: dict[str, str] = {}
        message, ok = import_profiles(self.store, source, current_out=current)
        if ok and current:
            self.controller.mark_imported_live(current)
        added = [profile.name for profile in self.store.profiles() if profile.name not in before]
        if added:
            self.added.extend(added)
            self.profiles_added.emit(added)
        self.result_label.setText(message)
        return ok
