"""Claude Code's ``settings.json`` (user, project and project-local scope).

Only ``env.<NAME>`` entries, ``model`` and (for a gateway profile, in the user scope) ``modelPicker``
are ever written; every other key keeps its value and its place. File conventions: an empty file is
treated as ``{}``; a UTF-8 BOM is tolerated and kept; CRLF line ends are kept; the indent the file
already uses is kept (2 spaces for new files, as Claude Code writes them). JSON with comments,
duplicate keys or a non-object top level is refused with the line and column, before anything
anywhere is written.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from kvswitch.core.envmap import NO_KEY_PLACEHOLDER, claude_env, needs_placeholder_key
from kvswitch.core.errors import ConfigParseError
from kvswitch.core.model_ids import PickerModel, picker_models
from kvswitch.core.models import Profile
from kvswitch.core.strictparse import loads_json
from kvswitch.targets.base import Plan
from kvswitch.targets.filetarget import StructuredFileTarget
from kvswitch.targets.jsonsplice import splice_json
from kvswitch.targets.keyed import MISSING

PLACEHOLDER_NOTE = (
    f"ANTHROPIC_AUTH_TOKEN is set to the placeholder {NO_KEY_PLACEHOLDER!r}: the profile has no key, and "
    "Claude Code asks for a login unless a credential variable is set; a local server started without "
    "--api-key ignores it (give the profile a key with 'kvswitch profile edit NAME --api-key-stdin' "
    "if yours checks one)"
)


class JsonDocument:
    """A JSON object addressed by ``a.b`` keys (each segment an object member)."""

    def __init__(self, data: dict[str, Any], path: Path | str = "settings.json"):
        self.data = data
        self.path = path

    def _parent(self, key: str, create: bool) -> tuple[dict[str, Any] | None, str, list[str]]:
        parts = key.split(".")
        node: Any = self.data
        created: list[str] = []
        for depth, part in enumerate(parts[:-1]):
            child = node.get(part, MISSING)
            if child is MISSING:
                if not create:
                    return None, parts[-1], created
                child = {}
                node[part] = child
                created.append(".".join(parts[: depth + 1]))
            if not isinstance(child, dict):
                if create:
                    where = ".".join(parts[: depth + 1])
                    raise ConfigParseError(self.path, f"'{where}' must be an object to hold '{key}'")
                return None, parts[-1], created
            node = child
        return node, parts[-1], created

    def get(self, key: str) -> Any:
        parent, leaf, _ = self._parent(key, create=False)
        return MISSING if parent is None else parent.get(leaf, MISSING)

    def set(self, key: str, value: Any) -> list[str]:
        parent, leaf, created = self._parent(key, create=True)
        assert parent is not None
        parent[leaf] = value
        return created

    def delete(self, key: str) -> None:
        parent, leaf, _ = self._parent(key, create=False)
        if parent is not None:
            parent.pop(leaf, None)

    def container_empty(self, container: str) -> bool | None:
        node = self.get(container)
        if not isinstance(node, dict):
            return None
        return not node

    def delete_container(self, container: str) -> None:
        self.delete(container)

    def is_empty(self) -> bool:
        return not self.data


def _reject_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _DuplicateKey(key)
        result[key] = value
    return result


class _DuplicateKey(ValueError):
    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def parse_json_object(path: Path, text: str) -> dict[str, Any]:
    """Parse ``text`` as a JSON object or raise ``ConfigParseError`` saying where and how to fix it."""
    if not text.strip():
        return {}
    try:
        data = loads_json(path, text, object_pairs_hook=_reject_duplicates)
    except _DuplicateKey as exc:
        line = _line_of_key(text, exc.key)
        raise ConfigParseError(path, f"the key {exc.key!r} appears twice; keep one of them", line) from None
    except json.JSONDecodeError as exc:
        reason = exc.msg
        rest = text[exc.pos : exc.pos + 2]
        if rest.startswith("//") or rest.startswith("/*"):
            reason = "JSON does not allow comments; remove the comment"
        elif exc.msg.startswith("Expecting property name") and text[exc.pos : exc.pos + 1] == "}":
            reason = "trailing comma before '}'; remove it"
        raise ConfigParseError(path, f"not valid JSON: {reason}", exc.lineno, exc.colno) from None
    if not isinstance(data, dict):
        raise ConfigParseError(
            path, f"expected a JSON object {{...}} at the top level, found {type(data).__name__}"
        )
    return data


def _line_of_key(text: str, key: str) -> int | None:
    hits = [i for i, line in enumerate(text.splitlines(), 1) if f'"{key}"' in line]
    return hits[1] if len(hits) > 1 else None


def detect_indent(text: str) -> int | str:
    """The indent unit the file uses (spaces count or a tab); 2 when it has no indented line."""
    for line in text.splitlines():
        match = re.match(r"^([ \t]+)\S", line)
        if match:
            lead = match.group(1)
            return "\t" if lead.startswith("\t") else len(lead)
    return 2


def render_json(data: dict[str, Any], original: str) -> str:
    """``data`` as JSON text, editing ``original`` in place where possible (see ``jsonsplice``)."""
    indent = detect_indent(original)
    unit = indent if isinstance(indent, str) else " " * indent
    if original.strip():
        edited = splice_json(original, data, unit)
        if edited is not None:
            return edited if edited.endswith("\n") else edited + "\n"
    return json.dumps(data, indent=indent, ensure_ascii=False) + "\n"


#: Claude Code's ``/model`` picker rows (2.1.243+; read from the user scope, not a project's files)
PICKER_KEY = "modelPicker"


def picker_text(rows: list[PickerModel]) -> str:
    """``modelPicker`` as the ledger holds it (canonical JSON text): only these rows, one per model.

    The schema is Claude Code 2.1.332's own (its settings validator): ``options`` of ``{model, label?,
    description?, behavesAs?}`` and ``replaceBuiltInOptions``, which leaves the Default row and hides
    the built-in lineup, whose models a gateway profile's backend does not serve.
    """
    options = [{"model": r.id, "label": r.label, "description": r.description} for r in rows]
    return canonical_json({"replaceBuiltInOptions": True, "options": options})


def canonical_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


class ClaudeDocument(JsonDocument):
    """Settings whose ``modelPicker`` object the merge sees as one text value (the ledger holds text)."""

    def get(self, key: str) -> Any:
        value = super().get(key)
        return canonical_json(value) if key == PICKER_KEY and isinstance(value, dict | list) else value

    def set(self, key: str, value: Any) -> list[str]:
        if key == PICKER_KEY and isinstance(value, str):
            value = loads_json(self.path, value)  # our own canonical text: the strict parser reads it
        return super().set(key, value)


class ClaudeSettingsTarget(StructuredFileTarget):
    """``env`` entries and ``model`` in one Claude Code settings file (and ``modelPicker``: ``picker``)."""

    #: the gateway profiles' models for the ``/model`` picker, set by the engine when a gateway profile
    #: is applied to the user scope (``None``: no picker is written)
    picker: list[PickerModel] | None = None

    def parse(self, text: str) -> JsonDocument:
        data = parse_json_object(self.path, text)
        env = data.get("env", MISSING)
        if env is not MISSING and not isinstance(env, dict):
            raise ConfigParseError(self.path, "'env' must be an object of NAME: \"value\" entries")
        return ClaudeDocument(data, self.path)

    def render(self, doc: Any, original: str) -> str:
        return render_json(doc.data, original)

    def plan(self, profile: Profile | None, owned: dict[str, str]) -> Plan:
        plan = super().plan(profile, owned)
        placeholder = profile is not None and needs_placeholder_key(profile)
        if placeholder and owned.get("env.ANTHROPIC_AUTH_TOKEN") != NO_KEY_PLACEHOLDER:
            plan.warnings.append(PLACEHOLDER_NOTE)
        return plan

    def desired(self, profile: Profile) -> dict[str, str]:
        wanted = {f"env.{name}": value for name, value in claude_env(profile).items()}
        if profile.model:
            wanted["model"] = profile.model
        if self.picker and profile.via_gateway and self.target_id == "claude":
            wanted[PICKER_KEY] = picker_text(self.picker)
        return wanted


def attach_picker(targets: list[Any], profiles: list[Profile]) -> None:
    """Give the user-scope Claude Code target the picker rows of every gateway profile."""
    rows = picker_models(profiles)
    for target in targets:
        if isinstance(target, ClaudeSettingsTarget) and target.target_id == "claude":
            target.picker = rows or None


def claude_user_target(config_dir: Path) -> ClaudeSettingsTarget:
    return ClaudeSettingsTarget(config_dir / "settings.json", "claude")


def claude_project_target(
    project: Path, local: bool = False, target_id: str | None = None
) -> ClaudeSettingsTarget:
    """``<project>/.claude/settings.json`` (or ``settings.local.json``); the id defaults to the spec."""
    name = "settings.local.json" if local else "settings.json"
    spec = "claude-local" if local else "claude-project"
    return ClaudeSettingsTarget(project / ".claude" / name, target_id or f"{spec}:{project}")
