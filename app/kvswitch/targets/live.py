"""Which profile each client runs now, read from that client's own files.

"The profile last applied" is one name for all clients and goes stale the moment a Claude-only profile
is followed by a Codex-only one, a file is edited by hand, or CC Switch switches a provider. What a
client runs is in its file: Claude Code's ``settings.json`` (user scope and every project scope KV
Switch wrote), Codex's ``config.toml``/``auth.json``, OpenCode's ``opencode.json``, each shell's
managed block. Each file is matched against the profiles the way the writers would write them:

1. a profile whose every key is in the file (``Target.desired``: what ``use`` writes) matches exactly;
2. else a profile whose URL, key and model the client would use (``live_readers``: read as the client
   reads them) matches too: a file written by CC Switch or by hand is recognised after an import;
3. a file that points at KV Switch's gateway runs the profile the gateway routes that client to
   (``core.gateway_config.read_routes``), whatever model the file still names;
4. a profile the ledger says was applied to the file that no longer matches it is ``differs``
   (edited by hand, or the profile was saved without writing it through): ``profile`` then names
   that profile, so one click can apply it again.

Pure: reads files only (the gateway token is read, never issued). Used by ``kvswitch current``, the
window's per-client badges and tray sections, and the write-through of a saved profile.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import SecretStr

from kvswitch.core.envmap import shell_env
from kvswitch.core.errors import KvSwitchError
from kvswitch.core.gateway_config import GatewayClient, Routes, load_token, read_routes
from kvswitch.core.ledger import Ledger
from kvswitch.core.models import Profile, ProfileKind
from kvswitch.core.paths import AppPaths, home_dir
from kvswitch.targets.live_readers import CLAUDE_KEYS, OPENAI_BUILTIN, LiveReader, Role
from kvswitch.targets.registry import SHELLS, targets_for_spec

__all__ = ["LiveClient", "client_label", "client_of_target", "live_clients"]


@dataclass(frozen=True)
class LiveClient:
    """One client (or one Claude Code scope, one shell) and the profile it runs now.

    ``key`` is stable (``claude:user``, ``claude:project:<dir>``, ``claude:local:<dir>``, ``codex``,
    ``opencode``, ``opencode:project:<dir>``, ``shell:bash``...); ``label`` is English, the window
    translates its client part. ``profile`` is ``None`` when no profile matches; when ``differs`` is
    true it names the profile recorded for this file, which the file no longer matches.
    ``target_id`` is the engine's id of the file (``claude``, ``claude-project:/src/x``, ``codex``...).
    """

    key: str
    client: str
    label: str
    path: Path | None
    profile: str | None
    via_gateway: bool
    differs: bool
    detail: str
    target_id: str = ""

    def as_json(self) -> dict[str, object]:
        return {"key": self.key, "client": self.client, "label": self.label,
                "path": str(self.path) if self.path else None, "profile": self.profile,
                "via_gateway": self.via_gateway, "differs": self.differs, "detail": self.detail,
                "target": self.target_id}


@dataclass(frozen=True)
class _Spec:
    """How to read one client and what a profile would put there."""

    key: str
    client: str
    label: str
    target_spec: str  # the profile target that writes this file
    target_id: str  # the ledger's id for it
    gateway: GatewayClient | None
    env: Mapping[str, str]

    def reader(self) -> LiveReader:
        from kvswitch.targets import live_readers as readers  # noqa: PLC0415 - same package

        targets = targets_for_spec(self.target_spec, self.env)
        if self.client == "shell":
            return readers.ShellReader(targets[0])  # type: ignore[arg-type]
        if self.client == "codex":
            return readers.CodexReader(targets)  # type: ignore[arg-type]
        if self.client == "opencode":
            return readers.OpenCodeReader(targets)  # type: ignore[arg-type]
        return readers.ClaudeReader(targets)  # type: ignore[arg-type]

    def wanted(self, view: Profile) -> dict[str, str]:
        """Every key the writer puts in this client's file(s) for ``view``."""
        if self.client == "shell":
            return shell_env(view)
        wanted: dict[str, str] = {}
        for target in targets_for_spec(self.target_spec, self.env):
            wanted.update(target.desired(view))  # type: ignore[attr-defined]
        return wanted

    def identity(self, view: Profile, wanted: Mapping[str, str]) -> dict[Role, str]:
        """The URL, key and model the client would run with for ``view`` (roles it leaves open omitted)."""
        found: dict[Role, str | None] = {"model": view.model}
        if self.client in ("claude", "shell"):
            prefix = "env." if self.client == "claude" else ""
            found["url"] = wanted.get(f"{prefix}ANTHROPIC_BASE_URL")
            names = [f"{prefix}{n}" for n in CLAUDE_KEYS]
            found["key"] = next((wanted[n] for n in names if n in wanted), None)
        elif self.client == "codex":
            provider = wanted.get("model_provider")
            own_url = wanted.get(f"model_providers.{provider}.base_url")
            found["url"] = OPENAI_BUILTIN if provider == "openai" else own_url
            found["key"] = wanted.get("OPENAI_API_KEY")
        else:
            found["url"] = next((v for k, v in wanted.items() if k.endswith(".options.baseURL")), None)
        return {role: value for role, value in found.items() if value}


def client_of_target(target_id: str) -> str:
    """The client a ledger target id belongs to (``claude-project:/x`` -> ``claude``)."""
    head = target_id.partition(":")[0]
    if head.startswith("claude"):
        return "claude"
    if head.startswith("codex"):
        return "codex"
    if head.startswith("opencode"):
        return "opencode"
    return "shell" if head in SHELLS or head == "windows-env" else head


_CLIENT_NAMES = {"claude": "Claude Code", "codex": "Codex", "opencode": "OpenCode"}


def client_label(target_id: str, env: Mapping[str, str] | None = None) -> str:
    """How a message names the client a target id writes (``Claude Code (project ~/x)``, ``Codex``,
    ``bash``); Codex's two files are one client."""
    env = os.environ if env is None else env
    client = client_of_target(target_id)
    head, _, directory = target_id.partition(":")
    if client == "shell":
        return head
    name = _CLIENT_NAMES.get(client, head)
    if not directory:
        return name
    suffix = ", local" if head == "claude-local" else ""
    return f"{name} (project {_home_relative(Path(directory), env)}{suffix})"


def live_clients(
    paths: AppPaths, profiles: Sequence[Profile], env: Mapping[str, str] | None = None
) -> list[LiveClient]:
    """Every client KV Switch knows of, each with the profile its live file says it runs."""
    env = os.environ if env is None else env
    recorded = _recorded(paths)
    try:
        routes = read_routes(paths)
    except KvSwitchError:
        routes = Routes()
    token = load_token(paths)
    views = {p.name: _client_view(p, routes, token) for p in profiles}
    return [_judge(spec, profiles, views, recorded, routes) for spec in _specs(env, recorded, profiles)]


def _recorded(paths: AppPaths) -> dict[str, tuple[str, bool]]:
    """Ledger target id -> (the profile recorded there, whether KV Switch wrote keys there): applied
    by KV Switch, or only marked live by an import (``live_sync.mark_live``). Unreadable ledger: none."""
    try:
        state = Ledger(paths.state_file).load()
    except KvSwitchError:
        return {}
    targets = state.targets.items()
    return {tid: (record.profile, bool(record.owned)) for tid, record in targets if record.profile}


def _client_view(profile: Profile, routes: Routes, token: str | None) -> Profile | None:
    """``profile`` as its writers put it in the files (``gateway_view.client_view`` without issuing a
    token: before the first gateway apply no file can hold one, so a gateway profile matches none)."""
    if not profile.via_gateway:
        return profile
    if token is None:
        return None
    return profile.model_copy(update={"base_url": routes.client_url("claude"), "api_key": SecretStr(token),
                                      "key_env": "ANTHROPIC_AUTH_TOKEN", "kind": ProfileKind.CUSTOM})


def _specs(
    env: Mapping[str, str], recorded: Mapping[str, object], profiles: Sequence[Profile]
) -> list[_Spec]:
    specs = [_Spec("claude:user", "claude", "Claude Code", "claude", "claude", "claude", env)]
    for target_id in sorted(recorded):
        head, _, directory = target_id.partition(":")
        if not directory or head not in ("claude-project", "claude-local", "opencode-project"):
            continue
        scope = {"claude-project": "project", "claude-local": "local"}.get(head, "project")
        client = client_of_target(target_id)
        specs.append(_Spec(f"{client}:{scope}:{directory}", client, client_label(target_id, env),
                           target_id, target_id, "claude" if client == "claude" else None, env))
    specs.append(_Spec("codex", "codex", "Codex", "codex", "codex", "codex", env))
    specs.append(_Spec("opencode", "opencode", "OpenCode", "opencode", "opencode", None, env))
    targeted = {t for p in profiles for t in p.targets}
    for shell in SHELLS:
        if shell in recorded or shell in targeted:
            specs.append(_Spec(f"shell:{shell}", "shell", shell, shell, shell, "claude", env))
    return specs


def _home_relative(path: Path, env: Mapping[str, str]) -> str:
    try:
        return "~/" + str(path.relative_to(home_dir(env)))
    except ValueError:
        return str(path)


@dataclass(frozen=True)
class _Candidate:
    profile: Profile
    missed: tuple[str, ...]  # keys of ``wanted`` the file does not hold
    weight: int  # how much of the file it explains (more keys / roles: the more specific profile)


def _judge(spec: _Spec, profiles: Sequence[Profile], views: Mapping[str, Profile | None],
           recorded: Mapping[str, tuple[str, bool]], routes: Routes) -> LiveClient:
    name, wrote = recorded.get(spec.target_id, ("", False))
    expected = _known(name, profiles)
    result = _result_for(spec)
    try:
        reader = spec.reader()
    except KvSwitchError as exc:
        return result(expected, False, expected is not None, f"cannot read it: {exc}")
    path = reader.path
    result = _result_for(spec, path)
    if not reader.exists:
        if expected is not None:
            return result(expected, False, True, f"{expected!r} was applied here, but the file is gone")
        return result(None, False, False, "no KV Switch profile: the file is absent")
    if spec.gateway is not None and reader.has("url", _gateway_url(spec.gateway, routes)):
        routed = _known(routes.clients.get(spec.gateway), profiles)
        if routed is not None:
            return result(routed, True, False, f"through the KV Switch gateway ({routes.root_url}), "
                          f"which routes {spec.gateway} to {routed!r}")
    exact: list[_Candidate] = []
    close: list[_Candidate] = []
    for profile in profiles:
        view = views.get(profile.name)
        if view is None or spec.target_spec not in profile.targets:
            continue
        try:
            wanted = spec.wanted(view)
            identity = spec.identity(view, wanted)
        except KvSwitchError:
            continue  # a profile this client cannot run (e.g. a Messages-only server for Codex)
        missed = tuple(reader.mismatches(wanted))
        if not missed:
            exact.append(_Candidate(profile, missed, len(wanted)))
        elif "url" in identity and all(reader.has(role, value) for role, value in identity.items()):
            close.append(_Candidate(profile, missed, len(identity)))
    chosen = _best(exact, expected) or _best(close, expected)
    via_gateway = chosen is not None and chosen.profile.via_gateway
    if chosen is not None and not chosen.missed:
        also = [c.profile.name for c in exact if c is not chosen and c.weight == chosen.weight]
        note = f" (as do {', '.join(map(repr, also))})" if also else ""
        return result(chosen.profile.name, via_gateway, False,
                      f"holds every value {chosen.profile.name!r} writes{note}")
    if chosen is not None and (chosen.profile.name != expected or not wrote):
        return result(chosen.profile.name, via_gateway, False,
                      f"its URL, key and model are {chosen.profile.name!r}'s "
                      "(written by another tool or by hand)")
    if expected is not None:
        missed = chosen.missed if chosen is not None else _missed_of(spec, reader, views.get(expected))
        listed = ", ".join(missed[:4]) + (" ..." if len(missed) > 4 else "")
        return result(expected, via_gateway, True, f"{expected!r} was applied here, but the file no longer "
                      f"matches it ({listed or 'edited'}); apply it again or keep the file as it is")
    return result(None, False, False, "no profile's URL, key and model match the file")


def _result_for(spec: _Spec, path: Path | None = None) -> Callable[[str | None, bool, bool, str], LiveClient]:
    def make(profile: str | None, via_gateway: bool, differs: bool, detail: str) -> LiveClient:
        return LiveClient(spec.key, spec.client, spec.label, path, profile, via_gateway, differs, detail,
                          spec.target_id)
    return make


def _best(candidates: list[_Candidate], expected: str | None) -> _Candidate | None:
    """The most specific candidate; between equals the one applied here, else the first in the list."""
    if not candidates:
        return None
    top = max(c.weight for c in candidates)
    tied = [c for c in candidates if c.weight == top]
    return next((c for c in tied if c.profile.name == expected), tied[0])


def _missed_of(spec: _Spec, reader: LiveReader, view: Profile | None) -> tuple[str, ...]:
    if view is None:
        return ()
    try:
        return tuple(reader.mismatches(spec.wanted(view)))
    except KvSwitchError:
        return ()


def _known(name: str | None, profiles: Sequence[Profile]) -> str | None:
    """``name`` as the store spells it, or ``None`` when no profile is called that (any more)."""
    if not name:
        return None
    key = name.casefold()
    return next((p.name for p in profiles if p.name.casefold() == key), None)


def _gateway_url(client: GatewayClient, routes: Routes) -> str:
    return routes.client_url(client)

