"""Every gateway profile's models in Codex's own model choice (``/model``, ``codex debug models``).

Codex (0.169.0 and 0.171.0, measured) builds its model list from a catalog: the one bundled in the
binary, or, when ``config.toml`` names one, the file ``model_catalog_json`` points to, which then
*replaces* the bundled list (the built-in OpenAI models, which a gateway profile's backend does not
serve, disappear, as ``replaceBuiltInOptions`` does in Claude Code). Each record must be a full model
record: both versions refuse to start without ``supported_reasoning_levels``, ``shell_type``,
``visibility``, ``supported_in_api``, ``priority``, ``support_verbosity``, ``truncation_policy``,
``experimental_supported_tools`` and ``base_instructions`` (found by ``codex debug models`` with the
file). KV Switch writes ``$CODEX_HOME/kvswitch-models.json`` (one key, ``models``, that it owns; a user's
own keys in the file are kept) and ``model_catalog_json`` in ``config.toml``; undo removes both.
Choosing ``kvs-<profile>--<model>`` (``/model`` or ``codex exec -m``) then goes to that profile
through the gateway (``gateway.model_routes``), with no client file rewritten.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kvswitch.core.model_ids import PickerModel, picker_models
from kvswitch.core.models import Profile
from kvswitch.core.strictparse import loads_json
from kvswitch.targets.claude import JsonDocument, canonical_json, parse_json_object, render_json
from kvswitch.targets.filetarget import StructuredFileTarget

CATALOG_FILE = "kvswitch-models.json"
CATALOG_KEY = "model_catalog_json"
MODELS_KEY = "models"
#: Codex's own instructions stay with OpenAI's models; a local model gets this short, neutral one
#: (the record must carry instructions, and the catalog replaces Codex's fallback for unknown models)
INSTRUCTIONS = (
    "You are Codex, a coding agent running in the user's terminal. Help with the user's code: read "
    "files, run commands with the tools you are given, make the changes asked for, and report briefly."
)
_EFFORTS = ("low", "medium", "high")


def catalog_record(row: PickerModel, priority: int, context_window: int | None) -> dict[str, Any]:
    """One model record in the shape Codex's catalog parser requires (the keys it refuses without)."""
    record: dict[str, Any] = {
        "slug": row.id,
        "display_name": row.label,
        "description": row.description,
        "base_instructions": INSTRUCTIONS,
        "supported_reasoning_levels": [{"effort": e, "description": e} for e in _EFFORTS],
        "default_reasoning_level": "medium",
        "shell_type": "default",
        "visibility": "list",
        "supported_in_api": True,
        "priority": priority,
        "support_verbosity": False,
        "truncation_policy": {"mode": "tokens", "limit": 10000},
        "experimental_supported_tools": [],
        "input_modalities": ["text"],
    }
    if context_window:
        record["context_window"] = context_window
    return record


def catalog_text(rows: list[PickerModel], profiles: list[Profile]) -> str:
    """The ``models`` list as the ledger holds it (canonical JSON text), in the user's order."""
    windows = {p.name: p.context_window for p in profiles}
    records = [catalog_record(r, n, windows.get(r.profile)) for n, r in enumerate(rows)]
    return canonical_json(records)


class CatalogDocument(JsonDocument):
    """The catalog file, whose ``models`` list the merge sees as one text value."""

    def get(self, key: str) -> Any:
        value = super().get(key)
        return canonical_json(value) if key == MODELS_KEY and isinstance(value, list) else value

    def set(self, key: str, value: Any) -> list[str]:
        if key == MODELS_KEY and isinstance(value, str):
            value = loads_json(self.path, value)  # our own canonical text
        return super().set(key, value)


class CodexCatalogTarget(StructuredFileTarget):
    """``$CODEX_HOME/kvswitch-models.json``: the gateway profiles' models, for Codex's model choice."""

    #: set by the engine (``attach_codex_picker``) when a gateway profile is applied
    catalog: str | None = None

    def parse(self, text: str) -> JsonDocument:
        return CatalogDocument(parse_json_object(self.path, text), self.path)

    def render(self, doc: Any, original: str) -> str:
        return render_json(doc.data, original)

    def desired(self, profile: Profile) -> dict[str, str]:
        if self.catalog and profile.via_gateway:
            return {MODELS_KEY: self.catalog}
        return {}


def catalog_target(codex_home: Path) -> CodexCatalogTarget:
    return CodexCatalogTarget(codex_home / CATALOG_FILE, "codex-models")


def attach_codex_picker(targets: list[Any], profiles: list[Profile]) -> None:
    """Give the Codex targets every gateway profile's models (``config.toml`` then names the file)."""
    rows = picker_models(profiles)
    text = catalog_text(rows, profiles) if rows else None
    catalogs = [t for t in targets if isinstance(t, CodexCatalogTarget)]
    for target in catalogs:
        target.catalog = text
    for target in targets:
        if hasattr(target, "catalog_path") and catalogs:
            target.catalog_path = str(catalogs[0].path) if text else None
