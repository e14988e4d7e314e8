"""Which Claude Code settings move the prompt prefix, as measured, per client version.

Claude Code changes every few days, and a claim such as "this variable keeps the cache" is only true
of the version it was measured on. ``data/claude_settings.json`` is written by
``scripts/measure_claude_settings.py``: for each candidate setting the real client ran the scripted
session (three turns of one conversation, then a new one) against a real local server with and
without it, and the re-processed tokens were compared. The cache-safe env, the lint and the README
follow this data; a test keeps them in agreement.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

#: cache-safe members kept for a reason other than the cache: a local setup should not call home
PRIVACY_SETTINGS = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "keeps Claude Code from calling home for updates "
    "and other non-essential traffic while it talks to a local server",
    "CLAUDE_CODE_ENABLE_TELEMETRY": "keeps telemetry off while Claude Code talks to a local server",
}


@dataclass(frozen=True)
class MeasuredSetting:
    """One setting's measured effect: re-processed tokens saved per turn and per new conversation."""

    name: str
    value: str
    effect: str
    saved_per_turn: int
    saved_per_new_conversation: int
    prompt_tokens_delta: int

    @property
    def saves(self) -> bool:
        return self.saved_per_turn > 0 or self.saved_per_new_conversation > 0


@dataclass(frozen=True)
class SettingsCatalog:
    client: str
    client_version: str
    server: str
    measured: str
    settings: tuple[MeasuredSetting, ...]

    def get(self, name: str) -> MeasuredSetting | None:
        return next((s for s in self.settings if s.name == name), None)

    def savers(self) -> dict[str, str]:
        """The settings that measurably keep reuse: name -> value."""
        return {s.name: s.value for s in self.settings if s.saves}

    def where(self) -> str:
        return f"measured on Claude Code {self.client_version}, server {self.server}, {self.measured}"


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _setting(row: dict[str, Any]) -> MeasuredSetting:
    with_it, without = row.get("with") or {}, row.get("without") or {}
    per_turn = _int(without.get("inside_reprocessed_max")) - _int(with_it.get("inside_reprocessed_max"))
    new_key = "new_conversation_reprocessed"
    per_new = _int(without.get(new_key)) - _int(with_it.get(new_key))
    delta = _int(with_it.get("first_prompt_tokens")) - _int(without.get("first_prompt_tokens"))
    significant = 100  # the measuring script's own noise floor (a date, a count in the prompt)
    return MeasuredSetting(
        str(row["setting"]),
        str(row["value"]),
        str(row.get("effect", "")),
        per_turn if abs(per_turn) > significant else 0,
        per_new if abs(per_new) > significant else 0,
        delta,
    )


def parse(text: str) -> SettingsCatalog:
    data = json.loads(text)
    return SettingsCatalog(
        str(data["client"]),
        str(data["client_version"]),
        str(data["server"]),
        str(data["measured"]),
        tuple(_setting(row) for row in data["settings"]),
    )


@functools.cache
def claude_settings() -> SettingsCatalog:
    """The packaged measurements (read once per process)."""
    text = resources.files("kvswitch.core").joinpath("data/claude_settings.json").read_text(encoding="utf-8")
    return parse(text)
