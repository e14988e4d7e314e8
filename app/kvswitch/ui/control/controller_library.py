"""The Prompts and Skills pages' actions: presets written as memory files, skills installed and enabled,
every file operation and token count on the task pool, reported by signal.

A preset is written the way ``kvswitch prompt use`` writes it (``targets.memory_switch``): planned
first (the page shows the diff), then exactly the confirmed plan is written in the switching journal, so
the window's Undo takes it back byte for byte. A memory file only the user has (edited by hand, or never
written by KV Switch and no preset's text) is reported as ``hand_edit_found`` and written only when the
user confirms (the engine's ``force``; the backup keeps it). Skills go through ``targets.skill_manager``
as ``kvswitch skill`` does; its refusals arrive as ``action_failed`` with the engine's message.

One change runs at a time; a reload after each change travels with its outcome.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QCoreApplication, QObject, Signal

from kvswitch.core.errors import KvSwitchError
from kvswitch.ui.control import tasks
from kvswitch.ui.i18n import fill

if TYPE_CHECKING:
    from kvswitch.targets.memory_switch import MemoryWrite
    from kvswitch.ui.control.controller import AppController


@dataclass(frozen=True)
class UseRequest:
    """Write preset ``preset`` (or the memory file of client ``source``) to ``clients``."""

    clients: tuple[str, ...]
    preset: str = ""
    source: str = ""
    force: bool = False


@dataclass(frozen=True)
class UsePlan:
    """A planned write, shown before it is made: ``plans`` are exactly what ``apply_use`` writes."""

    request: UseRequest
    change: MemoryWrite
    plans: list[Any]
    known_extra: frozenset[str] = frozenset()


class LibraryController(QObject):
    """Prompt presets and skills for the window, over the app controller's paths and active profile.

    Signals:
        prompts_changed(object): a ``library_state.PromptsState`` after a load or a change.
        skills_changed(object): the list of ``library_state.SkillRow``.
        busy_changed(bool): a change started (True) or ended (False).
        preset_planned(object): a ``UsePlan`` to show before writing it.
        hand_edit_found(object, str): the ``UseRequest`` and why its file is the user's own text.
        preset_applied(str, object): the preset written and the plans written (for Review changes).
        action_finished(str): what a change did, for the message bar.
        action_failed(str): the engine's message; nothing was changed.
    """

    prompts_changed = Signal(object)
    skills_changed = Signal(object)
    busy_changed = Signal(bool)
    preset_planned = Signal(object)
    hand_edit_found = Signal(object, str)
    preset_applied = Signal(str, object)
    action_finished = Signal(str)
    action_failed = Signal(str)

    def __init__(self, app: AppController, parent: QObject | None = None):
        super().__init__(parent)
        self.app = app
        self.paths = app.paths
        self._task: tasks.BackgroundTask | None = None
        self.applied_notes: list[str] = []  # the engine's notes and warnings of the last preset write

    @property
    def busy(self) -> bool:
        return self._task is not None

    def render_diff(self, plans: list[Any]) -> str:
        """The engine's unified diff of ``plans`` (memory files hold no keys; masked all the same)."""
        from kvswitch.targets.diff import render_plans  # noqa: PLC0415

        return render_plans(plans, show_secrets=False)

    # -- reading -----------------------------------------------------------------------------------
    def reload(self) -> None:
        """Read presets, memory files and skills with their token costs (a worker; may ask the server).
        While a change runs nothing is started: the change's outcome carries a fresh read."""
        if self._task is None:
            self._start(lambda: "", quiet=True)

    # -- prompts -----------------------------------------------------------------------------------
    def add_preset(self, name: str, text: str = "", file: str = "", replace: bool = False) -> None:
        """Store ``text`` (or the text of ``file``) as preset ``name``."""

        def work() -> str:
            from kvswitch.core.errors import UsageError  # noqa: PLC0415
            from kvswitch.core.fsutil import read_bytes  # noqa: PLC0415
            from kvswitch.core.prompts import MAX_PROMPT_BYTES, PromptStore, decode_prompt  # noqa: PLC0415

            content, where = text, "the window"
            if file:
                raw = read_bytes(Path(file).expanduser(), limit=MAX_PROMPT_BYTES)
                if raw is None:
                    raise UsageError(f"{file}: no such file")
                content, where = decode_prompt(raw, file), file
            preset = PromptStore(self.paths).add(name, content, f"added from {where}", replace=replace)
            return fill(self.tr("Stored preset “%1” (%2 bytes)."), preset.name, len(content.encode()))

        self._start(work)

    def import_prompts(self, source: str) -> None:
        """Each client's memory file (``clients``), one client's, or CC Switch's presets (``cc-switch``)."""

        def work() -> str:
            from kvswitch.core.ccswitch_library import cc_switch_db, read_prompts  # noqa: PLC0415
            from kvswitch.core.prompts import PROMPT_CLIENTS, PromptStore  # noqa: PLC0415
            from kvswitch.ui.control.library_imports import import_cc_switch, import_memory_files  # noqa: PLC0415

            store = PromptStore(self.paths)
            if source == "cc-switch":
                lines = import_cc_switch(store, read_prompts(cc_switch_db(None)))
            else:
                clients = PROMPT_CLIENTS if source == "clients" else (source,)
                lines = import_memory_files(self.paths, store, clients)
            return "\n".join(lines) or self.tr("Nothing to import: no memory file or preset was found.")

        self._start(work)

    def remove_preset(self, name: str) -> None:
        def work() -> str:
            from kvswitch.core.prompts import PromptStore  # noqa: PLC0415

            preset = PromptStore(self.paths).remove(name)
            return fill(self.tr("Forgot preset “%1”; memory files holding its text keep it."), preset.name)

        self._start(work)

    def plan_use(self, request: UseRequest) -> None:
        """Plan ``request``; ``preset_planned`` with the diff, or ``hand_edit_found`` to ask first."""
        result: dict[str, Any] = {}

        def work() -> str:
            from kvswitch.targets.memoryfile import HandEdited  # noqa: PLC0415

            try:
                result["plan"] = self._plan(request)
            except HandEdited as exc:
                result["hand_edited"] = str(exc)
            return ""

        def done() -> None:
            if "hand_edited" in result:
                self.hand_edit_found.emit(request, result["hand_edited"])
            else:
                self.preset_planned.emit(result["plan"])

        self._start(work, then=done, quiet=True)

    def apply_use(self, planned: UsePlan) -> None:
        """Write exactly ``planned.plans``. A file changed since the preview: nothing is written and the
        fresh plan is offered again (``preset_planned``, the changed files flagged), or, when the file
        now holds the user's own text, ``hand_edit_found`` asks first, as for a first plan."""
        outcome: dict[str, Any] = {}

        def work() -> str:
            from kvswitch.targets.memoryfile import HandEdited  # noqa: PLC0415
            from kvswitch.targets.outcome import PlanOutdated  # noqa: PLC0415

            try:
                result = self._writer(planned.known_extra).apply(planned.change, confirmed=planned.plans)
            except HandEdited as exc:
                outcome["hand_edited"] = str(exc)
                return ""
            except PlanOutdated as exc:
                try:
                    outcome["fresh"] = fresh = self._plan(planned.request)
                except HandEdited as again:
                    outcome["hand_edited"] = str(again)
                    return ""
                note = QCoreApplication.translate(
                    "ApplyDialog",
                    "This file changed after the preview you confirmed; this is what applying does now.",
                )
                for plan in [p for p in fresh.plans if p.location in exc.locations] or fresh.plans[:1]:
                    plan.warnings.insert(0, note)
                return ""
            self.applied_notes = [*result.notes, *result.warnings]  # said with the success message
            return ""

        def done() -> None:
            if "hand_edited" in outcome:
                self.hand_edit_found.emit(planned.request, outcome["hand_edited"])
            elif "fresh" in outcome:
                self.preset_planned.emit(outcome["fresh"])
            else:
                self.preset_applied.emit(planned.change.preset, planned.plans)

        self._start(work, then=done, quiet=True)

    def _writer(self, known_extra: frozenset[str] = frozenset()) -> Any:
        from kvswitch.core.prompts import PromptStore  # noqa: PLC0415
        from kvswitch.targets.memory_switch import MemoryWriter  # noqa: PLC0415

        known = {p.text for p in PromptStore(self.paths).presets()} | set(known_extra)
        return MemoryWriter(self.paths, os.environ, known, lock_timeout=30.0)

    def _plan(self, request: UseRequest) -> UsePlan:
        from kvswitch.core.errors import UsageError  # noqa: PLC0415
        from kvswitch.core.prompts import PromptStore, decode_prompt, memory_file  # noqa: PLC0415
        from kvswitch.targets.memory_switch import MemoryWrite  # noqa: PLC0415

        store = PromptStore(self.paths)
        extra: frozenset[str] = frozenset()
        if request.source:
            text, written = self._writer().read(request.source)
            if text is None:
                raise UsageError(f"{memory_file(request.source, os.environ)}: no memory file to copy")
            where = memory_file(request.source, os.environ)
            text = decode_prompt(text.encode("utf-8", "surrogateescape"), where)
            same = store.find_text(text)
            label = written or (same.name if same is not None else f"copy of {request.source}")
            clients = tuple(c for c in request.clients if c != request.source)
            if not clients:
                raise UsageError("choose a client other than the one copied from")
            change, extra = MemoryWrite(label, text, clients, request.force), frozenset({text})
        else:
            preset = store.get(request.preset)
            change = MemoryWrite(preset.name, preset.text, request.clients, request.force)
        return UsePlan(request, change, self._writer(extra).plan(change), extra)

    # -- skills ------------------------------------------------------------------------------------
    def install_skill(self, source: str, kind: str | None, clients: list[str], copy: bool = False) -> None:
        """Install from a folder, a zip or a git URL, then enable for ``clients``."""

        def work() -> str:
            manager = self._skills()
            added = manager.install(source.strip(), kind=kind)
            lines = [fill(self.tr("Installed skill “%1” from %2."), s.name, s.source) for s in added]
            for skill in added:
                if clients:
                    lines += manager.enable(skill.name, clients, "copy" if copy else "auto")
            return "\n".join(lines + ([self._prefix_note()] if clients and added else []))

        self._start(work)

    def import_cc_switch_skills(self) -> None:
        """Install each skill of CC Switch's database from ``~/.cc-switch/skills`` (enabling stays the
        user's choice); one installed already is left as it is, as ``kvswitch skill import`` does."""

        def work() -> str:
            from kvswitch.core.ccswitch_library import cc_switch_db, read_skills  # noqa: PLC0415

            manager = self._skills()
            installed = manager.manifest.skills()
            lines = []
            for row in read_skills(cc_switch_db(None)):
                if row.name in installed:
                    lines.append(f"{row.name}: not installed (installed already)")
                    continue
                try:
                    added = manager.install(str(row.folder), kind="folder")
                except KvSwitchError as exc:
                    lines.append(f"{row.name}: not installed ({exc})")
                    continue
                apps = ", ".join(row.enabled_for) or "no app"
                lines.append(fill(self.tr("Installed skill “%1” from %2."), added[0].name, row.folder)
                             + f" (CC Switch had it on for {apps})")
            return "\n".join(lines) or self.tr("CC Switch holds no skills.")

        self._start(work)

    def set_skill_enabled(self, name: str, client: str, enabled: bool, copy: bool = False) -> None:
        def work() -> str:
            manager = self._skills()
            notes = (manager.enable(name, [client], "copy" if copy else "auto") if enabled
                     else manager.disable(name, [client]))
            return "\n".join([*notes, self._prefix_note()])

        self._start(work)

    def update_skill(self, name: str) -> None:
        def work() -> str:
            skill, notes = self._skills().update(name)
            return "\n".join([fill(self.tr("Updated skill “%1” from %2."), skill.name, skill.source), *notes])

        self._start(work)

    def remove_skill(self, name: str) -> None:
        def work() -> str:
            return "\n".join(self._skills().remove(name))

        self._start(work)

    def _prefix_note(self) -> str:
        return self.tr("A skill's line sits in every request's prefix: a client that is running re-processes "
                       "its prompt from there on at its next request.")

    def _skills(self) -> Any:
        from kvswitch.targets.skill_manager import SkillManager  # noqa: PLC0415

        return SkillManager(self.paths, os.environ)

    # -- running -----------------------------------------------------------------------------------
    def _start(self, work: Callable[[], str], *, then: Callable[[], None] | None = None,
               quiet: bool = False) -> None:
        """Run ``work`` then a fresh read on the pool; ``then`` runs on the GUI thread on success."""
        if self._task is not None:
            self.action_failed.emit(self.tr("Another change is still being made; try again in a moment."))
            return
        profile = self.app.active_profile()  # the store is read here, on the GUI thread

        def run(cancel: threading.Event, progress: Any) -> Any:
            from kvswitch.ui.control.library_state import read_prompts, read_skills  # noqa: PLC0415

            message = work()
            return message, read_prompts(self.paths, profile), read_skills(self.paths, profile)

        self._then, self._quiet = then, quiet
        self.busy_changed.emit(True)
        self._task = tasks.run_in_background(self, run, on_success=self._on_task_succeeded,
                                             on_failure=self._on_task_failed)

    def _on_task_succeeded(self, result: object) -> None:
        self._task = None
        assert isinstance(result, tuple)
        message, prompts, skills = result
        self.prompts_changed.emit(prompts)
        self.skills_changed.emit(skills)
        self.busy_changed.emit(False)
        if self._then is not None:
            self._then()
        if message or not self._quiet:
            self.action_finished.emit(message or self.tr("Done."))

    def _on_task_failed(self, exc: object) -> None:
        self._task = None
        self.busy_changed.emit(False)
        from kvswitch.ui.control import engine_text  # noqa: PLC0415

        if isinstance(exc, KvSwitchError):
            text = engine_text.error_text(exc)
        else:
            text = f"{type(exc).__name__}: {exc}"
        self.action_failed.emit(text)
