"""The Sessions tab for the docs' screenshots (a state of ``screenshot_states``' tour).

The demo HOME gets real client history: the Claude Code 2.1.332, Codex 0.171 and OpenCode 1.18.33
sessions captured against a real llama-server (``tests/fixtures/sessions-2026-12``, made by
``scripts/capture_sessions.py``), copied where each client keeps them. The window indexes them as it would
a user's (the tab's pass, in its child interpreter) and the Claude Code session whose model was switched
twice is open: its per-call chart with the losses marked and the losses in words.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
FIXTURE = REPO / "tests" / "fixtures" / "sessions-2026-12"
SHOWN = "5e5510a0-0000-4000-8000-00000000000a"


def copy_history(home: Path) -> None:
    """The captured files where Claude Code, Codex and OpenCode keep them."""
    shutil.copytree(FIXTURE / "claude" / "projects", home / ".claude" / "projects", dirs_exist_ok=True)
    shutil.copytree(FIXTURE / "codex" / "sessions", home / ".codex" / "sessions", dirs_exist_ok=True)
    database = home / ".local" / "share" / "opencode" / "opencode.db"
    database.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(FIXTURE / "opencode" / "opencode.db", database)


def sessions(tour: Any) -> None:
    copy_history(tour.home)
    window = tour.window
    window.resize(1180, 900)
    window.show()
    window.message_bar.hide()
    view = window.sessions_view
    window.tabs.setCurrentWidget(view)  # shown: the tab indexes what the clients wrote
    deadline = time.monotonic() + 120
    while (view.controller.passes < 1 or view.controller.busy) and time.monotonic() < deadline:
        tour.pump(200)
    rows = [n for n, s in enumerate(view.model.sessions) if s.session_id == SHOWN]
    if rows:
        view.table.selectRow(rows[0])
    while view.detail.summary is None and time.monotonic() < deadline:
        tour.pump(100)
    tour.pump(400)
    tour.take("sessions", window)
