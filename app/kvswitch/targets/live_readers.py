"""Reading what one client's live file says, for ``live``: one reader per kind of file.

A reader answers two questions about the file as it is on disk now, whoever wrote it:

- ``has(role, value)``: does the client run with this URL / key / model (``ROLES``)? The answer is
  read the way the client reads its file (Codex's URL is the one of the provider ``model_provider``
  names; OpenCode's model is the part after ``provider/``), so a file written by hand or by CC Switch
  is recognised as well as one KV Switch wrote;
- ``mismatches(wanted)``: which of the exact keys a writer would put there (``Target.desired``) the
  file does not hold, so a profile KV Switch applied and the file that drifted from it are told apart.

Readers never write and never raise for a file that is absent; one that cannot be parsed raises the
writer's ``ConfigParseError``, which ``live`` turns into a line of detail.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from kvswitch.core.errors import KvSwitchError
from kvswitch.targets.filetarget import StructuredFileTarget
from kvswitch.targets.keyed import MISSING, KeyedDocument
from kvswitch.targets.shell import ShellRcTarget
from kvswitch.targets.shell_block import find_block
from kvswitch.targets.shell_quote import export_line

Role = Literal["url", "key", "model"]
ROLES: tuple[Role, ...] = ("url", "key", "model")
CLAUDE_KEYS = ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_API_KEY")


def same_url(left: object, right: object) -> bool:
    """Two base URLs the client treats alike (a trailing slash makes no difference to it)."""
    return isinstance(left, str) and isinstance(right, str) and left.rstrip("/") == right.rstrip("/")


def as_text(value: Any) -> Any:
    """A file's value as the ledger and ``desired`` hold it (numbers as text)."""
    if isinstance(value, bool) or value is MISSING or value is None:
        return value
    return str(value) if isinstance(value, int | float) else value


class LiveReader(ABC):
    """What one client's live file(s) hold."""

    #: the file read (the first one, for a client of two files)
    path: Path

    @property
    @abstractmethod
    def exists(self) -> bool:
        """Whether the client's file is there at all."""

    @abstractmethod
    def has(self, role: Role, value: str) -> bool:
        """The file makes the client use ``value`` as its URL / key / model."""

    @abstractmethod
    def mismatches(self, wanted: Mapping[str, str]) -> list[str]:
        """The keys of ``wanted`` whose value the file does not hold (empty: it holds all of them)."""


class StructuredReader(LiveReader):
    """One or more JSON/TOML files, each parsed by its writer (Codex is config.toml plus auth.json)."""

    def __init__(self, targets: list[StructuredFileTarget]):
        self.targets = targets
        self.path = targets[0].path
        self.docs: dict[str, KeyedDocument | None] = {}
        for target in targets:
            raw = target.read_raw()
            self.docs[target.target_id] = None if raw is None else target.load(raw)[2]

    @property
    def exists(self) -> bool:
        return self.docs.get(self.targets[0].target_id) is not None

    def get(self, key: str, target_id: str | None = None) -> Any:
        doc = self.docs.get(target_id or self.targets[0].target_id)
        return MISSING if doc is None else as_text(doc.get(key))

    def mismatches_of(self, target_id: str, wanted: Mapping[str, str]) -> list[str]:
        return [key for key, value in wanted.items() if self.get(key, target_id) != value]

    def mismatches(self, wanted: Mapping[str, str]) -> list[str]:
        return self.mismatches_of(self.targets[0].target_id, wanted)


class ClaudeReader(StructuredReader):
    """``settings.json``: ``env.ANTHROPIC_BASE_URL``, a credential, ``model`` or ``env.ANTHROPIC_MODEL``."""

    def has(self, role: Role, value: str) -> bool:
        if role == "url":
            return same_url(self.get("env.ANTHROPIC_BASE_URL"), value)
        if role == "key":
            return any(self.get(f"env.{name}") == value for name in CLAUDE_KEYS)
        return value in (self.get("model"), self.get("env.ANTHROPIC_MODEL"))


class CodexReader(StructuredReader):
    """``config.toml`` (+ ``auth.json``): the URL is the one of the provider ``model_provider`` names."""

    def live_provider(self) -> Any:
        return self.get("model_provider")

    def has(self, role: Role, value: str) -> bool:
        provider = self.live_provider()
        if role == "url":
            if value == OPENAI_BUILTIN:
                return provider == "openai"
            if not isinstance(provider, str):
                return False
            return same_url(self.get(f"model_providers.{provider}.base_url"), value)
        if role == "key":
            return self.get("OPENAI_API_KEY", "codex-auth") == value
        return self.get("model") == value

    def mismatches(self, wanted: Mapping[str, str]) -> list[str]:
        config = {k: v for k, v in wanted.items() if k != "OPENAI_API_KEY"}
        missed = self.mismatches_of("codex", config)
        if "OPENAI_API_KEY" in wanted:
            missed += self.mismatches_of("codex-auth", {"OPENAI_API_KEY": wanted["OPENAI_API_KEY"]})
        return missed


#: the URL role's value for a profile on Codex's built-in OpenAI provider (no base_url of its own)
OPENAI_BUILTIN = "@openai"


class OpenCodeReader(StructuredReader):
    """``opencode.json``: ``model = "<provider>/<model>"`` and that provider's ``options.baseURL``."""

    def _model(self) -> tuple[str, str] | None:
        model = self.get("model")
        if not isinstance(model, str) or "/" not in model:
            return None
        provider, _, name = model.partition("/")
        return provider, name

    def has(self, role: Role, value: str) -> bool:
        chosen = self._model()
        if chosen is None:
            return False
        provider, name = chosen
        if role == "url":
            doc = self.docs.get(self.targets[0].target_id)
            data: Any = getattr(doc, "data", {})
            entry = (data.get("provider") or {}).get(provider) if isinstance(data, dict) else None
            options = entry.get("options") if isinstance(entry, dict) else None
            return same_url(options.get("baseURL") if isinstance(options, dict) else None, value)
        if role == "key":
            return True  # OpenCode's key is a reference to a variable, never the key itself
        return name == value


class ShellReader(LiveReader):
    """The export lines inside KV Switch's block of one shell start-up file."""

    def __init__(self, target: ShellRcTarget):
        self.target = target
        self.path = target.path
        raw = target.snapshot().content
        self._exists = raw is not None
        self.lines: set[str] = set()
        if raw is not None:
            text = raw.decode("utf-8", "surrogateescape")
            span = find_block(text, target.path, target.dialect)
            if span is not None:
                self.lines = {line.strip() for line in span.text(text).splitlines()
                              if line.strip() and not line.strip().startswith("#")}

    @property
    def exists(self) -> bool:
        return self._exists and bool(self.lines)

    def exports(self, name: str, value: str) -> bool:
        try:
            return export_line(self.target.shell, name, value) in self.lines
        except KvSwitchError:
            return False

    def has(self, role: Role, value: str) -> bool:
        if role == "url":
            return any(self.exports("ANTHROPIC_BASE_URL", form) for form in (value, value + "/"))
        if role == "key":
            return any(self.exports(name, value) for name in CLAUDE_KEYS)
        return self.exports("ANTHROPIC_MODEL", value)

    def mismatches(self, wanted: Mapping[str, str]) -> list[str]:
        return [name for name, value in wanted.items() if not self.exports(name, value)]
