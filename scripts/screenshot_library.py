"""The "Prompts & skills" tab for the docs' screenshots (a state of ``screenshot_states``' tour).

The demo HOME gets what a user would have: a CLAUDE.md KV Switch wrote from a preset, a hand-written
Codex AGENTS.md, two presets, two skills installed through KV Switch (one linked for Claude Code, one
copied for Codex) and one skill of the user's own in ``~/.agents/skills``, all made through the engines.
The token counts are the demo llama-server's own (the profile in use is the local one), or "unknown"
with the reason when it is not built.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

RULES = """# House rules
- Answer in the language of the question; code comments in English.
- Run the tests before every commit; never commit a failing build.
- Prefer small, reviewable changes.
"""
REVIEW = """# Review mode
Read the diff first, then comment on correctness, tests and naming, in that order.
"""
CODEX_OWN = "# Codex\nUse ripgrep, not grep. Keep answers short.\n"


def _skill(folder: Path, name: str, description: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n\n# {name}\n")
    return folder


def make_library(tour: Any) -> None:
    """Presets, memory files and skills in the demo HOME, through KV Switch's own engines."""
    from kvswitch.core.paths import codex_home  # noqa: PLC0415
    from kvswitch.core.prompts import PromptStore  # noqa: PLC0415
    from kvswitch.targets.memory_switch import MemoryWrite, MemoryWriter  # noqa: PLC0415
    from kvswitch.targets.skill_manager import SkillManager  # noqa: PLC0415

    store = PromptStore(tour.paths)
    if store.presets():
        return
    store.add("house-rules", RULES, "added from ~/notes/house-rules.md")
    store.add("review-mode", REVIEW, "added from the window")
    writer = MemoryWriter(tour.paths, os.environ, {RULES, REVIEW})
    writer.apply(MemoryWrite("house-rules", RULES, ("claude",)))
    agents = codex_home(os.environ) / "AGENTS.md"
    agents.parent.mkdir(parents=True, exist_ok=True)
    agents.write_text(CODEX_OWN)
    sources = tour.home / "skill-sources"
    manager = SkillManager(tour.paths, os.environ)
    manager.install(str(_skill(sources / "release-notes", "release-notes",
                               "Write release notes from the git log since the last tag")), kind="folder")
    manager.enable("release-notes", ["claude"])
    manager.install(str(_skill(sources / "triage", "triage", "Sort new issues by area and severity")),
                    kind="folder")
    manager.enable("triage", ["codex"], "copy")
    _skill(tour.home / ".agents" / "skills" / "pdf-tools", "pdf-tools", "Extract text and tables from PDFs")


def library(tour: Any) -> None:
    """The Prompts page (a preset selected) and the Skills page, in the tab's two sub-tabs."""
    from kvswitch.ui.library.library_view import LibraryView  # noqa: PLC0415

    make_library(tour)
    window = tour.window
    if not window.isVisible():  # the state taken alone (KVSWITCH_SCREENSHOTS_STATES): as the tour's first
        window.resize(1180, 760)
        if not window.content_built:
            window.build_content()
        window.show()
        tour.pump(400)
    window.build_tabs()
    view: LibraryView = window.library_view
    if tour.controller.store.active_name is None and tour.llama_url:  # counted by the demo server
        import screenshot_demo as demo  # noqa: PLC0415

        if tour.controller.store.names() == []:
            demo.add_profiles(tour.controller.store, tour.llama_url, tour.server_log, tour.dead_url)
        tour.controller.apply(demo.LOCAL)
    window.message_bar.hide()
    window.tabs.setCurrentWidget(view)
    view.tabs.setCurrentWidget(view.prompts_page)
    for _ in range(2):  # a read started before the demo files were made finishes first, then a fresh one
        for _ in range(150):
            if not view.controller.busy:
                break
            tour.pump(100)
        view.controller.reload()
        tour.pump(100)
    for _ in range(150):
        if not view.controller.busy:
            break
        tour.pump(100)
    view.prompts_page.presets.setCurrentCell(0, 0)
    tour.pump(400)
    tour.take("prompts", window)
    view.tabs.setCurrentWidget(view.skills_page)
    view.skills_page.table.setCurrentCell(0, 0)
    tour.pump(400)
    tour.take("skills", window)
