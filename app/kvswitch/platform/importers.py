"""Bring existing setups in as profiles: Claude Code's settings.json and CC Switch's providers.

Imports never write anything but the returned profiles; the caller adds them to the store. Values
that cannot become a profile field are kept in the profile's env block rather than dropped. An
imported URL's vendor, name and kind come from the catalog (``servers.vendor_match``: DeepSeek's URL makes
a profile named ``deepseek`` of DeepSeek's kind), else the kind is guessed from the servers registry (a
hosted API's host, a local server's default port), which is why this lives in ``platform`` and not in
``core`` (``core`` cannot import ``servers``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomlkit
import tomlkit.exceptions
from pydantic import ValidationError

from kvswitch import servers
from kvswitch.core.ccswitch_db import read_only_db
from kvswitch.core.dangerous_env import dangerous_env
from kvswitch.core.errors import ConfigParseError, FileAccessError, ProfileError
from kvswitch.core.fsutil import read_bytes
from kvswitch.core.models import ENV_NAME_RE, PATH_TARGETS, ModelMap, Profile, ProfileKind
from kvswitch.core.paths import claude_config_dir, home_dir
from kvswitch.core.strictparse import check_toml, loads_json
from kvswitch.servers.preset_data import vendor_kind
from kvswitch.servers.vendor_match import vendor_for_url

DERIVED_ENV = {"ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_MODEL", *ModelMap.ENV_NAMES.values()}
#: an imported Claude Code setup's name when its URL is no catalog vendor's
DEFAULT_IMPORT_NAME = "imported"


def guess_kind(url: str) -> ProfileKind:
    """The kind an imported URL most likely is: its catalog vendor's, else what its address says
    (``custom`` when it says nothing)."""
    match = vendor_for_url(url)
    return vendor_kind(match.vendor) if match is not None else servers.kind_for_url(url)


def import_name(url: str) -> str:
    """The name an imported setup gets: its catalog vendor's id (``deepseek``), else ``imported``."""
    match = vendor_for_url(url)
    return match.vendor.id if match is not None else DEFAULT_IMPORT_NAME


def claude_base_url(settings: dict[str, Any]) -> str:
    """Where a Claude Code settings object sends requests (the client's default API when it sets no URL), for
    naming only: a value that is not a string is left to the profile's validation to refuse."""
    env = settings.get("env")
    url = env.get("ANTHROPIC_BASE_URL") if isinstance(env, dict) else None
    return url if isinstance(url, str) and url else servers.get(servers.CLAUDE_DEFAULT_KIND).base_url


def profile_from_claude_settings(
    name: str, settings: dict[str, Any], source: str, allow_dangerous_env: bool = False
) -> Profile:
    """A profile equivalent to a Claude Code settings object (its ``env`` and ``model``).

    Env names that change how shells or Node behave (PATH, NODE_OPTIONS...) are refused unless the
    caller has shown them to the user and got a yes (``allow_dangerous_env``).
    """
    raw_env = settings.get("env") or {}
    if not isinstance(raw_env, dict):
        raise ConfigParseError(source, "'env' must be an object")
    env = {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in raw_env.items()}
    url = env.get("ANTHROPIC_BASE_URL") or servers.get(servers.CLAUDE_DEFAULT_KIND).base_url
    key = env.get("ANTHROPIC_AUTH_TOKEN") or None
    models = ModelMap(**{field: env[var] for field, var in ModelMap.ENV_NAMES.items() if env.get(var)})
    model = env.get("ANTHROPIC_MODEL") or (
        settings.get("model") if isinstance(settings.get("model"), str) else None
    )
    extra = {k: v for k, v in env.items() if k not in DERIVED_ENV and ENV_NAME_RE.fullmatch(k)}
    return _build(
        name,
        source,
        kind=guess_kind(url),
        base_url=url,
        api_key=key,
        model=model,
        models=models,
        env=extra,
        targets=["claude"],
        notes=f"imported from {source}",
        allow_dangerous_env=allow_dangerous_env,
    )


def import_claude(
    path: Path | str | None = None, name: str | None = None, allow_dangerous_env: bool = False
) -> Profile:
    """The current Claude Code settings (default ``~/.claude/settings.json``) as a new profile, named
    ``name`` or else after its catalog vendor (``import_name``)."""
    file = Path(path) if path else claude_config_dir() / "settings.json"
    raw = read_bytes(file)
    if raw is None:
        raise FileAccessError(file, "not found; there is nothing to import")
    try:
        data = loads_json(file, raw.decode("utf-8-sig")) if raw.strip() else {}
    except UnicodeDecodeError:
        raise ConfigParseError(file, "not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise ConfigParseError(file, f"not valid JSON: {exc.msg}", exc.lineno, exc.colno) from None
    if not isinstance(data, dict):
        raise ConfigParseError(file, "expected a JSON object at the top level")
    chosen = name or import_name(claude_base_url(data))
    return profile_from_claude_settings(chosen, data, str(file), allow_dangerous_env)


def profile_from_codex(name: str, config_text: str, auth: dict[str, Any], source: str) -> Profile:
    """A Codex-only profile from a config.toml text and an auth.json object (CC Switch's snapshot)."""
    try:
        doc = tomlkit.parse(config_text or "").unwrap()
        check_toml(source, config_text or "")
    except tomlkit.exceptions.ParseError as exc:
        raise ConfigParseError(source, f"provider {name!r}: config is not valid TOML: {exc}") from None
    provider = doc.get("model_provider") or "openai"
    table = (doc.get("model_providers") or {}).get(provider) or {}
    # Codex's built-in ``openai`` provider: OpenAI's own API, the gateway preset's URL
    openai_url = servers.get(ProfileKind.OPENAI_COMPATIBLE).base_url
    url = table.get("base_url") or (openai_url if provider == "openai" else None)
    if not url:
        raise ProfileError(f"{source}: provider {name!r} has no base_url; add it by hand")
    key = auth.get("OPENAI_API_KEY") if isinstance(auth, dict) else None
    kind = guess_kind(url)
    if not servers.get(kind).serves_responses_api:  # Codex cannot use that kind: keep the URL, assume nothing
        kind = ProfileKind.CUSTOM
    if servers.get(kind).local and url.rstrip("/").endswith("/v1"):
        url = url.rstrip("/")[: -len("/v1")]
    return _build(
        name,
        source,
        kind=kind,
        base_url=url,
        api_key=key,
        model=doc.get("model"),
        targets=["codex"],
        notes=f"imported from {source}",
    )


@dataclass(frozen=True)
class CcSwitchImport:
    """CC Switch's providers as profiles, and which one CC Switch runs now for each app.

    ``current`` maps ``claude`` / ``codex`` to the name of the profile made from the provider CC Switch
    marks current (its database's ``is_current``, an older ``config.json``'s ``current``): that is
    the provider whose settings CC Switch wrote into the app's live file.
    """

    profiles: list[Profile]
    current: dict[str, str]


def import_cc_switch(path: Path | str | None = None, allow_dangerous_env: bool = False) -> list[Profile]:
    """CC Switch's Claude and Codex providers (``~/.cc-switch/cc-switch.db``, or an older ``config.json``).

    ``path`` may be the database, the JSON file or the ``.cc-switch`` folder. Providers of other apps
    (Gemini, OpenCode...) are skipped. Names get `` (codex)`` appended when both apps use the same one.
    """
    return read_cc_switch(path, allow_dangerous_env).profiles


def read_cc_switch(path: Path | str | None = None, allow_dangerous_env: bool = False) -> CcSwitchImport:
    """``import_cc_switch`` with CC Switch's current provider per app (``CcSwitchImport``)."""
    base = Path(path) if path else home_dir() / ".cc-switch"
    if base.is_dir():
        candidates = [base / "cc-switch.db", base / "config.json"]
        found = next((c for c in candidates if c.exists()), None)
        if found is None:
            raise FileAccessError(base, "has neither cc-switch.db nor config.json; is CC Switch installed?")
        base = found
    if not base.exists():
        raise FileAccessError(base, "not found; is CC Switch installed?")
    rows = _rows_from_json(base) if base.suffix == ".json" else _rows_from_db(base)
    profiles: list[Profile] = []
    current: dict[str, str] = {}
    taken: set[str] = set()
    for app, name, settings, is_current in rows:
        label = name if name.casefold() not in taken else f"{name} ({app})"
        source = f"{base} [{app}: {name}]"
        if app == "claude" and isinstance(settings, dict):
            profile = profile_from_claude_settings(label, settings, source, allow_dangerous_env)
        elif app == "codex" and isinstance(settings, dict):
            profile = profile_from_codex(
                label, str(settings.get("config") or ""), settings.get("auth") or {}, source
            )
        else:
            continue
        taken.add(profile.name.casefold())
        profiles.append(profile)
        if is_current:
            current.setdefault(app, profile.name)
    return CcSwitchImport(profiles, current)


Rows = list[tuple[str, str, Any, bool]]  # (app, provider name, settings, CC Switch's current one)


def _rows_from_db(path: Path) -> Rows:
    with read_only_db(path) as conn:
        columns = {row[1] for row in conn.execute("PRAGMA table_info(providers)")}
        if not {"app_type", "name", "settings_config"} <= columns:
            raise ConfigParseError(
                path,
                "no 'providers' table with app_type, name, settings_config; is this a CC Switch database?",
            )
        order = "sort_index, " if "sort_index" in columns else ""
        flag = "is_current" if "is_current" in columns else "0"
        rows = conn.execute(
            f"SELECT app_type, name, settings_config, {flag} FROM providers ORDER BY {order}rowid"
        ).fetchall()
    result: Rows = []
    for app, name, settings, is_current in rows:
        try:
            parsed = loads_json(path, settings) if settings else {}
            result.append((str(app), str(name), parsed, bool(is_current)))
        except json.JSONDecodeError:
            raise ConfigParseError(path, f"provider {name!r}: settings_config is not valid JSON") from None
    return result


def _rows_from_json(path: Path) -> Rows:
    raw = read_bytes(path) or b""
    try:
        data = loads_json(path, raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigParseError(path, f"not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigParseError(path, "expected a JSON object")
    sections = {"claude": data} if "providers" in data else {k: data.get(k) for k in ("claude", "codex")}
    rows: Rows = []
    for app, section in sections.items():
        providers = section.get("providers") if isinstance(section, dict) else None
        chosen = section.get("current") if isinstance(section, dict) else None
        for key, entry in (providers or {}).items():
            if isinstance(entry, dict):
                settings = entry.get("settingsConfig") or entry.get("settings_config") or {}
                is_current = chosen is not None and chosen in (key, entry.get("id"))
                label = str(entry.get("name") or entry.get("id") or "provider")
                rows.append((app, label, settings, is_current))
    return rows


@dataclass(frozen=True)
class ImportReview:
    """What incoming profiles would do, shown before anything is saved.

    ``lines`` has one line per profile (its targets and dangerous env names); ``risky`` names the
    profiles that need the user's explicit yes: dangerous env, or a target that writes into a
    project folder the user may never have seen.
    """

    lines: tuple[str, ...]
    risky: tuple[str, ...]

    def text(self) -> str:
        return "\n".join(self.lines)


def review_import(profiles: list[Profile]) -> ImportReview:
    lines, risky = [], []
    for profile in profiles:
        dangerous = dangerous_env(profile.env)
        projects = [t for t in profile.targets if t.partition(":")[0] in PATH_TARGETS]
        line = f"{profile.name!r}: targets {', '.join(profile.targets)}"
        if projects:
            line += " (writes into a project folder)"
        if dangerous:
            line += "; dangerous env: " + "; ".join(f"{k} ({why})" for k, why in dangerous.items())
        lines.append(line)
        if dangerous or projects:
            risky.append(profile.name)
    return ImportReview(tuple(lines), tuple(risky))


def confirmed_imports(profiles: list[Profile]) -> list[Profile]:
    """The profiles as the user accepted them: dangerous env allowed exactly where there is some.

    A file's own ``allow_dangerous_env`` is never trusted; only the user's yes after the review is.
    """
    return [p.model_copy(update={"allow_dangerous_env": bool(dangerous_env(p.env))}) for p in profiles]


def _build(name: str, source: str, **fields: Any) -> Profile:
    try:
        return Profile(name=name, **fields)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        msg = str(first["msg"]).removeprefix("Value error, ")
        raise ProfileError(f"{source}: cannot import {name!r}: {where}: {msg}") from None
