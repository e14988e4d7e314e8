"""``kvswitch prompt list|add|import|use|copy|remove``: memory-file presets for every client.

``use`` and ``copy`` write through the switching transaction (``targets.memory_switch``): a backup of
every file, the journal, atomic writes, and ``kvswitch undo`` to take it back. A memory file edited by
hand since KV Switch wrote it is refused unless ``--force``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from kvswitch.commands.common import err, out, paths_from, store_from
from kvswitch.core.ccswitch_library import cc_switch_db, read_prompts
from kvswitch.core.errors import KvSwitchError, ProfileError, UsageError
from kvswitch.core.fsutil import read_bytes
from kvswitch.core.prompts import (
    MAX_PROMPT_BYTES,
    PROMPT_CLIENTS,
    PromptStore,
    decode_prompt,
    memory_file,
)
from kvswitch.targets.diff import render_plans
from kvswitch.targets.memory_switch import MemoryWrite, MemoryWriter
from kvswitch.targets.prompt_imports import import_cc_switch_rows, import_memory_files
from kvswitch.verify.entry_tokens import TokenCounts, count_tokens


def register(subparsers: Any) -> None:
    prompt = subparsers.add_parser("prompt",
                                   help="memory-file presets (CLAUDE.md, AGENTS.md) for every client")
    sub = prompt.add_subparsers(dest="prompt_command", metavar="ACTION", required=True)

    listing = sub.add_parser("list", help="presets, each client's memory file, and the tokens each adds")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(func=cmd_list)

    add = sub.add_parser("add", help="store a preset from a file ('-' or nothing: stdin)")
    add.add_argument("name")
    add.add_argument("file", nargs="?", default="-")
    add.add_argument("--replace", action="store_true", help="replace a preset of the same name")
    add.add_argument("--json", action="store_true")
    add.set_defaults(func=cmd_add)

    imp = sub.add_parser("import", help="store each client's current memory file as a preset")
    imp.add_argument("--client", action="append", choices=PROMPT_CLIENTS,
                     help="only this client (repeatable)")
    imp.add_argument("--name", help="preset name (one client only; default: the client's name)")
    imp.add_argument("--cc-switch", nargs="?", const="", metavar="DB", dest="cc_switch",
                     help="import CC Switch's prompt presets instead (default ~/.cc-switch/cc-switch.db)")
    imp.add_argument("--json", action="store_true")
    imp.set_defaults(func=cmd_import)

    use = sub.add_parser("use", help="write a preset as the memory file of one or more clients")
    use.add_argument("name")
    use.add_argument("--client", action="append", choices=PROMPT_CLIENTS, required=True,
                     help="client to write (repeatable)")
    _write_flags(use)
    use.set_defaults(func=cmd_use)

    copy = sub.add_parser("copy", help="copy one client's memory file to other clients")
    copy.add_argument("--from", dest="source", choices=PROMPT_CLIENTS, required=True)
    copy.add_argument("--to", action="append", choices=PROMPT_CLIENTS, required=True, help="repeatable")
    _write_flags(copy)
    copy.set_defaults(func=cmd_copy)

    remove = sub.add_parser("remove", help="forget a preset (memory files keep their text)")
    remove.add_argument("name")
    remove.add_argument("--json", action="store_true")
    remove.set_defaults(func=cmd_remove)


def _write_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--force", action="store_true",
                        help="replace a memory file edited by hand (a backup is kept; "
                        "'kvswitch undo' puts it back)")
    parser.add_argument("--dry-run", action="store_true", help="show the change, write nothing")
    parser.add_argument("--json", action="store_true")


def _writer(args: argparse.Namespace, store: PromptStore) -> MemoryWriter:
    return MemoryWriter(paths_from(args), os.environ, {p.text for p in store.presets()})


def _active_profile(args: argparse.Namespace) -> Any:
    try:
        profiles = store_from(args)
        name = profiles.active_name
        return profiles.get(name) if name else None
    except (ProfileError, KvSwitchError):
        return None


def cmd_list(args: argparse.Namespace) -> int:
    store = PromptStore(paths_from(args))
    presets = store.presets()
    writer = _writer(args, store)
    files = []
    for client in PROMPT_CLIENTS:
        try:
            text, preset = writer.read(client)
            files.append({"client": client, "path": str(memory_file(client, os.environ)), "text": text,
                          "preset": preset, "error": None})
        except KvSwitchError as exc:
            files.append({"client": client, "path": str(memory_file(client, os.environ)), "text": None,
                          "preset": None, "error": str(exc)})
    for entry in files:
        entry["same"] = next((p.name for p in presets if p.text == entry["text"]), None)
    texts = [p.text for p in presets] + [f["text"] for f in files if f["text"]]
    tokens = count_tokens(_active_profile(args), texts)
    if args.json:
        out(json.dumps({
            "counted_by": tokens.by, "why_unknown": tokens.why or None,
            "presets": [{"name": p.name, "origin": p.origin, "bytes": len(p.text.encode()),
                         "tokens": tokens.number(p.text),
                         "live_in": [f["client"] for f in files if f["text"] == p.text]} for p in presets],
            "memory_files": [{"client": f["client"], "path": f["path"], "exists": f["text"] is not None,
                              "preset": f["preset"], "error": f["error"],
                              "tokens": tokens.number(f["text"]) if f["text"] else None} for f in files],
        }, indent=2, ensure_ascii=False))
        return 0
    out("presets:" if presets else "presets: none yet ('kvswitch prompt import' or 'kvswitch prompt add')")
    for p in presets:
        live = [f["client"] for f in files if f["text"] == p.text]
        out(f"  {p.name}: {len(p.text.encode()):,} bytes, {tokens.describe(p.text)}"
            + (f"; in {', '.join(str(c) for c in live)}" if live else ""))
    out("memory files (added to every request of their client):")
    for f in files:
        out(f"  {f['client']}: {f['path']}: {_state(f, tokens)}")
    return 0


def _state(entry: dict[str, Any], tokens: TokenCounts) -> str:
    if entry["error"]:
        return f"cannot be read ({entry['error']})"
    if entry["text"] is None:
        return "absent"
    same = entry.get("same")
    owner = (f"preset {entry['preset']!r}" if entry["preset"]
             else f"holds preset {same!r}'s text, not written by KV Switch" if same
             else "not written by KV Switch (or edited since)")
    return f"{owner}, {tokens.describe(entry['text'])}"


def cmd_add(args: argparse.Namespace) -> int:
    if args.file == "-":
        stream = getattr(sys.stdin, "buffer", None)  # a text-only stdin (an embedding caller) has none
        raw = (stream.read(MAX_PROMPT_BYTES + 1) if stream is not None
               else sys.stdin.read(MAX_PROMPT_BYTES + 1).encode("utf-8", "surrogateescape"))
        where = "stdin"
    else:
        path = Path(args.file).expanduser()
        raw_or_none = read_bytes(path, limit=MAX_PROMPT_BYTES)
        if raw_or_none is None:
            raise UsageError(f"{path}: no such file")
        raw, where = raw_or_none, str(path)
    text = decode_prompt(raw, where)
    preset = PromptStore(paths_from(args)).add(args.name, text, f"added from {where}", replace=args.replace)
    _report(args, {"added": preset.name, "bytes": len(raw)},
            f"stored preset {preset.name!r} ({len(raw):,} bytes)")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    if args.cc_switch is not None:
        return _import_cc_switch(args)
    clients = args.client or list(PROMPT_CLIENTS)
    if args.name and len(clients) != 1:
        raise UsageError("--name needs exactly one --client")
    paths = paths_from(args)
    results = import_memory_files(paths, PromptStore(paths), clients, args.name)
    done = [{"client": r.client, "preset": r.preset, "new": r.new} for r in results if not r.problem]
    failed = [r.problem for r in results if r.problem]
    if args.json:
        out(json.dumps({"imported": done, "not_imported": failed}, indent=2))
    elif not done and not failed:
        out("no memory file found to import")
    for item in [] if args.json else done:
        verb = "imported as preset" if item["new"] else "already stored as preset"
        out(f"{item['client']}: {verb} {item['preset']!r}")
    for problem in failed:
        err(f"not imported: {problem}")
    return 1 if failed else 0


def _import_cc_switch(args: argparse.Namespace) -> int:
    """Every CC Switch prompt row as a preset (same text already stored: skipped), named as there."""
    db = cc_switch_db(args.cc_switch or None)
    results = import_cc_switch_rows(PromptStore(paths_from(args)), read_prompts(db), db)
    done = [{"app": r.row.app, "name": r.row.name, "preset": r.preset, "new": r.new} for r in results]
    if args.json:
        out(json.dumps({"imported": done}, indent=2, ensure_ascii=False))
        return 0
    if not done:
        out(f"{db}: CC Switch holds no prompt presets")
    for item in done:
        verb = "imported as preset" if item["new"] else "already stored as preset"
        out(f"CC Switch {item['app']} {item['name']!r}: {verb} {item['preset']!r}")
    return 0


def cmd_use(args: argparse.Namespace) -> int:
    store = PromptStore(paths_from(args))
    preset = store.get(args.name)
    return _write(args, store, MemoryWrite(preset.name, preset.text, tuple(args.client), args.force))


def cmd_copy(args: argparse.Namespace) -> int:
    store = PromptStore(paths_from(args))
    writer = _writer(args, store)
    text, preset = writer.read(args.source)
    if text is None:
        raise UsageError(f"{memory_file(args.source, os.environ)}: no memory file to copy")
    targets = tuple(c for c in args.to if c != args.source)
    if not targets:
        raise UsageError("--to names only the --from client; nothing to copy")
    text = decode_prompt(text.encode("utf-8", "surrogateescape"), memory_file(args.source, os.environ))
    same = store.find_text(text)
    label = preset or (same.name if same is not None else f"copy of {args.source}")
    return _write(args, store, MemoryWrite(label, text, targets, args.force),
                  known_extra={text})


def _write(args: argparse.Namespace, store: PromptStore, change: MemoryWrite,
           known_extra: set[str] | None = None) -> int:
    writer = _writer(args, store)
    writer.known_texts |= known_extra or set()
    if args.dry_run:
        plans = writer.plan(change)
        if args.json:
            out(json.dumps({"dry_run": True, "files": [p.location for p in plans if p.changed],
                            "warnings": [w for p in plans for w in p.warnings]}, indent=2))
        else:
            unchanged = f"nothing would change: {change.preset!r} is there already\n"
            sys.stdout.write(render_plans(plans) or unchanged)
            out("(dry run: nothing was written)")
        return 0
    result = writer.apply(change)
    if args.json:
        out(json.dumps({"preset": change.preset, "written": result.written, "backups": result.backups,
                        "warnings": result.warnings, "notes": result.notes}, indent=2))
    else:
        for note in result.notes:
            out(f"note: {note}")
        if result.written:
            out(f"wrote preset {change.preset!r} to " + ", ".join(result.written)
                + "; 'kvswitch undo' takes it back")
        else:
            out(f"nothing needed to change: {change.preset!r} is there already")
        size = count_tokens(_active_profile(args), [change.text]).describe(change.text)
        out(f"note: the memory file ({size}) sits in every request's prefix: a client's first request "
            "carrying the new text re-processes its prompt from there on (docs/prompts-and-skills.md)")
    for warning in result.warnings:
        err(f"warning: {warning}")
    return 0


def cmd_remove(args: argparse.Namespace) -> int:
    preset = PromptStore(paths_from(args)).remove(args.name)
    _report(args, {"removed": preset.name},
            f"forgot preset {preset.name!r}; memory files holding its text keep it")
    return 0


def _report(args: argparse.Namespace, data: dict[str, Any], text: str) -> None:
    out(json.dumps(data) if getattr(args, "json", False) else text)
