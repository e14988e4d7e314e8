"""The model ids KV Switch puts in a client's own model picker, one per model of each gateway profile.

Choosing ``kvs-<profile>--<model>`` in Claude Code's ``/model`` (or passing it to ``--model``) sends that
request to that profile through the gateway, with the profile's real model id in its place: the picker
is the switch, and no client file is rewritten. The writer (``targets.claude``: ``modelPicker``) and
the gateway (``gateway.model_routes``) share this one table, so what the picker offers is exactly what
the gateway resolves. Ids are looked up whole, never parsed, so a ``--`` inside a model id is harmless.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kvswitch.core.models import Profile

PREFIX = "kvs-"
SEPARATOR = "--"
_NOT_SLUG = re.compile(r"[^a-z0-9._]+")
_TIERS = ("opus", "sonnet", "haiku", "small_fast", "subagent")


@dataclass(frozen=True)
class PickerModel:
    """One picker row: ``id`` is what the client sends, ``model`` what the profile's upstream gets."""

    id: str
    profile: str
    model: str
    label: str
    description: str


def profile_models(profile: Profile) -> list[str]:
    """The models a profile names (its model, then its per-role models), each once."""
    named = [profile.model, *(getattr(profile.models, tier) for tier in _TIERS)]
    return list(dict.fromkeys(m for m in named if m))


def slug(name: str) -> str:
    """A profile name as an id part: lower case, runs of anything but ``a-z0-9._`` as one ``-``."""
    return _NOT_SLUG.sub("-", name.casefold()).strip("-") or "profile"


def picker_models(profiles: Iterable[Profile]) -> list[PickerModel]:
    """Every model of every gateway profile, in the user's order (two profiles whose names give the
    same slug get ``-2``, ``-3``... so no id is ever shared)."""
    rows: list[PickerModel] = []
    taken: set[str] = set()
    for profile in profiles:
        if not profile.via_gateway:
            continue
        base = slug(profile.name)
        part, number = base, 2
        while part in taken:
            part, number = f"{base}-{number}", number + 1
        taken.add(part)
        for model in profile_models(profile):
            window = f" · {profile.context_window:,} tokens" if profile.context_window else ""
            rows.append(PickerModel(f"{PREFIX}{part}{SEPARATOR}{model}", profile.name, model,
                                    f"{profile.name}: {model}", f"{model}{window} · KV Switch gateway"))
    return rows
