"""Every verify, kept per profile, so a person tuning a server can compare runs instead of remembering.

Users tune by experiment: change one server or client setting, run the same check, compare reuse and
time to first token. Each run is one JSON line in ``<data>/verify-history/<profile>.jsonl`` (0600):
when, what was checked (synthetic probe or the real client, with its version), which server answered
(the build and cache settings its ``/props`` reports, where it serves one), a digest of the applied env,
the verdict, reuse, TTFT cold and warm, and the per-request numbers. No key is ever stored: URLs lose
their user-info, the env is kept only as a digest that leaves keys out.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import json
import os
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from kvswitch.core import http_client
from kvswitch.core.errors import ConfigParseError, KvSwitchError
from kvswitch.core.fsutil import read_bytes
from kvswitch.core.http import NetworkLimitError
from kvswitch.core.strictparse import loads_json
from kvswitch.core.text import printable_data
from kvswitch.verify.probe import parse_json

#: oldest runs beyond this are dropped when the file is rewritten
KEEP = 500
MAX_PROPS_BYTES = 1 << 20
#: 2 x KEEP records of a few KB each, with room; a larger file is refused by its size, unread
MAX_HISTORY_BYTES = 64 << 20
#: the /props settings that change what a server can reuse
PROPS_SETTINGS = (
    "n_ctx",
    "n_batch",
    "n_ubatch",
    "cache_prompt",
    "n_cache_reuse",
    "cache_ram_mib",
    "swa_full",
)
_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class HistoryEntry:
    time: str
    profile: str
    check: str  # "synthetic", "client", or "sweep" (one setting of a sweep; ``setting`` names it)
    verdict: str
    client: str | None = None
    client_version: str | None = None
    server: dict[str, Any] = field(default_factory=dict)
    env_fingerprint: str | None = None
    reuse_ratio: float | None = None
    cached_tokens: int | None = None
    prompt_tokens: int | None = None
    ttft_cold_ms: float | None = None
    ttft_warm_ms: float | None = None
    requests: list[dict[str, Any]] = field(default_factory=list)
    #: a ``kvswitch sweep`` row: the server setting it measured (``-np 1, --cache-ram 0``)
    setting: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> HistoryEntry:
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**known)


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def public_url(url: str) -> str:
    """The URL without user-info, so a password in it never reaches a history file."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def server_identity(base_url: str, timeout: float = 5.0) -> dict[str, Any]:
    """What the server says it is: the build and cache settings of its ``/props``, when it answers."""
    root = base_url.rstrip("/").removesuffix("/v1")
    identity: dict[str, Any] = {"url": public_url(root)}
    with contextlib.suppress(httpx.HTTPError, OSError, NetworkLimitError, ValueError, TypeError):
        with http_client.request("GET", f"{root}/props", timeout=timeout, limit=MAX_PROPS_BYTES) as answer:
            props = printable_data(parse_json(answer.read())) if answer.status == 200 else None
        if isinstance(props, dict):
            identity["build"] = props.get("build_info")
            identity["model"] = os.path.basename(str(props.get("model_path") or "")) or None
            identity["slots"] = props.get("total_slots")
            settings = props.get("default_generation_settings")
            params = settings.get("params", {}) if isinstance(settings, dict) else {}
            merged = {**(settings if isinstance(settings, dict) else {}), **params, **props}
            identity["settings"] = {k: merged[k] for k in PROPS_SETTINGS if k in merged}
            template = props.get("chat_template")
            if isinstance(template, str):
                identity["chat_template_sha"] = hashlib.sha256(template.encode()).hexdigest()[:12]
    return identity


class VerifyHistory:
    """The history files under ``directory``, one per profile."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def path(self, profile: str) -> Path:
        return self.directory / f"{_SAFE_NAME.sub('_', profile) or '_'}.jsonl"

    def append(self, entry: HistoryEntry) -> Path:
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        path = self.path(entry.profile)
        line = json.dumps(entry.to_json(), ensure_ascii=False, separators=(",", ":")) + "\n"
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                line = "\n" + line  # a run killed mid-write left a torn line: keep ours whole
            os.write(fd, line.encode("utf-8"))
        finally:
            os.close(fd)
        entries = self.load(entry.profile)
        if len(entries) > 2 * KEEP:
            self._rewrite(path, entries[-KEEP:])
        return path

    def _rewrite(self, path: Path, entries: list[HistoryEntry]) -> None:
        from kvswitch.core.fsutil import atomic_write  # noqa: PLC0415

        text = "".join(
            json.dumps(e.to_json(), ensure_ascii=False, separators=(",", ":")) + "\n" for e in entries
        )
        atomic_write(path, text.encode("utf-8"), mode=0o600)

    def load(self, profile: str, problems: list[str] | None = None) -> list[HistoryEntry]:
        """Oldest first. A damaged line (a run killed mid-write, a hand edit, 100,000 levels of nesting)
        is skipped, never fatal, and named (file:line and why) in ``problems`` when given."""
        path = self.path(profile)
        try:
            raw = read_bytes(path, MAX_HISTORY_BYTES)
        except KvSwitchError as exc:
            if problems is not None:
                problems.append(str(exc))
            return []
        if raw is None:
            return []
        entries = []
        for number, line in enumerate(raw.decode("utf-8", errors="replace").splitlines(), 1):
            if not line.strip():
                continue
            try:
                data = loads_json(path, line)
                if not isinstance(data, dict):
                    raise ValueError("not a JSON object")
                entries.append(HistoryEntry.from_json(data))
            except ConfigParseError as exc:
                _note(problems, f"{path}:{number}: {exc.reason}; line skipped")
            except (ValueError, TypeError, KeyError, AttributeError) as exc:
                reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc) or type(exc).__name__
                _note(problems, f"{path}:{number}: not a verify record ({reason}); line skipped")
        return entries

    def profiles(self) -> list[str]:
        if not self.directory.is_dir():
            return []
        names = []
        for path in sorted(self.directory.glob("*.jsonl")):
            first = self.load(path.stem)
            names.append(first[0].profile if first else path.stem)
        return names


CSV_COLUMNS = (
    "time",
    "profile",
    "check",
    "client",
    "client_version",
    "verdict",
    "reuse_ratio",
    "cached_tokens",
    "prompt_tokens",
    "ttft_cold_ms",
    "ttft_warm_ms",
    "server_build",
    "env_fingerprint",
)


def to_csv(entries: Iterable[HistoryEntry]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for e in entries:
        row = {**e.to_json(), "server_build": e.server.get("build")}
        writer.writerow(["" if row.get(c) is None else row.get(c) for c in CSV_COLUMNS])
    return out.getvalue()


def describe(entries: list[HistoryEntry]) -> str:
    if not entries:
        return "No verify runs recorded yet."
    lines = [
        f"{'time':25} {'check':9} {'client':16} {'verdict':13} {'reuse':>6} {'TTFT cold→warm':>16}  server"
    ]
    for e in entries:
        reuse = f"{e.reuse_ratio:.0%}" if e.reuse_ratio is not None else "-"
        ttft = (
            f"{e.ttft_cold_ms:.0f}→{e.ttft_warm_ms:.0f} ms"
            if e.ttft_cold_ms is not None and e.ttft_warm_ms is not None
            else "-"
        )
        client = f"{e.client} {e.client_version}" if e.client else "-"
        lines.append(
            f"{e.time:25} {e.check:9} {client:16} {e.verdict:13} {reuse:>6} {ttft:>16}  "
            f"{e.server.get('build') or e.server.get('url', '')}"
            + (f"  setting: {e.setting}" if e.setting else "")
        )
    return "\n".join(lines)


def _note(problems: list[str] | None, text: str) -> None:
    if problems is not None:
        problems.append(text)
