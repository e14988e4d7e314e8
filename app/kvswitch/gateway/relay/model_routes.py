"""A request whose model is a picker id (``kvs-<profile>--<model>``, ``core.model_ids``) goes to that
profile, with that profile's real model id in its body: the client's own model picker switches backends.

Called from ``service.GatewayHandler.candidates`` (which profile) and ``_plan`` (which model). The table
is built once per copy of the profiles the handler holds, so a request costs one dict lookup.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvswitch.core.model_ids import PREFIX, PickerModel, picker_models
from kvswitch.core.models import Profile

_cache: tuple[int, dict[str, PickerModel]] | None = None


def _table(profiles: Mapping[str, Profile]) -> dict[str, PickerModel]:
    global _cache  # noqa: PLW0603 - one table per copy of the profiles, rebuilt when that copy changes
    if _cache is None or _cache[0] != id(profiles):
        _cache = (id(profiles), {row.id: row for row in picker_models(profiles.values())})
    return _cache[1]


def picker_id(body: Any) -> str | None:
    """The body's ``model`` when it has the picker ids' prefix, else ``None``."""
    model = body.get("model") if isinstance(body, dict) else None
    return model if isinstance(model, str) and model.startswith(PREFIX) else None


def picked(body: Any, profiles: Mapping[str, Profile]) -> PickerModel | None:
    """The picker row a request body's ``model`` names, or ``None`` (not a picker id, or a profile that
    is gone or no longer goes through the gateway)."""
    model = picker_id(body)
    return None if model is None else _table(profiles).get(model)


def stale_picker_id(body: Any, profiles: Mapping[str, Profile]) -> str | None:
    """The body's ``model`` when it is a picker id that names no gateway profile now, else ``None``.

    Such a request is refused, never sent to the client's active profile: the row the user chose named
    one backend (perhaps a local one, chosen for privacy), and any other one is a guess."""
    model = picker_id(body)
    return model if model is not None and model not in _table(profiles) else None


def upstream_model(model: str, profile: Profile, profiles: Mapping[str, Profile]) -> str | None:
    """The real model id for ``model`` when it is one of ``profile``'s picker ids, else ``None`` (a
    fallback profile then maps it as any other model)."""
    if not model.startswith(PREFIX):
        return None
    row = _table(profiles).get(model)
    return row.model if row is not None and row.profile == profile.name else None
