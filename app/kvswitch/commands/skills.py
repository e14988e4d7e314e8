"""``kvswitch skill list|install|enable|disable|update|remove``: skills for every client.

KV Switch keeps its own copy of each skill it installs and enables it per client by a symlink (or a
copy) in that client's skills folder (``targets.skill_manager``); ``list`` shows every skill the clients
see, whoever put it there, with the tokens its listing line adds to every request.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from kvswitch.commands.common import err, out, paths_from, store_from
from kvswitch.core.ccswitch_library import cc_switch_db, read_skills
from kvswitch.core.errors import KvSwitchError, ProfileError
from kvswitch.core.skills import SKILL_CLIENTS
from kvswitch.targets.skill_manager import FoundSkill, SkillManager
from kvswitch.verify.entry_tokens import count_tokens

_OWNERS = {"kvswitch-link": "linked by KV Switch", "kvswitch-copy": "copied by KV Switch",
           "kvswitch-store": "installed, enabled for no client", "user": "not from KV Switch"}


def register(subparsers: Any) -> None:
    skill = subparsers.add_parser("skill",
                                  help="skills (SKILL.md folders) for Claude Code, Codex and OpenCode")
    sub = skill.add_subparsers(dest="skill_command", metavar="ACTION", required=True)

    listing = sub.add_parser("list", help="every skill the clients see, and the tokens each adds")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(func=cmd_list)

    install = sub.add_parser("install", help="install from a folder, a .zip or a git repository URL")
    install.add_argument("source")
    kind = install.add_mutually_exclusive_group()
    kind.add_argument("--git", action="store_const", const="git", dest="kind",
                      help="SOURCE is a git repository (a local path or file:// URL too)")
    kind.add_argument("--zip", action="store_const", const="zip", dest="kind")
    kind.add_argument("--folder", action="store_const", const="folder", dest="kind")
    install.add_argument("--path", default="", help="the skill's folder inside the source")
    install.add_argument("--client", action="append", choices=SKILL_CLIENTS, help="enable for (repeatable)")
    install.add_argument("--copy", action="store_true", help="enable by copying instead of a symlink")
    install.add_argument("--replace", action="store_true", help="replace an installed skill of the same name")
    install.add_argument("--json", action="store_true")
    install.set_defaults(func=cmd_install)

    imp = sub.add_parser("import", help="install CC Switch's skills (from ~/.cc-switch/skills)")
    imp.add_argument("--cc-switch", nargs="?", const="", default="", metavar="DB", dest="cc_switch",
                     help="its database (default ~/.cc-switch/cc-switch.db)")
    imp.add_argument("--json", action="store_true")
    imp.set_defaults(func=cmd_import)

    for action, text in (("enable", "make a skill visible to clients"), ("disable", "hide it from clients")):
        parser = sub.add_parser(action, help=text)
        parser.add_argument("name")
        parser.add_argument("--client", action="append", choices=SKILL_CLIENTS, required=True,
                            help="repeatable")
        if action == "enable":
            parser.add_argument("--copy", action="store_true", help="copy instead of a symlink")
        else:
            parser.add_argument("--force", action="store_true", help="move an edited copy aside (kept)")
        parser.add_argument("--json", action="store_true")
        parser.set_defaults(func=cmd_enable if action == "enable" else cmd_disable)

    update = sub.add_parser("update", help="fetch installed skills' sources again")
    update.add_argument("names", nargs="*", help="default: every skill KV Switch installed")
    update.add_argument("--force", action="store_true", help="keep edited copies aside and refresh them")
    update.add_argument("--json", action="store_true")
    update.set_defaults(func=cmd_update)

    remove = sub.add_parser("remove", help="disable everywhere and delete KV Switch's copy")
    remove.add_argument("name")
    remove.add_argument("--force", action="store_true", help="move edited copies aside (kept)")
    remove.add_argument("--json", action="store_true")
    remove.set_defaults(func=cmd_remove)


def _manager(args: argparse.Namespace) -> SkillManager:
    return SkillManager(paths_from(args), os.environ)


def _active_profile(args: argparse.Namespace) -> Any:
    try:
        profiles = store_from(args)
        name = profiles.active_name
        return profiles.get(name) if name else None
    except (ProfileError, KvSwitchError):
        return None


def cmd_list(args: argparse.Namespace) -> int:
    found = _manager(args).discover()
    lines = [f.info.listing_line() for f in found if f.info is not None]
    tokens = count_tokens(_active_profile(args), lines)
    if args.json:
        out(json.dumps({"counted_by": tokens.by, "why_unknown": tokens.why or None,
                        "skills": [_as_json(f, tokens.number(f.info.listing_line()) if f.info else None)
                                   for f in found]}, indent=2, ensure_ascii=False))
        return 0
    if not found:
        out("no skills found ('kvswitch skill install SOURCE --client claude')")
    for f in found:
        if f.info is None:
            out(f"{f.name}: {f.folder}: not usable ({f.problem})")
            continue
        readers = ", ".join(f.readers) or "no client"
        out(f"{f.name}: {f.info.description[:100]}")
        out(f"    {f.folder} ({_OWNERS[f.owner]}; read by {readers}); "
            f"{tokens.describe(f.info.listing_line())} in every request")
    return 0


def _as_json(found: FoundSkill, tokens: int | None) -> dict[str, Any]:
    return {"name": found.name, "folder": found.folder, "readers": list(found.readers), "owner": found.owner,
            "description": found.info.description if found.info else None, "problem": found.problem or None,
            "tokens": tokens}


def cmd_install(args: argparse.Namespace) -> int:
    manager = _manager(args)
    added = manager.install(args.source, kind=args.kind, subpath=args.path, replace=args.replace)
    notes = []
    for skill in added:
        if args.client:
            notes += manager.enable(skill.name, args.client, "copy" if args.copy else "auto")
    if args.json:
        out(json.dumps({"installed": [s.name for s in added], "notes": notes}, indent=2))
        return 0
    for skill in added:
        out(f"installed {skill.name!r} from {skill.source} ({skill.kind})")
    for note in notes:
        out(f"  {note}")
    if not args.client:
        out("enable it with 'kvswitch skill enable NAME --client claude'")
    _session_note(args, added[0].name if len(added) == 1 else None)
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    """Each CC Switch skill installed from its folder; one already installed here is left as it is."""
    db = cc_switch_db(args.cc_switch or None)
    manager = _manager(args)
    installed = manager.manifest.skills()
    done: list[dict[str, Any]] = []
    for row in read_skills(db):
        if row.name in installed:
            done.append({"name": row.name, "installed": False, "why": "installed already"})
            continue
        try:
            added = manager.install(str(row.folder), kind="folder")
        except KvSwitchError as exc:
            done.append({"name": row.name, "installed": False, "why": str(exc)})
            continue
        done.append({"name": row.name, "installed": [s.name for s in added],
                     "cc_switch_apps": row.enabled_for})
    if args.json:
        out(json.dumps({"imported": done}, indent=2, ensure_ascii=False))
        return 0
    if not done:
        out(f"{db}: CC Switch holds no skills")
    for item in done:
        if item["installed"]:
            apps = ", ".join(item["cc_switch_apps"]) or "no app"
            out(f"{item['name']}: installed (CC Switch had it on for {apps}); enable it with "
                f"'kvswitch skill enable {item['installed'][0]} --client ...'")
        else:
            out(f"{item['name']}: not installed ({item['why']})")
    return 0


def cmd_enable(args: argparse.Namespace) -> int:
    notes = _manager(args).enable(args.name, args.client, "copy" if args.copy else "auto")
    _notes(args, notes)
    return 0


def cmd_disable(args: argparse.Namespace) -> int:
    notes = _manager(args).disable(args.name, args.client, force=args.force)
    _notes(args, notes)
    return 0


def cmd_update(args: argparse.Namespace) -> int:
    manager = _manager(args)
    names = args.names or sorted(manager.manifest.skills())
    notes: list[str] = []
    failed = 0
    for name in names:
        try:
            skill, done = manager.update(name, force=args.force)
            notes += [f"{skill.name}: updated from {skill.source}", *done]
        except KvSwitchError as exc:
            failed += 1
            notes.append(f"{name}: not updated: {exc}")
    _notes(args, notes)
    return 1 if failed else 0


def cmd_remove(args: argparse.Namespace) -> int:
    notes = _manager(args).remove(args.name, force=args.force)
    _notes(args, notes)
    return 0


def _notes(args: argparse.Namespace, notes: list[str]) -> None:
    if args.json:
        out(json.dumps({"notes": notes}, indent=2, ensure_ascii=False))
        return
    for note in notes:
        out(note)
    _session_note(args, getattr(args, "name", None))


def _session_note(args: argparse.Namespace, name: str | None) -> None:
    """What the change costs: the skill's line, counted by the local server in use (or unknown)."""
    size = ""
    found = [f for f in _manager(args).discover() if f.info is not None and f.name == name] if name else []
    if found and found[0].info is not None:
        line = found[0].info.listing_line()
        size = f" ({count_tokens(_active_profile(args), [line]).describe(line)})"
    err(f"note: a skill's line{size} sits in every request's prefix: a client's first request carrying the "
        "change re-processes its prompt from there on (docs/prompts-and-skills.md)")
