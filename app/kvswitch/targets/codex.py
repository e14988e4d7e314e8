"""Codex: ``$CODEX_HOME/config.toml`` (provider and model) and ``auth.json`` (OpenAI's own key).

The TOML is edited with tomlkit, so comments, key order and unrelated tables survive. KV Switch writes
the top-level ``model`` / ``model_provider`` and one ``[model_providers.<id>]`` table with
``wire_api = "responses"`` (the only wire API current Codex accepts). It never writes the legacy
``[profiles.*]`` tables or ``profile = ...`` (Codex 0.134+ refuses to start with them) and warns when
the user's file still has them.

The key reaches Codex through the env var named by ``env_key`` (``CODEX_KEY_ENV``, exported by the
shell / Windows-environment targets), except for OpenAI's own API, whose built-in provider reads
``auth.json``; that file is merged key by key and kept 0600. Through the gateway, the local token is
the provider's ``experimental_bearer_token`` in ``config.toml`` (kept 0600 then): Codex started from
anywhere (an IDE, a desktop launcher) finds it without a shell target.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import tomlkit
import tomlkit.exceptions
from tomlkit.container import Container
from tomlkit.items import Table

from kvswitch import servers
from kvswitch.core.envmap import CODEX_KEY_ENV, codex_key_env
from kvswitch.core.errors import ConfigParseError, ProfileError
from kvswitch.core.models import Profile, url_password
from kvswitch.core.presets import codex_base_url, is_openai_hosted
from kvswitch.core.strictparse import check_toml
from kvswitch.targets.claude import JsonDocument, parse_json_object, render_json
from kvswitch.targets.codex_models import CATALOG_KEY, catalog_target
from kvswitch.targets.filetarget import StructuredFileTarget
from kvswitch.targets.gateway_view import gateway_codex_url
from kvswitch.targets.keyed import MISSING

DEFAULT_PROVIDER_ID = "kvswitch"
#: keys Codex parses as TOML integers: written as integers, seen by the merge (and the ledger) as text
INTEGER_KEYS = frozenset({"model_context_window"})
BUILTIN_PROVIDERS = frozenset({"openai", "amazon-bedrock", "oss", *servers.codex_provider_ids()})
SHELL_TARGETS = frozenset({"bash", "zsh", "fish", "pwsh", "windows-env"})
#: the provider key Codex sends as ``Authorization: Bearer`` without reading the environment
GATEWAY_TOKEN_KEY = "experimental_bearer_token"


def provider_id(profile: Profile) -> str:
    pid = profile.codex_provider_id or DEFAULT_PROVIDER_ID
    if pid in BUILTIN_PROVIDERS:
        raise ProfileError(
            f"Codex provider id {pid!r} is one of Codex's built-in providers; choose another id"
        )
    return pid


class TomlDocument:
    """A tomlkit document addressed by dotted keys (segments are table names, the last a key)."""

    def __init__(self, doc: tomlkit.TOMLDocument, path: Path | str = "config.toml"):
        self.doc = doc
        self.path = path

    def _node(self, parts: list[str]) -> Any:
        node: Any = self.doc
        for part in parts:
            if not isinstance(node, (Container, Table, dict)) or part not in node:
                return MISSING
            node = node[part]
        return node

    def get(self, key: str) -> Any:
        node = self._node(key.split("."))
        if node is MISSING or isinstance(node, (Container, Table)):
            return MISSING if node is MISSING else _unwrap(node)
        value = _unwrap(node)
        if key in INTEGER_KEYS and isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        return value

    def set(self, key: str, value: Any) -> list[str]:
        if key in INTEGER_KEYS and isinstance(value, str) and value.isdigit():
            value = int(value)
        parts = key.split(".")
        node: Any = self.doc
        created: list[str] = []
        for depth, part in enumerate(parts[:-1]):
            if part not in node:
                node[part] = tomlkit.table(is_super_table=depth == 0 and len(parts) > 2)
                created.append(".".join(parts[: depth + 1]))
            node = node[part]
            if not isinstance(node, (Table, dict)):
                where = ".".join(parts[: depth + 1])
                raise ConfigParseError(self.path, f"'{where}' must be a table to hold '{key}'")
        node[parts[-1]] = value
        return created

    def delete(self, key: str) -> None:
        parts = key.split(".")
        parent = self._node(parts[:-1]) if len(parts) > 1 else self.doc
        if parent is not MISSING and parts[-1] in parent:
            del parent[parts[-1]]

    def container_empty(self, container: str) -> bool | None:
        node = self._node(container.split("."))
        if node is MISSING or not isinstance(node, (Table, dict)):
            return None
        return len(node) == 0

    def delete_container(self, container: str) -> None:
        self.delete(container)

    def is_empty(self) -> bool:
        return len(self.doc) == 0 and not tomlkit.dumps(self.doc).strip()


def _unwrap(item: Any) -> Any:
    return item.unwrap() if hasattr(item, "unwrap") else item


class CodexConfigTarget(StructuredFileTarget):
    """``config.toml``: ``model``, ``model_provider`` and ``[model_providers.<id>]``."""

    #: the gateway profiles' model catalog (``codex_models``), set by the engine for a gateway profile
    catalog_path: str | None = None

    def parse(self, text: str) -> TomlDocument:
        try:
            doc = tomlkit.parse(text)
        except tomlkit.exceptions.ParseError as exc:
            reason = str(exc).split(" at line ")[0]
            raise ConfigParseError(self.path, f"not valid TOML: {reason}", exc.line, exc.col) from None
        check_toml(self.path, text)  # tomlkit is laxer than Codex (trailing commas in inline tables)
        return TomlDocument(doc, self.path)

    def render(self, doc: Any, original: str) -> str:
        text = tomlkit.dumps(doc.doc)
        return text.rstrip("\n") + "\n" if text.strip() else ""

    def desired(self, profile: Profile) -> dict[str, str]:
        server = servers.get(profile.kind)
        if not server.serves_responses_api:
            label = server.label
            raise ProfileError(
                f"profile {profile.name!r} is an {label} profile, which Codex cannot use "
                f"(Codex needs an OpenAI Responses API); remove its codex target"
            )
        wanted: dict[str, str] = {}
        if profile.model:
            wanted["model"] = profile.model
        if is_openai_hosted(profile):
            wanted["model_provider"] = "openai"
            return wanted
        if profile.context_window:
            # Codex knows no local model: without it, it assumes 272k tokens and compacts too late
            wanted["model_context_window"] = str(profile.context_window)
        pid = provider_id(profile)
        wanted["model_provider"] = pid
        base = f"model_providers.{pid}"
        if profile.via_gateway:  # the same entry serves every gateway profile: no per-profile name
            wanted[f"{base}.name"] = "KV Switch gateway"
            wanted[f"{base}.base_url"] = gateway_codex_url(profile)
            if self.catalog_path:  # every gateway profile's models in Codex's model choice
                wanted[CATALOG_KEY] = self.catalog_path
        else:
            wanted[f"{base}.name"] = f"KV Switch: {profile.name}"
            wanted[f"{base}.base_url"] = codex_base_url(profile)
        wanted[f"{base}.wire_api"] = "responses"
        if profile.via_gateway and profile.key:
            # the local token, where Codex reads a provider's key without a shell (measured on Codex
            # 0.169.0 and 0.171.0: with only env_key and no exported variable it stops at once with
            # "Missing environment variable"); the file is then kept 0600 like any file holding a key
            wanted[f"{base}.{GATEWAY_TOKEN_KEY}"] = profile.key
            return wanted
        key_env = codex_key_env(profile)
        if key_env:
            wanted[f"{base}.env_key"] = key_env
        return wanted

    def profile_secrets(self, profile: Profile) -> list[str]:
        """The key never goes into config.toml; a password in the base URL does (masked in every diff)."""
        password = url_password(codex_base_url(profile))
        found = [password] if password else []
        if profile.via_gateway and profile.key:
            found.append(profile.key)  # the gateway's local token (this target gets the gateway view)
        return found

    def extra_warnings(self, doc: Any) -> list[str]:
        notes = []
        if "profile" in doc.doc:
            notes.append(
                f"{self.path} has a legacy top-level 'profile = ...', which Codex 0.134+ refuses; "
                "remove it (KV Switch leaves it alone)"
            )
        if "profiles" in doc.doc:
            notes.append(
                f"{self.path} has legacy [profiles.*] tables, which Codex 0.134+ refuses; move them to "
                "<name>.config.toml files (KV Switch leaves them alone)"
            )
        return notes

    def plan(self, profile: Profile | None, owned: dict[str, str]) -> Any:
        plan = super().plan(profile, owned)
        if (
            profile is not None
            and codex_key_env(profile)
            and not profile.via_gateway
            and not is_openai_hosted(profile)
            and not SHELL_TARGETS.intersection(profile.targets)
        ):
            plan.warnings.append(
                f"Codex reads this profile's key from ${CODEX_KEY_ENV}; add a shell target "
                "(bash, zsh, fish, pwsh) or export it yourself"
            )
        return plan


class CodexAuthTarget(StructuredFileTarget):
    """``auth.json``: only ``OPENAI_API_KEY``, only for OpenAI's own API; ChatGPT login tokens stay."""

    secret_file = True

    def parse(self, text: str) -> JsonDocument:
        return JsonDocument(parse_json_object(self.path, text), self.path)

    def render(self, doc: Any, original: str) -> str:
        return render_json(doc.data, original)

    def desired(self, profile: Profile) -> dict[str, str]:
        if is_openai_hosted(profile) and profile.key:
            return {"OPENAI_API_KEY": profile.key}
        return {}


def codex_targets(codex_home: Path) -> list[StructuredFileTarget]:
    return [
        CodexConfigTarget(codex_home / "config.toml", "codex"),
        CodexAuthTarget(codex_home / "auth.json", "codex-auth"),
        catalog_target(codex_home),
    ]
