"""The shapes the session readers hand on: one API call, one session's summary, one turn with its loss.

Plain frozen dataclasses (no pydantic, no Qt): a window's worker thread, the CLI and the tests share them,
and ``to_json`` gives each its stable JSON form (``kvswitch sessions --json``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from shlex import quote
from typing import Any, TypedDict

from kvswitch.core.paths import claude_config_dir, codex_home, home_dir

CLIENTS = ("claude", "codex", "opencode")


@dataclass(frozen=True)
class ClientHomes:
    """Where each client keeps its history. ``from_env`` honours ``CLAUDE_CONFIG_DIR``, ``CODEX_HOME`` and
    ``XDG_DATA_HOME`` as the clients themselves do; a test points all three into a temporary HOME."""

    claude_projects: Path
    codex_sessions: Path
    opencode_db: Path

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> ClientHomes:
        env = os.environ if env is None else env
        data = (
            Path(env["XDG_DATA_HOME"]).expanduser()
            if env.get("XDG_DATA_HOME")
            else home_dir(env) / ".local" / "share"
        )
        return cls(
            claude_projects=claude_config_dir(env) / "projects",
            codex_sessions=codex_home(env) / "sessions",
            opencode_db=data / "opencode" / "opencode.db",
        )


class Counts(TypedDict, total=False):
    """A call's token counts as a reader found them (the ``Call`` fields of the same names)."""

    fresh: int
    cache_read: int
    cache_write_5m: int
    cache_write_1h: int
    output: int


@dataclass(frozen=True, slots=True)
class Call:
    """One API call, counted once. ``fresh`` is the prompt's part neither read from nor written to the
    cache, so the whole prompt is ``fresh + cache_read + cache_write_5m + cache_write_1h`` whatever the
    client's convention (Codex and OpenAI count the cached part inside ``input_tokens``)."""

    client: str
    session_id: str
    call_id: str
    time: float
    model: str = ""
    version: str = ""
    fresh: int = 0
    cache_read: int = 0
    cache_write_5m: int = 0
    cache_write_1h: int = 0
    output: int = 0
    #: "" for the session's own thread; a subagent's id, or "sidechain", for calls rolled into it
    agent: str = ""
    #: the client's kind of request (Claude's ``querySource``): calls are compared only within one lane
    lane: str = ""
    #: Claude's ``shapeHash`` (system blocks and tools), "" when the client writes none
    shape: str = ""
    #: how many messages the call sent (Claude: its ``tail`` rebuilt over ``base``/``keep``), 0 if unknown
    message_count: int = 0
    #: the first of the previous same-lane call's messages this call sent differently, None when it sent
    #: them all unchanged (or the file cannot tell)
    changed_message: int | None = None
    #: what happened just before this call, from the file: "compacted", "new_process"
    events: tuple[str, ...] = ()

    @property
    def prompt(self) -> int:
        return self.fresh + self.cache_read + self.cache_write_5m + self.cache_write_1h

    @property
    def cache_write(self) -> int:
        return self.cache_write_5m + self.cache_write_1h


@dataclass(frozen=True)
class SessionFilter:
    """What ``list_sessions`` keeps: a client, a project directory (substring), a start time (epoch)."""

    client: str | None = None
    project: str | None = None
    since: float | None = None

    def matches(self, summary: SessionSummary) -> bool:
        """Whether ``list_sessions`` would keep this session (for a list already in memory, such as the
        window's, filtered again without reading the index): the same client, the project containing the
        text (case-insensitive), the last call at or after ``since``."""
        if self.client and summary.client != self.client:
            return False
        if self.project and self.project.lower() not in summary.project.lower():
            return False
        return self.since is None or (summary.last_time is not None and summary.last_time >= self.since)


@dataclass(frozen=True)
class SessionSummary:
    """One session as the list shows it; tokens summed over its calls, subagents included."""

    client: str
    session_id: str
    project: str
    title: str
    first_time: float | None
    last_time: float | None
    versions: tuple[str, ...]
    models: tuple[str, ...]
    calls: int
    subagent_calls: int
    fresh: int
    cache_read: int
    cache_write_5m: int
    cache_write_1h: int
    output: int
    #: at list prices (``genai-prices``; the user's ``prices.json`` wins); a model no list knows costs 0
    cost: float
    #: models that had no list price (counted as a local server's: nothing)
    unpriced: tuple[str, ...] = ()
    #: what reading found wrong (a mismatch with the client's own totals, a skipped line)
    notes: tuple[str, ...] = ()
    files: tuple[str, ...] = field(default=())

    @property
    def prompt(self) -> int:
        return self.fresh + self.cache_read + self.cache_write_5m + self.cache_write_1h

    @property
    def hit_rate(self) -> float:
        """Cache reads ÷ all prompt tokens (0 when nothing was sent)."""
        return self.cache_read / self.prompt if self.prompt else 0.0

    @property
    def resume_command(self) -> str:
        return resume_command(self.client, self.session_id, self.project)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.update(
            prompt=self.prompt,
            hit_rate=round(self.hit_rate, 4),
            resume=self.resume_command,
            cache_write=self.cache_write_5m + self.cache_write_1h,
        )
        for key in ("versions", "models", "unpriced", "notes", "files"):
            data[key] = list(data[key])
        return data


@dataclass(frozen=True)
class Loss:
    """A call that re-read far less than the previous call of its lane had sent, and why (from the files)."""

    #: the first cause is the one shown; the others also held ("idle", "model_switched", "compacted",
    #: "new_process", "version_changed", "subagent", "system_changed", "messages_changed", "unknown")
    causes: tuple[str, ...]
    #: the cause in words, with the detail the files give (which tools, which message, how long idle)
    detail: str
    #: prompt tokens processed again that the previous call had already sent
    lost_tokens: int
    #: what processing them again cost over reading them from the cache, at list prices
    lost_cost: float


@dataclass(frozen=True)
class GatewayReason:
    """What KV Switch's gateway recorded for the same request (same session id, prompt and cached
    tokens): its verdict and byte-level reason, which the client's files alone cannot give."""

    #: HIT / PARTIAL / MISS / COLD
    verdict: str
    #: cold / prefix_changed / evicted / expired / server / unknown ("" for a HIT)
    reason: str
    #: where the prompt first differed (``system[0]``, ``tools``, ``messages[3]``), and what it looks like
    part: str
    looks_like: str
    #: the setting that avoids it (``{"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"}``), when the gateway knows one
    fix: Mapping[str, str]
    #: all of it in one English sentence (the CLI's line)
    words: str
    #: when the gateway recorded the request (epoch)
    time: float


@dataclass(frozen=True)
class Turn:
    """One call in a session's turn table: what it reused, wrote and sent new, its loss if any, and the
    gateway's reason when the gateway recorded the same request."""

    index: int
    call: Call
    cost: float
    loss: Loss | None = None
    gateway: GatewayReason | None = None

    def to_json(self) -> dict[str, Any]:
        call = self.call
        return {
            "index": self.index,
            "call_id": call.call_id,
            "time": call.time,
            "model": call.model,
            "version": call.version,
            "agent": call.agent,
            "lane": call.lane,
            "reused": call.cache_read,
            "written": call.cache_write,
            "written_5m": call.cache_write_5m,
            "written_1h": call.cache_write_1h,
            "new": call.fresh,
            "prompt": call.prompt,
            "output": call.output,
            "cost": self.cost,
            "events": list(call.events),
            "loss": None if self.loss is None else asdict(self.loss),
            "gateway": None if self.gateway is None else asdict(self.gateway),
        }


@dataclass
class IndexReport:
    """What one ``index_sessions`` pass did: files read (and how many bytes), sessions touched, notes."""

    files_seen: int = 0
    files_read: int = 0
    bytes_read: int = 0
    sessions_changed: set[tuple[str, str]] = field(default_factory=set)
    #: path → what was wrong with it this pass (it was skipped or partly read; the others were read)
    notes: dict[str, list[str]] = field(default_factory=dict)

    def note(self, path: str, text: str) -> None:
        found = self.notes.setdefault(path, [])
        if len(found) < 20 and text not in found:
            found.append(text)


def resume_command(client: str, session_id: str, project: str) -> str:
    """The command that resumes the session in its client (Claude looks only in the project's folder)."""
    if client == "claude":
        where = f"cd {quote(project)} && " if project else ""
        return f"{where}claude --resume {quote(session_id)}"
    if client == "codex":
        return f"codex resume {quote(session_id)}"
    if client == "opencode":
        where = f"cd {quote(project)} && " if project else ""
        return f"{where}opencode -s {quote(session_id)}"
    return ""
