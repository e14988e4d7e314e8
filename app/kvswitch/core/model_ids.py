"""The model ids KV Switch puts in a client's own model picker, one per model of each gateway profile.

Choosing ``kvs-<profile>--<model>`` in Claude Code's ``/model`` (or passing it to ``--model``) sends that
request to that profile through the gateway, with the profile's real model id in its place: the picker
is the switch, and no client file is rewritten. The writer (``targets.claude``: ``modelPicker``) and
the gateway (``gateway.relay.model_routes``) share this one table, so what the picker offers is exactly
what the gateway resolves. Ids are looked up whole, never parsed, so a ``--`` inside a model id is harmless.

A profile's part of the id is a function of its name alone (``profile_part``), never of the other
profiles or their order: a picker row written before a profile was added, removed or renamed either still
names the same profile or names none. (Numbering colliding slugs by their order made ``本地`` and ``云端``
``profile`` and ``profile-2``, so removing the first sent its stale rows to the second, a cloud backend.)
A name that is its own slug is its part; any other name adds eight hex digits of its hash, so two names
never share a part.
"""

from __future__ import annotations

import hashlib
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


def profile_part(name: str) -> str:
    """The profile's part of its picker ids: its slug when the name is its own slug (``local``,
    ``qwen-7b``), else the slug and eight hex digits of the name's hash (``local-a-1f0c9e2b``,
    ``profile-5d41a7c3`` for ``本地``): the same for the same name whatever other profiles exist."""
    base = slug(name)
    if base == name:
        return base
    return f"{base}-{hashlib.blake2b(name.encode('utf-8'), digest_size=4).hexdigest()}"


def picker_models(profiles: Iterable[Profile]) -> list[PickerModel]:
    """Every model of every gateway profile, in the user's order."""
    rows: list[PickerModel] = []
    for profile in profiles:
        if not profile.via_gateway:
            continue
        part = profile_part(profile.name)
        for model in profile_models(profile):
            window = f" · {profile.context_window:,} tokens" if profile.context_window else ""
            rows.append(PickerModel(f"{PREFIX}{part}{SEPARATOR}{model}", profile.name, model,
                                    f"{profile.name}: {model}", f"{model}{window} · KV Switch gateway"))
    return rows
