"""``kvswitch use / current / undo / import / doctor``: the engine from the command line."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import stat
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kvswitch.commands.common import err, out, paths_from, store_from
from kvswitch.commands.common import print_lint as _print_lint
from kvswitch.commands.doctor_gateway import gateway_findings
from kvswitch.commands.doctor_tiers import tier_findings
from kvswitch.core.errors import KvSwitchError, ProfileError
from kvswitch.core.gateway_config import read_routes, routes_file, token_file
from kvswitch.core.models import Profile, mask_secret, mask_url
from kvswitch.core.text import for_terminal
from kvswitch.platform.context_window import stored_with_server_context, with_server_context
from kvswitch.platform.importers import import_claude, read_cc_switch
from kvswitch.targets.diff import mask_text
from kvswitch.targets.engine import Engine
from kvswitch.targets.gateway_switch import clients_already_at_gateway, route_profile
from kvswitch.targets.gateway_view import client_view
from kvswitch.targets.lint import lint_profile
from kvswitch.targets.live import LiveClient, client_label, live_clients
from kvswitch.targets.live_sync import imported_marks, mark_live, switch_message, written_clients
from kvswitch.targets.registry import target_for_id, targets_for_profile
from kvswitch.targets.route_check import fallback_problems


def register(subparsers: Any) -> None:
    use = subparsers.add_parser("use", help="apply a profile to its targets")
    use.add_argument("name")
    use.add_argument("--dry-run", action="store_true", help="print the diff, write nothing")
    use.add_argument("--rewrite-files", action="store_true",
                     help="gateway profiles: write the client files again instead of only re-routing "
                     "(to take this profile's model and env entries into them)")
    use.set_defaults(func=cmd_use)

    current = subparsers.add_parser(
        "current", help="the profile each client runs now, read from its own files",
        description="One line per client (Claude Code user and project scopes, Codex, OpenCode, each "
        "shell): the profile its live file matches. Exit 0: some client runs a profile and none differs; "
        "1: no client runs any profile; 3: a client's file no longer matches the profile applied there "
        "(edited by hand, or the profile was saved without writing it through).")
    current.add_argument("--json", action="store_true", help="the same as a JSON list, one object a client")
    current.add_argument("--client", choices=["claude", "codex", "opencode", "shell"],
                         help="only this client (a single scope prints the bare profile name)")
    current.set_defaults(func=cmd_current)

    undo = subparsers.add_parser("undo", help="put back what the last apply changed")
    undo.add_argument(
        "--original", nargs="*", metavar="FILE", default=None,
        help="put back every file (or each FILE) as it was before KV Switch first wrote it, however "
        "many applies ago; 'kvswitch undo' then takes this back",
    )
    undo.set_defaults(func=cmd_undo)

    imp = subparsers.add_parser("import", help="import Claude Code settings or CC Switch providers")
    imp.add_argument("source", choices=["claude", "cc-switch"])
    imp.add_argument("path", nargs="?", help="file to import (default: the usual location)")
    imp.add_argument("--name", help="profile name for 'import claude' (default: the vendor's catalog id, "
                     "e.g. deepseek, else 'imported')")
    imp.add_argument("--allow-dangerous-env", action="store_true",
                     help="accept env names that change how shells, the loader or Node behave")
    imp.set_defaults(func=cmd_import)

    doctor = subparsers.add_parser(
        "doctor", help="check files, ownership, profiles, key file modes and cache tiers")
    doctor.set_defaults(func=cmd_doctor)


#: how long a command waits for another KV Switch process's apply (the window, a second terminal, a
#: script switching in a loop): applies take milliseconds, so only a long queue of them waits this long
CLI_LOCK_TIMEOUT_S = 120.0


def engine_from(args: argparse.Namespace) -> Engine:
    return Engine(paths_from(args), lock_timeout=CLI_LOCK_TIMEOUT_S)


def cmd_use(args: argparse.Namespace) -> int:
    store = store_from(args)
    if args.dry_run:  # read from the server for the preview, recorded by a real switch only
        profile, context_note = with_server_context(store.get(args.name))
    else:
        profile, context_note = stored_with_server_context(store, args.name)
    engine = engine_from(args)
    if context_note:
        out(context_note)
    if args.dry_run:
        plans = engine.plan(profile)
        diff = engine.render_diff(plans, show_secrets=args.show_secrets)
        if diff:
            sys.stdout.write(for_terminal(diff))  # file text may hold escapes or bidi marks
        else:
            out(f"{profile.name!r} is already applied: nothing would change.")
        _print_warnings([w for p in plans for w in p.warnings], plans_secrets(plans, args.show_secrets))
        _print_lint(profile)
        out("(dry run: nothing was written)")
        return 0
    engine.recover()  # so that the plan below is made from the files as the apply will find them
    rewrite = getattr(args, "rewrite_files", False)
    if not rewrite and clients_already_at_gateway(engine, store, profile):
        rerouted = [client_label(c) for c in route_profile(engine, profile)]
        out(f"switched {', '.join(rerouted)} to {profile.name!r} through the gateway: no file rewritten; "
            "running sessions use it from their next request")
        _print_lint(profile)
        return 0
    # no preview was confirmed, so the engine plans inside its lock: another apply that ran just
    # before (the window, a second terminal) is planned upon, not reported as a changed preview
    result = engine.apply(profile)
    written = written_clients(result, engine)
    routed: list[str] = []
    if profile.via_gateway:
        routed = [client_label(c) for c in route_profile(engine, profile) if client_label(c) not in written]
        out(f"the clients now talk to the KV Switch gateway ({read_routes(engine.paths).root_url}); "
            "it must be running: 'kvswitch gateway run' (or 'kvswitch gateway status')")
    for note in engine.recovery_notes:
        out(f"note: {note}")
    out(result.summary())
    out(switch_message(profile.name, written, routed))
    _print_warnings(result.warnings, plans_secrets(result.plans, args.show_secrets))
    _print_lint(profile)
    return 0


def plans_secrets(plans: list[Any], show: bool) -> list[str]:
    return [] if show else [s for p in plans for s in p.secrets]


def _print_warnings(warnings: list[str], secrets: list[str]) -> None:
    for warning in dict.fromkeys(warnings):
        err(f"warning: {mask_text(warning, secrets)}")


#: ``kvswitch current``'s exit code when a client's file no longer matches the profile applied there
EXIT_DIFFERS = 3


def cmd_current(args: argparse.Namespace) -> int:
    """Per client, the profile its live file runs (``targets.live``); exit codes in the parser's text."""
    engine = engine_from(args)
    clients = live_clients(engine.paths, store_from(args).profiles(), engine.env)
    if args.client:
        clients = [c for c in clients if c.client == args.client]
    if args.json:
        out(json.dumps([c.as_json() for c in clients], indent=2, ensure_ascii=False))
    elif args.client and len(clients) == 1:
        out(clients[0].profile or "none")
    else:
        for client in clients:
            out(f"{client.label}: {_running(client)}")
    if any(c.differs for c in clients):
        return EXIT_DIFFERS
    if not any(c.profile for c in clients):
        if not args.json:
            err("no client runs a KV Switch profile")
        return 1
    return 0


def _running(client: LiveClient) -> str:
    if client.profile is None:
        return "none"
    if client.differs:
        return f"{client.profile} (differs: {client.detail})"
    return f"{client.profile} (through the gateway)" if client.via_gateway else client.profile


def cmd_undo(args: argparse.Namespace) -> int:
    engine = engine_from(args)
    if args.original is not None:
        result = engine.restore_originals(args.original or None)
        out(result.summary())
        for location, backup in result.backups.items():
            out(f"  {location}: what it held just now is in {backup}")
        return 0
    result = engine.undo()
    out(result.summary())
    _print_warnings(result.warnings, plans_secrets(result.plans, args.show_secrets))
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    store = store_from(args)
    current: dict[str, str] = {}  # target id -> the imported profile that is live there
    if args.source == "claude":
        profiles = [import_claude(args.path, name=args.name, allow_dangerous_env=args.allow_dangerous_env)]
        if args.path is None:
            current["claude"] = profiles[0].name
    else:
        found = read_cc_switch(args.path, allow_dangerous_env=args.allow_dangerous_env)
        profiles = found.profiles
        current = dict(found.current)  # CC Switch's app names are KV Switch's target ids
        if not profiles:
            out("no Claude or Codex providers found to import")
            return 0
    taken = {n.casefold() for n in store.names()}
    for profile in profiles:
        name = profile.name
        number = 2
        while name.casefold() in taken:
            name = f"{profile.name}-{number}"
            number += 1
        if name != profile.name:
            current = {t: name if n == profile.name else n for t, n in current.items()}
            profile = profile.model_copy(update={"name": name})
        store.add(profile)
        taken.add(name.casefold())
        key = profile.key if args.show_secrets else mask_secret(profile.key)
        out(
            f"imported {profile.name!r}: {profile.kind.value} "
            f"{profile.base_url if args.show_secrets else mask_url(profile.base_url)}"
            + (f" key {key}" if profile.key else "")
            + f" [{', '.join(profile.targets)}]"
        )
    _mark_imported(args, store, current)
    return 0


def _mark_imported(args: argparse.Namespace, store: Any, current: dict[str, str]) -> None:
    """What is live after an import is marked at once; a bookkeeping failure never fails the import."""
    engine = engine_from(args)
    try:
        marked = mark_live(engine, imported_marks(engine, store, current))
    except KvSwitchError as exc:
        err(f"note: the imported profiles were saved, but which one is live could not be recorded: {exc}")
        return
    for target_id in marked:
        out(f"{client_label(target_id, engine.env)} runs {current[target_id]!r} now (its live file)")


def cmd_doctor(args: argparse.Namespace) -> int:
    problems = run_doctor(args)
    if not problems:
        out("everything looks fine")
        return 0
    for line in problems:
        out(line)
    return 1


def run_doctor(args: argparse.Namespace) -> list[str]:
    """Every finding as one line ``ok:``-free: only problems are listed."""
    paths = paths_from(args)
    engine = Engine(paths)
    findings: list[str] = []
    try:
        store = store_from(args)
        profiles = store.profiles()
    except KvSwitchError as exc:
        return [f"profiles: {exc}"]
    try:
        state = engine.state()
    except KvSwitchError as exc:
        return [f"ledger: {exc}"]
    if state.pending is not None:
        findings.append("ledger: an apply was interrupted; the next 'kvswitch use' or 'undo' rolls it back")
    active: Profile | None = None
    if state.active:
        try:
            active = store.get(state.active)
        except ProfileError:
            findings.append(
                f"active profile {state.active!r} no longer exists; its values stay until you switch"
            )
    for target_id, record in state.targets.items():
        try:
            target = target_for_id(target_id, engine.env)
            snapshot = target.snapshot()
            if snapshot.content is None and snapshot.values is None:
                findings.append(
                    f"{record.location}: deleted since KV Switch wrote it; 'kvswitch use' writes it again"
                )
                continue
            plan = target.plan(None, record.owned)
        except KvSwitchError as exc:
            findings.append(_about(record.location, exc))
            continue
        for warning in plan.warnings:
            if "hand" in warning:
                findings.append(
                    f"{record.location}: {mask_text(warning, [] if args.show_secrets else plan.secrets)}"
                )
    findings.extend(_unreadable_targets(profiles, set(state.targets), engine))
    for profile in profiles:
        for finding in lint_profile(profile):
            findings.append(f"profile {profile.name!r} [{finding.code}]: {finding.message}")
    names = [p.name for p in profiles]
    for profile in profiles:
        findings.extend(f"profile {profile.name!r}: {found}" for found in fallback_problems(profile, names))
    if active is not None:
        findings.extend(_stale_shell_vars(client_view(active, paths, issue_token=False), args.show_secrets))
    findings.extend(gateway_findings(paths, list(state.targets.values()), profiles, active))
    findings.extend(tier_findings(profiles, active))
    if any(spec.startswith("claude") for p in profiles for spec in p.targets):
        findings.extend(_claude_version_drift(engine.env))
    for path in _secret_files(paths, engine):
        try:
            mode = stat.S_IMODE(os.stat(path).st_mode)
        except OSError:
            continue
        if mode & 0o077:
            findings.append(
                f"{path}: mode {mode:o} lets other users read your keys; run 'chmod 600 {path}'"
            )
    return findings


def _claude_version_drift(env: Mapping[str, str]) -> list[str]:
    """The installed Claude Code against the version the cache-safe env was measured on."""
    from kvswitch.verify.client_report import version_note  # noqa: PLC0415 - doctor only
    from kvswitch.verify.client_run import ClientFailed, client_version  # noqa: PLC0415

    found = shutil.which("claude", path=env.get("PATH", os.defpath))
    if found is None:
        return []
    try:
        version = client_version(Path(found), timeout=15.0)
    except (ClientFailed, OSError):
        return [f"{found}: 'claude --version' failed; the cache-safe settings cannot be checked against it"]
    note = version_note("claude", version)
    return [f"{found}: {note}"] if note else []


def _unreadable_targets(profiles: list[Profile], checked: set[str], engine: Engine) -> list[str]:
    """Files some profile would write that cannot be read or parsed now (the next switch would stop)."""
    findings = []
    for profile in profiles:
        try:
            targets = targets_for_profile(profile, engine.env)
        except KvSwitchError as exc:
            findings.append(f"profile {profile.name!r}: {exc}")
            continue
        for target in targets:
            if target.target_id in checked:
                continue
            checked.add(target.target_id)
            try:
                target.plan(None, {})
            except KvSwitchError as exc:
                findings.append(_about(target.location(), exc))
    return findings


def _about(location: str, exc: KvSwitchError) -> str:
    """A finding for one file; errors that already start with the file's name are not prefixed twice."""
    text = str(exc)
    return text if text.startswith(location) else f"{location}: {text}"


def _stale_shell_vars(profile: Profile, show: bool) -> list[str]:
    from kvswitch.core.envmap import shell_env  # noqa: PLC0415

    wanted = shell_env(profile)
    findings = []
    for name in sorted(set(wanted) | {"ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_MODEL"}):
        have = os.environ.get(name)
        if have is not None and have != wanted.get(name):
            shown = have if show else mask_text(have, [have]) if "KEY" in name or "TOKEN" in name else have
            findings.append(
                f"this shell still exports {name}={shown} (not what {profile.name!r} sets); "
                "open a new terminal"
            )
    return findings


def _secret_files(paths: Any, engine: Engine) -> list[Path]:
    """KV Switch's own key files, and every target file it wrote a key into (a symlink's target counts)."""
    from kvswitch.core.backups import ORIGINAL_NAME  # noqa: PLC0415
    from kvswitch.core.paths import codex_home  # noqa: PLC0415
    from kvswitch.targets.filetarget import holds_secret, holds_url_password  # noqa: PLC0415

    files = [paths.profiles_file, paths.state_file, codex_home(engine.env) / "auth.json", token_file(paths),
             routes_file(paths)]
    try:
        records = list(engine.state().targets.values())
    except KvSwitchError:
        records = []
    for record in records:
        if holds_secret(record.owned) or holds_url_password(record.owned):
            files.append(Path(record.location))
    if paths.backups_dir.is_dir():
        files.extend(p for p in paths.backups_dir.rglob("*.bak"))
        files.extend(p for p in paths.backups_dir.rglob(ORIGINAL_NAME))
    return list(dict.fromkeys(files))
