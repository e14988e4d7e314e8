"""One session as Markdown (the Sessions view's Export): its totals, cost, turn table and losses.

Everything that came from the clients' files (title, project, models, the losses' words) passes through
``hide_known`` (the keys KV Switch holds) and ``mask_text`` (any credential-shaped text) once more, on
the whole document, so a key a user pasted into a prompt never leaves in the export. Written atomically
by ``core.fsutil``, 0600 like every file KV Switch writes that could hold a user's text.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication

from kvswitch.ui.control.clients import client_label
from kvswitch.ui.control.session_words import causes_text


def _when(epoch: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(epoch)) if epoch else "—"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def session_markdown(summary: Any, turns: list[Any]) -> str:
    """The Markdown text, masked."""
    from kvswitch.core.knownsecrets import hide_known  # noqa: PLC0415
    from kvswitch.core.redact import mask_text  # noqa: PLC0415

    translate = QCoreApplication.translate
    s = summary
    lines = [f"# {_cell(s.title) or s.session_id}", ""]
    facts = (
        (translate("SessionMarkdown", "Client"), client_label(s.client)),
        (translate("SessionMarkdown", "Session"), f"`{s.session_id}`"),
        (translate("SessionMarkdown", "Project"), f"`{s.project}`" if s.project else "—"),
        (translate("SessionMarkdown", "First call"), _when(s.first_time)),
        (translate("SessionMarkdown", "Last call"), _when(s.last_time)),
        (translate("SessionMarkdown", "Models"), ", ".join(s.models) or "—"),
        (translate("SessionMarkdown", "Client versions"), ", ".join(s.versions) or "—"),
        (translate("SessionMarkdown", "API calls"), f"{s.calls:,}"),
        (translate("SessionMarkdown", "Prompt tokens"), f"{s.prompt:,}"),
        (translate("SessionMarkdown", "Read from the cache"), f"{s.cache_read:,} ({s.hit_rate:.0%})"),
        (translate("SessionMarkdown", "Written to the cache"), f"{s.cache_write_5m + s.cache_write_1h:,}"),
        (translate("SessionMarkdown", "Output tokens"), f"{s.output:,}"),
        (translate("SessionMarkdown", "Cost at list prices"), f"${s.cost:.4f}"),
        (translate("SessionMarkdown", "Resume"), f"`{s.resume_command}`"),
    )
    lines += [f"- **{name}:** {value}" for name, value in facts]
    turns_heading = translate("SessionMarkdown", "Turns")
    lines += ["", f"## {turns_heading}", ""]
    head = (
        translate("SessionMarkdown", "Call"),
        translate("SessionMarkdown", "Time"),
        translate("SessionMarkdown", "Model"),
        translate("SessionMarkdown", "Reused"),
        translate("SessionMarkdown", "Written"),
        translate("SessionMarkdown", "New"),
        translate("SessionMarkdown", "Output"),
        translate("SessionMarkdown", "Cost"),
        translate("SessionMarkdown", "Loss"),
    )
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for turn in turns:
        call = turn.call
        loss = causes_text(turn.loss.causes) if turn.loss is not None else ""
        cells = (str(turn.index + 1), time.strftime("%H:%M:%S", time.localtime(call.time)), call.model,
                 f"{call.cache_read:,}", f"{call.cache_write:,}", f"{call.fresh:,}", f"{call.output:,}",
                 f"${turn.cost:.4f}", loss)
        lines.append("| " + " | ".join(_cell(cell) for cell in cells) + " |")
    losses = [turn for turn in turns if turn.loss is not None]
    lost_heading = translate("SessionMarkdown", "Where the cache was lost")
    lines += ["", f"## {lost_heading}", ""]
    if not losses:
        lines.append(translate("SessionMarkdown", "No call lost the cache."))
    for turn in losses:
        loss = turn.loss
        text = translate("SessionMarkdown", "Call %1 (%2): %3 tokens processed again, $%4.")
        text = text.replace("%1", str(turn.index + 1)).replace("%2", causes_text(loss.causes))
        text = text.replace("%3", f"{loss.lost_tokens:,}").replace("%4", f"{loss.lost_cost:.4f}")
        lines.append(f"- {text} {loss.detail}")
    if s.notes:
        notes_heading = translate("SessionMarkdown", "Reading notes")
        lines += ["", f"## {notes_heading}", ""] + [f"- {note}" for note in s.notes]
    return mask_text(hide_known("\n".join(lines) + "\n"))


def write_session_markdown(path: Path, summary: Any, turns: list[Any]) -> Path:
    """Write the export where the user chose; returns the file written (``OSError`` when it cannot)."""
    from kvswitch.core.fsutil import atomic_write  # noqa: PLC0415

    return atomic_write(path, session_markdown(summary, turns).encode("utf-8"), mode=0o600)
