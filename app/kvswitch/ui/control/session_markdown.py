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

from kvswitch.ui.control.session_words import causes_text, client_label


def _when(epoch: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(epoch)) if epoch else "—"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def session_markdown(summary: Any, turns: list[Any]) -> str:
    """The Markdown text, masked."""
    from kvswitch.core.knownsecrets import hide_known  # noqa: PLC0415
    from kvswitch.core.redact import mask_text  # noqa: PLC0415

    tr = QCoreApplication.translate
    s = summary
    lines = [f"# {_cell(s.title) or s.session_id}", ""]
    facts = (
        (tr("SessionMarkdown", "Client"), client_label(s.client)),
        (tr("SessionMarkdown", "Session"), f"`{s.session_id}`"),
        (tr("SessionMarkdown", "Project"), f"`{s.project}`" if s.project else "—"),
        (tr("SessionMarkdown", "First call"), _when(s.first_time)),
        (tr("SessionMarkdown", "Last call"), _when(s.last_time)),
        (tr("SessionMarkdown", "Models"), ", ".join(s.models) or "—"),
        (tr("SessionMarkdown", "Client versions"), ", ".join(s.versions) or "—"),
        (tr("SessionMarkdown", "API calls"), f"{s.calls:,}"),
        (tr("SessionMarkdown", "Prompt tokens"), f"{s.prompt:,}"),
        (tr("SessionMarkdown", "Read from the cache"), f"{s.cache_read:,} ({s.hit_rate:.0%})"),
        (tr("SessionMarkdown", "Written to the cache"), f"{s.cache_write_5m + s.cache_write_1h:,}"),
        (tr("SessionMarkdown", "Output tokens"), f"{s.output:,}"),
        (tr("SessionMarkdown", "Cost at list prices"), f"${s.cost:.4f}"),
        (tr("SessionMarkdown", "Resume"), f"`{s.resume_command}`"),
    )
    lines += [f"- **{name}:** {value}" for name, value in facts]
    lines += ["", f"## {tr('SessionMarkdown', 'Turns')}", ""]
    head = (tr("SessionMarkdown", "Call"), tr("SessionMarkdown", "Time"), tr("SessionMarkdown", "Model"),
            tr("SessionMarkdown", "Reused"), tr("SessionMarkdown", "Written"), tr("SessionMarkdown", "New"),
            tr("SessionMarkdown", "Output"), tr("SessionMarkdown", "Cost"), tr("SessionMarkdown", "Loss"))
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for turn in turns:
        call = turn.call
        loss = causes_text(turn.loss.causes) if turn.loss is not None else ""
        cells = (str(turn.index + 1), time.strftime("%H:%M:%S", time.localtime(call.time)), call.model,
                 f"{call.cache_read:,}", f"{call.cache_write:,}", f"{call.fresh:,}", f"{call.output:,}",
                 f"${turn.cost:.4f}", loss)
        lines.append("| " + " | ".join(_cell(cell) for cell in cells) + " |")
    losses = [turn for turn in turns if turn.loss is not None]
    lines += ["", f"## {tr('SessionMarkdown', 'Where the cache was lost')}", ""]
    if not losses:
        lines.append(tr("SessionMarkdown", "No call lost the cache."))
    for turn in losses:
        loss = turn.loss
        text = tr("SessionMarkdown", "Call %1 (%2): %3 tokens processed again, $%4.")
        text = text.replace("%1", str(turn.index + 1)).replace("%2", causes_text(loss.causes))
        text = text.replace("%3", f"{loss.lost_tokens:,}").replace("%4", f"{loss.lost_cost:.4f}")
        lines.append(f"- {text} {loss.detail}")
    if s.notes:
        lines += ["", f"## {tr('SessionMarkdown', 'Reading notes')}", ""] + [f"- {note}" for note in s.notes]
    return mask_text(hide_known("\n".join(lines) + "\n"))


def write_session_markdown(path: Path, summary: Any, turns: list[Any]) -> Path:
    """Write the export where the user chose; returns the file written (``OSError`` when it cannot)."""
    from kvswitch.core.fsutil import atomic_write  # noqa: PLC0415

    return atomic_write(path, session_markdown(summary, turns).encode("utf-8"), mode=0o600)
