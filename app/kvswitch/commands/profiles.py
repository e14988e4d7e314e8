"""``kvswitch profile ...``: create, edit, list and show profiles (the switching commands live in
``commands.switching``, which registers its own)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from kvswitch.commands.common import (
    err,
    out,
    paths_from,
    store_from,
)
from kvswitch.commands.common import print_lint as _print_lint
from kvswitch.commands.profile_args import _context_window, normalise_target, parse_env_pairs, read_key
from kvswitch.core.errors import ProfileError, UsageError
from kvswitch.core.modelmap import parse_tier_assignments, split_tiers
from kvswitch.core.models import (
    WIRE_PROTOCOLS,
    ModelMap,
    Profile,
    ProfileKind,
    mask_secret,
    mask_url,
)
from kvswitch.core.settings import load_settings
from kvswitch.core.text import for_terminal
from kvswitch.platform.context_window import with_server_context
from kvswitch.servers import get as server_of
from kvswitch.servers import preset
from kvswitch.servers.preset_data import preset_profile_data
from kvswitch.servers.protocols import describe as describe_protocol
from kvswitch.servers.protocols import session_slots
from kvswitch.targets.diff import mask_text
from kvswitch.targets.engine import Engine
from kvswitch.targets.keyed import is_secret_key
from kvswitch.targets.live_sync import save_profile
from kvswitch.targets.route_check import checked_wiring

KINDS = [k.value for k in ProfileKind]
KEY_ENVS = ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_API_KEY")
MODEL_FLAGS = {field: f"--{field.replace('_', '-')}-model" for field in ModelMap.ENV_NAMES}


def register(subparsers: Any) -> None:
    """Add ``profile``, ``use``, ``current``, ``undo``, ``import`` and ``doctor``."""
    profile = subparsers.add_parser("profile", help="add, edit, remove, list and show profiles")
    sub = profile.add_subparsers(dest="profile_command", metavar="ACTION", required=True)

    add = sub.add_parser("add", help="add a profile")
    add.add_argument("name")
    _profile_options(add, adding=True)
    add.set_defaults(func=cmd_add)

    edit = sub.add_parser("edit", help="change a profile")
    edit.add_argument("name")
    _profile_options(edit, adding=False)
    edit.add_argument(
        "--unset-env", action="append", default=[], metavar="KEY", help="remove KEY from the env block"
    )
    edit.add_argument("--rename", metavar="NEW", help="give the profile a new name")
    edit.add_argument(
        "--write-through", action=argparse.BooleanOptionalAction, default=None,
        help="write the saved profile to the clients that run it now (default: on, unless turned off in "
        "the window's settings); --no-write-through leaves them as they are, shown as 'differs'",
    )
    edit.set_defaults(func=cmd_edit)

    remove = sub.add_parser("remove", help="delete a profile")
    remove.add_argument("name")
    remove.set_defaults(func=cmd_remove)

    listing = sub.add_parser("list", help="list profiles")
    listing.add_argument("--json", action="store_true", help="machine-readable output")
    listing.set_defaults(func=cmd_list)

    show = sub.add_parser("show", help="show one profile")
    show.add_argument("name")
    show.set_defaults(func=cmd_show)


def _profile_options(parser: argparse.ArgumentParser, adding: bool) -> None:
    parser.add_argument("--kind", choices=KINDS, help="backend kind (required unless --preset names one)")
    if adding:
        parser.add_argument("--preset", metavar="ID", help="fill URL, kind, key variable and models from "
                            "'kvswitch preset list' (explicit flags still win)")
        parser.add_argument("--for-codex", action="store_true",
                            help="with --preset: use the vendor's Codex (Responses) endpoint, target codex")
    parser.add_argument("--base-url", help="server URL (default for local kinds: the usual port)")
    keys = parser.add_mutually_exclusive_group()
    keys.add_argument("--api-key", help="API key (prefer --api-key-stdin: this one lands in shell history)")
    keys.add_argument("--api-key-stdin", action="store_true", help="read the API key from standard input")
    if not adding:
        keys.add_argument("--no-api-key", action="store_true", help="remove the key")
    parser.add_argument("--model", help="model name (ANTHROPIC_MODEL, Codex model)")
    parser.add_argument("--model-tier", action="append", default=[], metavar="TIER=M",
                        help="model for one tier: main, opus, sonnet, haiku, subagent, small_fast")
    parser.add_argument("--key-env", choices=KEY_ENVS, help="the variable the key goes in for Claude Code "
                        "(ANTHROPIC_AUTH_TOKEN: bearer; ANTHROPIC_API_KEY: x-api-key)")
    for field, flag in MODEL_FLAGS.items():
        parser.add_argument(
            flag, f"--model-{field.replace('_', '-')}", dest=f"model_{field}", metavar="M",
            help=f"sets {ModelMap.ENV_NAMES[field]}",
        )
    parser.add_argument("--env", action="append", default=[], metavar="KEY=VALUE", help="extra env entry")
    parser.add_argument(
        "--allow-dangerous-env",
        action="store_true",
        help="accept env names that change how shells, the loader or Node behave (PATH, LD_*, "
        "PROMPT_COMMAND, NODE_OPTIONS...); refused without it",
    )
    parser.add_argument(
        "--target",
        action="append",
        default=None,
        metavar="T",
        help="claude, claude-project:DIR, claude-local:DIR, codex, opencode, opencode-project:DIR, bash, "
        "zsh, fish, pwsh, windows-env (repeatable; default: claude)",
    )
    parser.add_argument("--log-file", metavar="PATH", help="the server's log file (local kinds)")
    parser.add_argument(
        "--context-window", metavar="N|auto", type=_context_window, default=argparse.SUPPRESS,
        help="tokens per request the backend takes (Claude Code: CLAUDE_CODE_MAX_CONTEXT_TOKENS); "
        "'auto' (the default for local kinds) reads it from the server's /props when it answers",
    )
    parser.add_argument(
        "--codex-provider-id", metavar="ID", help="id of the Codex [model_providers.<id>] table"
    )
    gateway = parser.add_mutually_exclusive_group()
    gateway.add_argument("--via-gateway", action="store_true", default=None,
                         help="point the clients at the local KV Switch gateway, which forwards to this "
                         "backend (switching between gateway profiles then rewrites no file)")
    gateway.add_argument("--direct", dest="via_gateway", action="store_false",
                         help="write the backend's own URL and key into the clients' files (the default)")
    parser.add_argument("--fallback", action="append", default=None, metavar="NAME",
                        help="a profile the gateway tries when this one fails before answering "
                        "(repeatable, in order; --fallback '' clears the list)")
    parser.add_argument("--protocol", choices=WIRE_PROTOCOLS,
                        help="the protocol the backend is spoken to in (default: what it serves for each "
                        "client); another than the client's own goes through the gateway's bridge")
    stable = parser.add_mutually_exclusive_group()
    stable.add_argument("--stable-prefix", dest="stable_prefix", action="store_const", const=True,
                        help="local backends: the gateway puts Claude Code's shared context (environment "
                        "block, reminders) before the user's words, so a new conversation reuses the cache")
    stable.add_argument("--no-stable-prefix", dest="stable_prefix", action="store_const", const=False)
    slots = parser.add_mutually_exclusive_group()
    slots.add_argument("--session-slots", dest="slot_affinity", action="store_const", const=True,
                       help="a local server with several slots: the gateway gives each session's main "
                       "conversation its own slot (through the chat bridge), side requests another")
    slots.add_argument("--no-session-slots", dest="slot_affinity", action="store_const", const=False)
    inline = parser.add_mutually_exclusive_group()
    inline.add_argument("--inline-system-as-user", dest="inline_system_as_user", action="store_const",
                        const=True, help="local backends: the gateway hands Claude Code's system messages "
                        "inside the conversation to the server as user messages in the same place, for chat "
                        "templates that refuse a system message after the first")
    inline.add_argument("--no-inline-system-as-user", dest="inline_system_as_user", action="store_const",
                        const=False)
    if adding:
        parser.add_argument(
            "--no-preset-env", action="store_true", help="do not pre-fill the kind's cache-safe env"
        )


def build_profile(data: dict[str, Any]) -> Profile:
    """Validate, turning pydantic's report into one sentence that says what to change."""
    try:
        return Profile.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        message = str(first["msg"]).removeprefix("Value error, ")
        raise ProfileError(f"{where}: {message}" if where else message) from None


def _apply_options(data: dict[str, Any], args: argparse.Namespace) -> None:
    if args.base_url:
        data["base_url"] = args.base_url
    key = read_key(args)
    if key is not None:
        data["api_key"] = key
    if getattr(args, "no_api_key", False):
        data["api_key"] = None
    if args.model is not None:
        data["model"] = args.model or None
    models = dict(data.get("models") or {})
    for field in MODEL_FLAGS:
        value = getattr(args, f"model_{field}")
        if value is not None:
            models[field] = value or None
    main, main_given, tiers = split_tiers(parse_tier_assignments(args.model_tier))
    if main_given:
        data["model"] = main
    models.update(tiers)
    data["models"] = models
    if args.key_env:
        data["key_env"] = args.key_env
    data["env"] = {**(data.get("env") or {}), **parse_env_pairs(args.env)}
    if args.allow_dangerous_env:
        data["allow_dangerous_env"] = True
    if args.target:
        data["targets"] = [normalise_target(t) for t in args.target]
    if args.log_file:
        data["log"] = {"kind": "file", "path": str(Path(args.log_file).expanduser())}
    if args.codex_provider_id:
        data["codex_provider_id"] = args.codex_provider_id
    if hasattr(args, "context_window"):  # given: a number, or 'auto' (None, read from the server)
        data["context_window"] = args.context_window
    if args.protocol:
        data["protocol"] = args.protocol
    if args.stable_prefix is not None:
        data["stable_prefix"] = args.stable_prefix
    if args.slot_affinity is not None:
        data["slot_affinity"] = args.slot_affinity
    if args.inline_system_as_user is not None:
        data["inline_system_as_user"] = args.inline_system_as_user
    if args.via_gateway is not None:
        data["via_gateway"] = args.via_gateway
    if args.fallback is not None:
        data["fallbacks"] = [name for name in args.fallback if name.strip()]


def cmd_add(args: argparse.Namespace) -> int:
    store = store_from(args)
    data: dict[str, Any]
    if args.preset:
        data = preset_profile_data(args.name, args.preset, args.kind, args.no_preset_env, args.for_codex)
    elif not args.kind:
        raise UsageError("profile add: give --kind KIND or --preset ID ('kvswitch preset list' shows ids)")
    else:
        chosen = preset(args.kind)
        data = {
            "name": args.name,
            "kind": args.kind,
            "base_url": chosen.base_url,
            "env": {} if args.no_preset_env else dict(chosen.env),
        }
        if chosen.log is not None:
            data["log"] = chosen.log.model_dump()
        if server_of(args.kind).key_header[0] == "x-api-key":
            data["key_env"] = "ANTHROPIC_API_KEY"  # the vendor's Console keys go in X-Api-Key, not Bearer
    _apply_options(data, args)
    profile, note = with_server_context(build_profile(data))
    profile = checked_wiring(profile, store.names())
    store.add(profile)
    url = profile.base_url if args.show_secrets else mask_url(profile.base_url)
    out(f"added profile {profile.name!r} ({profile.kind.value}, {url})")
    if note:
        out(note)
    _print_lint(profile)
    return 0


def cmd_edit(args: argparse.Namespace) -> int:
    store = store_from(args)
    old = store.get(args.name)
    data = old.model_dump(mode="json", context={"secrets": True})
    if args.kind:
        data["kind"] = args.kind
    _apply_options(data, args)
    for name in args.unset_env:
        if name not in data["env"]:
            raise UsageError(f"--unset-env {name}: the profile has no env entry {name}")
        del data["env"][name]
    if args.rename:
        data["name"] = args.rename
    profile, note = with_server_context(build_profile(data))
    profile = checked_wiring(profile, store.names(), renamed_from=old.name)
    write_through = args.write_through  # else the setting: on unless turned off
    if write_through is None:
        write_through = load_settings(paths_from(args)).write_through_live
    outcome = save_profile(store, Engine(paths_from(args), lock_timeout=120.0), old.name, profile,
                           write_through=write_through)
    out(f"updated profile {profile.name!r}")
    if note:
        out(note)
    if outcome.message():
        out(outcome.message())
    if outcome.result is not None:
        secrets = [] if args.show_secrets else [s for p in outcome.result.plans for s in p.secrets]
        for warning in dict.fromkeys(outcome.result.warnings):
            err(f"warning: {mask_text(warning, secrets)}")
    _print_lint(profile)
    return 0 if outcome.error is None else 1


def cmd_remove(args: argparse.Namespace) -> int:
    store = store_from(args)
    removed = store.remove(args.name)
    out(f"removed profile {removed.name!r}")
    if store.active_name == removed.name:
        out("it was the active profile: its values stay in your files until you switch or undo")
    return 0


def profile_view(profile: Profile, show_secrets: bool, active: bool = False) -> dict[str, Any]:
    """The profile as shown to people: key and secret-looking env values masked unless asked."""
    data = profile.model_dump(mode="json", context={"secrets": show_secrets}, exclude_defaults=False)
    if not show_secrets:
        data["env"] = {k: mask_secret(v) if is_secret_key(k) else v for k, v in data["env"].items()}
        data["base_url"] = mask_url(profile.base_url)
    data["active"] = active
    return data


def cmd_list(args: argparse.Namespace) -> int:
    store = store_from(args)
    active = store.active_name
    profiles = store.profiles()
    if args.json:
        views = [profile_view(p, args.show_secrets, p.name == active) for p in profiles]
        out(json.dumps(views, indent=2, ensure_ascii=False))
        return 0
    if not profiles:
        out("no profiles yet; add one with 'kvswitch profile add NAME --kind KIND --base-url URL'")
        return 0
    # names as the terminal gate shows them (a bidi or C1 character as \uXXXX), so the columns line up
    shown = {p.name: for_terminal(p.name) for p in profiles}
    width = max(len(name) for name in shown.values())
    for p in profiles:
        marker = "*" if p.name == active else " "
        url = p.base_url if args.show_secrets else mask_url(p.base_url)
        out(f"{marker} {shown[p.name]:<{width}}  {p.kind.value:<17} {url}  [{', '.join(p.targets)}]")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    store = store_from(args)
    profile = store.get(args.name)
    view = profile_view(profile, args.show_secrets, profile.name == store.active_name)
    for field in ("name", "kind", "base_url", "api_key", "model", "context_window", "codex_provider_id",
                  "notes"):
        if view.get(field):
            out(f"{field}: {view[field]}")
    if profile.key:
        out(f"key sent as: {profile.key_env}")
    models = {k: v for k, v in view["models"].items() if v}
    for field, value in models.items():
        out(f"{ModelMap.ENV_NAMES[field]}: {value}")
    out(f"targets: {', '.join(view['targets'])}")
    for name, value in view["env"].items():
        out(f"env {name}={value}")
    if view.get("allow_dangerous_env"):
        out("dangerous env names: allowed (confirmed with --allow-dangerous-env)")
    if view.get("log"):
        log = view["log"]
        out(f"log: {log['kind']} {log.get('path') or log.get('unit') or ' '.join(log.get('command') or [])}")
    clients = [c for c in ("claude", "codex") if any(t.split(":")[0] in (c, c + "-project", c + "-local")
                                                     for t in profile.targets)]
    for client in clients or ["claude"]:
        out(f"protocol: {describe_protocol(profile, client)}")  # type: ignore[arg-type]
    if profile.stable_prefix:
        where = "on" if profile.kind.is_local else "set, but off: only for local backends"
        out(f"stable prefix: {where} (the gateway moves Claude Code's environment block before the "
            "user's words)")
    if profile.slot_affinity:
        where = "on" if session_slots(profile) else "set, but off: this kind of server has no slots to pin"
        out(f"session slots: {where} (one server slot per session's main conversation)")
    if profile.inline_system_as_user:
        where = "on" if profile.kind.is_local else "set, but off: only for local backends"
        out(f"inline system messages as user: {where} (for chat templates that take a system message "
            "only first)")
    if profile.via_gateway:
        out("via gateway: yes (the clients' files point at the local gateway)")
    if profile.fallbacks:
        out(f"fallbacks: {', '.join(profile.fallbacks)}")
    out(f"active: {'yes' if view['active'] else 'no'}")
    _print_lint(profile)
    return 0
