"""OpenCode: one provider in ``opencode.json`` (the user's ``~/.config/opencode/``, or a project's own
for ``opencode-project:DIR``).

OpenCode reads JSONC, so the file is parsed with comments and trailing commas allowed and edited in
place (``jsonsplice`` with ``blank_jsonc``): comments survive, and only the members KV Switch owns
change. What is written, merged key by key and undoable like every target:

- ``provider.<id>``: ``npm = "@ai-sdk/openai-compatible"``, a ``name``, ``options.baseURL`` (the
  server's OpenAI ``/v1`` root) and ``options.apiKey = "{env:KVSWITCH_API_KEY}"`` (OpenCode resolves
  the reference at start-up; the key itself never enters the file, the shell targets export it);
- ``provider.<id>.models.<model>`` with its ``name`` and, when the server's context window is known,
  ``limit.context`` and ``limit.output`` (OpenCode budgets and compacts by them);
- ``model = "<id>/<model>"``.

Model ids may contain dots (``qwen2.5-coder``), which the dotted key space uses as its separator: such
a dot is carried as ``MODEL_DOT`` in keys and turned back into a dot in the file.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kvswitch import servers
from kvswitch.core.envmap import CODEX_KEY_ENV, codex_key_env
from kvswitch.core.errors import ConfigParseError, ProfileError
from kvswitch.core.models import Profile
from kvswitch.core.paths import opencode_config_dir
from kvswitch.core.presets import codex_base_url
from kvswitch.targets.claude import JsonDocument, detect_indent, render_json
from kvswitch.targets.filetarget import StructuredFileTarget
from kvswitch.targets.jsonc import blank_jsonc, parse_jsonc_object
from kvswitch.targets.jsonsplice import splice_json
from kvswitch.targets.keyed import MISSING

DEFAULT_PROVIDER_ID = "kvswitch"
PROVIDER_PACKAGE = "@ai-sdk/openai-compatible"
#: a dot inside one key segment (a model id); shown as a dot leader, written as a dot
MODEL_DOT = "\u2024"
#: keys whose values OpenCode wants as numbers: written as numbers, seen by the merge as text
_NUMBER_LEAVES = ("limit.context", "limit.output")
#: the output limit written beside the context window: a quarter of it, at most this many tokens
MAX_OUTPUT_TOKENS = 32768
SHELL_TARGETS = frozenset({"bash", "zsh", "fish", "pwsh", "windows-env"})


def config_file(directory: Path) -> Path:
    """``opencode.json``, or the user's ``opencode.jsonc`` when that is the one that exists."""
    jsonc = directory / "opencode.jsonc"
    plain = directory / "opencode.json"
    return jsonc if jsonc.is_file() and not plain.exists() else plain


def output_limit(context: int) -> int:
    return max(256, min(MAX_OUTPUT_TOKENS, context // 4))


def _is_number_key(key: str) -> bool:
    return key.endswith(_NUMBER_LEAVES)


class OpenCodeDocument(JsonDocument):
    """The JSON document addressed by dotted keys whose segments may carry ``MODEL_DOT``, with the
    limits as numbers in the file and as text to the merge (the ledger holds text)."""

    def get(self, key: str) -> Any:
        value = super().get(key)
        if _is_number_key(key) and isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        return value

    def set(self, key: str, value: Any) -> list[str]:
        if _is_number_key(key) and isinstance(value, str) and value.isdigit():
            value = int(value)
        return super().set(key, value)

    def _parent(self, key: str, create: bool) -> tuple[dict[str, Any] | None, str, list[str]]:
        segments = key.split(".")
        names = [segment.replace(MODEL_DOT, ".") for segment in segments]
        node: Any = self.data
        created: list[str] = []
        for depth, name in enumerate(names[:-1]):
            child = node.get(name, MISSING)
            if child is MISSING:
                if not create:
                    return None, names[-1], created
                child = {}
                node[name] = child
                created.append(".".join(segments[: depth + 1]))
            if not isinstance(child, dict):
                if create:
                    where = ".".join(names[: depth + 1])
                    raise ConfigParseError(self.path, f"'{where}' must be an object to hold '{key}'")
                return None, names[-1], created
            node = child
        return node, names[-1], created


class OpenCodeTarget(StructuredFileTarget):
    """``opencode.json``: ``provider.<id>`` for the profile's server and ``model``."""

    def parse(self, text: str) -> OpenCodeDocument:
        return OpenCodeDocument(parse_jsonc_object(self.path, text), self.path)

    def render(self, doc: Any, original: str) -> str:
        if original.strip():
            unit = _indent_unit(original)
            edited = splice_json(original, doc.data, unit, blank=blank_jsonc)
            if edited is not None:
                return edited if edited.endswith("\n") else edited + "\n"
        return render_json(doc.data, "")

    def desired(self, profile: Profile) -> dict[str, str]:
        if profile.via_gateway:  # a profile saved before 'profile add' refused this (route_check)
            raise ProfileError(
                f"profile {profile.name!r} goes through the gateway, which has no route for OpenCode "
                "(it would wait on Claude Code's Messages route); give the opencode target a --direct profile"
            )
        if not servers.get(profile.kind).serves_responses_api:
            raise ProfileError(
                f"profile {profile.name!r} speaks only the Messages API, which OpenCode's "
                "OpenAI-compatible provider cannot use; remove its opencode target"
            )
        pid = profile.codex_provider_id or DEFAULT_PROVIDER_ID
        base = f"provider.{pid}"
        wanted = {
            f"{base}.npm": PROVIDER_PACKAGE,
            f"{base}.name": f"KV Switch: {profile.name}",
            f"{base}.options.baseURL": codex_base_url(profile),
        }
        key_env = codex_key_env(profile)
        if key_env:
            wanted[f"{base}.options.apiKey"] = "{env:" + key_env + "}"
        if profile.model:
            model = f"{base}.models.{profile.model.replace('.', MODEL_DOT)}"
            wanted[f"{model}.name"] = profile.model
            if profile.context_window:
                wanted[f"{model}.limit.context"] = str(profile.context_window)
                wanted[f"{model}.limit.output"] = str(output_limit(profile.context_window))
            wanted["model"] = f"{pid}/{profile.model}"
        return wanted

    def profile_secrets(self, profile: Profile) -> list[str]:
        return []  # the key never goes into the file, only its variable's name

    def plan(self, profile: Profile | None, owned: dict[str, str]) -> Any:
        plan = super().plan(profile, owned)
        if profile is not None and codex_key_env(profile) and not SHELL_TARGETS.intersection(profile.targets):
            plan.warnings.append(
                f"OpenCode reads this profile's key from ${CODEX_KEY_ENV}; add a shell target "
                "(bash, zsh, fish, pwsh) or export it yourself"
            )
        return plan


def _indent_unit(text: str) -> str:
    indent = detect_indent(text)
    return indent if isinstance(indent, str) else " " * indent


def opencode_user_target(env: Mapping[str, str]) -> OpenCodeTarget:
    return OpenCodeTarget(config_file(opencode_config_dir(env)), "opencode")


def opencode_project_target(project: Path, target_id: str) -> OpenCodeTarget:
    """``<project>/opencode.json`` (or its ``opencode.jsonc``): OpenCode reads it over the user's file."""
    return OpenCodeTarget(config_file(project), target_id)
