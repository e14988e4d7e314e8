"""Merge planning shared by the structured-file targets (JSON settings, TOML config, auth.json).

A target exposes its file as a flat key space (``env.ANTHROPIC_BASE_URL``, ``model_providers.x.base_url``)
and this module decides, from the ledger's ``owned`` map, what to set, remove or give back:

- keys the profile wants are set; a value the user had there before is remembered (``@prior:KEY``) and
  given back when no profile sets that key any more;
- keys a previous apply wrote and the new profile does not want are removed, unless the user edited
  them since (then they are the user's again, and the plan says so);
- containers KV Switch created (``@created:env``; ``@created:`` for the whole file) are removed again
  once empty.

Everything else in the file is never looked at, let alone rewritten.
"""

from __future__ import annotations

import json
import re
from abc import abstractmethod
from dataclasses import dataclass, field
from typing import Any, Protocol

from kvswitch.core.envmap import NO_KEY_PLACEHOLDER
from kvswitch.core.models import mask_secret
from kvswitch.core.strictparse import loads as strict_json

PRIOR = "@prior:"
CREATED = "@created:"
#: ``_TOKENS`` at the end of a name is a count (``CLAUDE_CODE_MAX_CONTEXT_TOKENS``), not a credential
SECRET_NAME_RE = re.compile(r"KEY|TOKEN(?!S$)|SECRET|PASSWORD|AUTH", re.IGNORECASE)


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


MISSING: Any = _Missing()


class KeyedDocument(Protocol):
    """A parsed file seen as dotted keys; ``set`` returns the containers it had to create."""

    def get(self, key: str) -> Any: ...

    def set(self, key: str, value: Any) -> list[str]: ...

    def delete(self, key: str) -> None: ...

    def container_empty(self, container: str) -> bool | None:
        """``True``/``False``; ``None`` when the container does not exist."""

    def delete_container(self, container: str) -> None: ...

    def is_empty(self) -> bool: ...


@dataclass
class KeyPlan:
    changes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    owned: dict[str, str] = field(default_factory=dict)
    secrets: list[str] = field(default_factory=list)
    remove_file: bool = False


def is_secret_key(key: str) -> bool:
    """Whether a key's value is a credential (``env.ANTHROPIC_AUTH_TOKEN``; not Codex's ``env_key`` name)."""
    leaf = key.rsplit(".", 1)[-1]
    return leaf != "env_key" and bool(SECRET_NAME_RE.search(leaf))


def show(key: str, value: Any) -> str:
    """A value for a human message, masked when the key names a secret."""
    if value is MISSING:
        return "(absent)"
    if is_secret_key(key) and isinstance(value, str) and value != NO_KEY_PLACEHOLDER:
        return mask_secret(value)
    return json.dumps(value, ensure_ascii=False, default=str)


def _dump_prior(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return json.dumps(str(value), ensure_ascii=False)


def plan_keys(
    doc: KeyedDocument, desired: dict[str, str], owned: dict[str, str], *, file_existed: bool
) -> KeyPlan:
    """Mutate ``doc`` from its current state to ``desired`` and say what changed and what is now owned."""
    result = KeyPlan()
    values = {k: v for k, v in owned.items() if not k.startswith("@")}
    priors = {k[len(PRIOR) :]: v for k, v in owned.items() if k.startswith(PRIOR)}
    created = {k[len(CREATED) :] for k, v in owned.items() if k.startswith(CREATED)}
    if not file_existed:
        created = {""}  # a file that is missing now is ours if we create it (any old marker is stale)
    for key, value in desired.items():
        current = doc.get(key)
        if key in values:
            if current is MISSING:
                result.warnings.append(f"{key} was removed by hand since the last apply; it is set again")
            elif current != values[key]:
                result.warnings.append(
                    f"{key} was changed by hand since the last apply (now {show(key, current)}); "
                    f"it is replaced by the profile's value"
                )
            if key in priors:
                result.owned[PRIOR + key] = priors[key]
        elif current is not MISSING:
            if current != value:
                result.warnings.append(
                    f"{key} was set by hand to {show(key, current)}; the profile replaces it "
                    f"and KV Switch puts your value back when no profile sets it"
                )
            result.owned[PRIOR + key] = _dump_prior(current)
        if current != value:
            for container in doc.set(key, value):
                created.add(container)
            result.changes.append(f"{'set' if current is MISSING else 'change'} {key} = {show(key, value)}")
        result.owned[key] = value
        _collect_secrets(result, key, value, current)
    for key, written in values.items():
        if key in desired:
            continue
        current = doc.get(key)
        _collect_secrets(result, key, written, current)
        if current is MISSING:
            continue
        if current != written:
            result.warnings.append(
                f"{key} was changed by hand since the last apply (now {show(key, current)}); "
                f"kept, and no longer managed by KV Switch"
            )
            continue
        if key in priors:
            prior = strict_json(priors[key])
            doc.set(key, prior)
            result.changes.append(f"restore {key} = {show(key, prior)} (your value from before KV Switch)")
            _collect_secrets(result, key, prior, MISSING)
        else:
            doc.delete(key)
            result.changes.append(f"remove {key}")
    for container in sorted(created - {""}, key=lambda c: -c.count(".")):
        state = doc.container_empty(container)
        if state is None:
            continue
        if state:
            doc.delete_container(container)
            result.changes.append(f"remove empty {container}")
        else:
            result.owned[CREATED + container] = "1"
    if "" in created:
        if doc.is_empty():
            result.remove_file = file_existed
            if file_existed:
                result.changes.append("remove the file (KV Switch created it and nothing else is in it)")
        else:
            result.owned[CREATED] = "1"
    return result


def revert_keys(
    doc: KeyedDocument, old: KeyedDocument, before_owned: dict[str, str], after_owned: dict[str, str]
) -> KeyPlan:
    """Undo one apply in a file the user edited since: put back what the apply changed, keep the rest.

    ``old`` is the file as it was before the apply. A key whose current value is no longer what the
    apply wrote was edited by hand; it is kept and reported.
    """
    result = KeyPlan()
    keys = [k for k in {**before_owned, **after_owned} if not k.startswith("@")]
    for key in keys:
        current = doc.get(key)
        previous = old.get(key)
        _collect_secrets(result, key, previous, current)
        if current == previous:
            continue
        if current != _left_by_apply(key, before_owned, after_owned):
            how = "changed" if key in after_owned else "set"
            result.warnings.append(f"{key} was {how} by hand after the last apply; kept as it is")
            continue
        if previous is MISSING:
            doc.delete(key)
            result.changes.append(f"remove {key}")
        else:
            doc.set(key, previous)
            result.changes.append(f"restore {key} = {show(key, previous)}")
    for marker in after_owned:
        if marker.startswith(CREATED) and marker not in before_owned:
            container = marker[len(CREATED) :]
            if container and doc.container_empty(container):
                doc.delete_container(container)
                result.changes.append(f"remove empty {container}")
            elif not container and doc.is_empty():
                result.remove_file = True
    result.owned = dict(before_owned)
    return result


def _left_by_apply(key: str, before_owned: dict[str, str], after_owned: dict[str, str]) -> Any:
    """What the apply wrote at ``key``: its value, or for a key it let go of, the user's value from before
    KV Switch that it put back (``MISSING`` when there was none and the key was removed)."""
    if key in after_owned:
        return after_owned[key]
    prior = before_owned.get(PRIOR + key)
    return MISSING if prior is None else strict_json(prior)


def _collect_secrets(result: KeyPlan, key: str, *values: Any) -> None:
    if not is_secret_key(key):
        return
    for value in values:
        if value == NO_KEY_PLACEHOLDER:
            continue  # not a key: shown as it is, so the preview explains itself
        if isinstance(value, str) and value and value not in result.secrets:
            result.secrets.append(value)


class TextCodec:
    """Keeps a file's byte-level conventions (UTF-8 BOM, CRLF) across a rewrite.

    Parsers see plain ``\\n`` text without BOM; ``encode`` puts both back as the file had them.
    """

    def __init__(self, raw: bytes | None):
        self.bom = bool(raw and raw.startswith(b"\xef\xbb\xbf"))
        self.crlf = bool(raw and b"\r\n" in raw and raw.count(b"\r\n") >= raw.count(b"\n") / 2)

    def decode(self, raw: bytes) -> str:
        text = raw.decode("utf-8-sig" if self.bom else "utf-8")
        return text.replace("\r\n", "\n")

    def encode_text(self, text: str) -> str:
        """The exact text to write (BOM + CRLF restored)."""
        if self.crlf:
            text = text.replace("\n", "\r\n")
        return ("\ufeff" + text) if self.bom else text

    @staticmethod
    def to_bytes(text: str) -> bytes:
        return text.encode("utf-8")


class Revertible(Protocol):
    """A target that can undo its own changes key by key when the file was edited since."""

    @abstractmethod
    def plan_revert(
        self, before: bytes | None, before_owned: dict[str, str], after_owned: dict[str, str]
    ) -> Any: ...
