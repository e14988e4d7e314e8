"""One indexing pass: find every client's session files, read what each appended, keep the index.

Bounded and safe on any folder: directories are walked without following symlinks (no loop can hold
the pass), every file is read through ``lines`` (regular files only, streamed, capped lines), and a file
that cannot be read gets a note in the report while the others are read. ``progress(done, total, path)``
is called after each file so a window's worker can show how far it is; ``should_stop()`` ends the pass
cleanly between files (what was read is kept).
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from kvswitch.sessions import opencode
from kvswitch.sessions.claude import ClaudeReader
from kvswitch.sessions.codex import CodexReader
from kvswitch.sessions.lines import FileMark, NotReadable, open_regular, parse_line, read_lines, start_offset
from kvswitch.sessions.model import ClientHomes, IndexReport
from kvswitch.sessions.store import IndexWriter, all_marks, file_mark, save_mark

Progress = Callable[[int, int, str], None]
#: a Codex rollout's name ends in its session's id
_ROLLOUT_ID = re.compile(r"([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$")
#: commit every so many lines, so a huge first pass does not hold one transaction's journal for all of it
_COMMIT_LINES = 20_000


def _entries(folder: Path, report: IndexReport) -> Iterator[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as found:
            yield from sorted(found, key=lambda entry: entry.name)
    except FileNotFoundError:
        return
    except OSError as exc:
        report.note(str(folder), f"cannot list it: {exc.strerror or exc}")


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def claude_files(projects: Path, report: IndexReport) -> Iterator[tuple[str, str, str]]:
    """(file, session id, agent) of every transcript under ``projects``: sessions, then their subagents."""
    for project in _entries(projects, report):
        if not _is_dir(project):
            continue
        for entry in _entries(Path(project.path), report):
            if entry.name.endswith(".jsonl"):
                yield entry.path, entry.name[: -len(".jsonl")], ""
            elif _is_dir(entry):
                yield from _subagents(Path(entry.path) / "subagents", entry.name, report, depth=0)


def _subagents(folder: Path, session: str, report: IndexReport, depth: int) -> Iterator[tuple[str, str, str]]:
    if depth > 3:
        return
    for entry in _entries(folder, report):
        if entry.name.startswith("agent-") and entry.name.endswith(".jsonl"):
            yield entry.path, session, entry.name[len("agent-") : -len(".jsonl")]
        elif _is_dir(entry):
            yield from _subagents(Path(entry.path), session, report, depth + 1)


def codex_files(sessions: Path, report: IndexReport) -> Iterator[tuple[str, str, str]]:
    """(file, session id, "") of every rollout under ``sessions/YYYY/MM/DD``."""
    for year in _entries(sessions, report):
        for month in _entries(Path(year.path), report) if _is_dir(year) else ():
            for day in _entries(Path(month.path), report) if _is_dir(month) else ():
                for entry in _entries(Path(day.path), report) if _is_dir(day) else ():
                    found = (
                        _ROLLOUT_ID.search(entry.name[: -len(".jsonl")])
                        if entry.name.startswith("rollout-") and entry.name.endswith(".jsonl")
                        else None
                    )
                    if found:
                        yield entry.path, found.group(1), ""


def _unchanged(path: str, mark: tuple[str, int, int, int] | None) -> bool:
    """True when ``path`` has the size, mtime and inode the last pass left it with (one stat, no open:
    most files of a pass are; ``start_offset`` decides the rest when it is read)."""
    if mark is None:
        return False
    try:
        found = os.stat(path)
    except OSError:
        return False  # reading it will say what is wrong
    return (found.st_size, found.st_mtime_ns, found.st_ino) == mark[1:]


def read_file(
    db: sqlite3.Connection,
    writer: IndexWriter,
    client: str,
    path: Path,
    session: str,
    agent: str,
    report: IndexReport,
) -> None:
    """Read what ``path`` appended since the last pass into the index (or all of it, if it changed)."""
    key = str(path)
    mark, state = file_mark(db, key)
    notes: list[str] = []

    def note(text: str) -> None:
        if len(notes) < 20 and text not in notes:
            notes.append(text)

    try:
        fd, found = open_regular(path)
    except NotReadable as exc:
        report.note(key, str(exc))
        return
    try:
        offset = start_offset(found, mark)
        if offset is None:
            return
        if offset == 0 and mark is not None:
            writer.forget_file(key)
            state = None
        writer.file = key
        reader: Any = (
            ClaudeReader(writer, session, agent, state)
            if client == "claude"
            else CodexReader(writer, session, state)
        )
        report.files_read += 1
        end = offset
        for lines, (end, raw) in enumerate(read_lines(fd, offset, note), 1):
            line = None if reader.skips(raw) else parse_line(raw, note)
            if line is not None:
                reader.feed(line, note)
            if lines % _COMMIT_LINES == 0:
                writer.flush_sessions()
                save_mark(db, key, client, session, FileMark(0, 0, found.st_ino, end), reader.state, notes)
                db.commit()
        report.bytes_read += end - offset
        writer.flush_sessions()
        size = end if end < found.st_size else found.st_size
        old_notes = (
            json.loads(db.execute("SELECT notes FROM files WHERE path = ?", (key,)).fetchone()[0])
            if offset and mark is not None
            else []
        )
        merged = list(dict.fromkeys([*old_notes, *notes]))[-20:]
        save_mark(
            db,
            key,
            client,
            getattr(reader, "state", {}).get("session", session) if client == "codex" else session,
            FileMark(size, found.st_mtime_ns if size == found.st_size else 0, found.st_ino, end),
            reader.state,
            merged,
        )
        db.commit()
        for text in notes:
            report.note(key, text)
    finally:
        os.close(fd)


def read_opencode(db: sqlite3.Connection, writer: IndexWriter, path: Path, report: IndexReport) -> None:
    """Read the OpenCode sessions that changed since the last pass (a whole session at a time)."""
    key = str(path)
    try:
        found = path.stat()
    except FileNotFoundError:
        return
    except OSError as exc:
        report.note(key, f"cannot read its status: {exc.strerror or exc}")
        return
    if not stat.S_ISREG(found.st_mode):
        report.note(key, "not a regular file: skipped")
        return
    seen = {
        row[0].split("#", 1)[1]: row[1]
        for row in db.execute(
            "SELECT path, mtime_ns FROM files WHERE client = 'opencode' AND path LIKE ?", (key + "#%",)
        )
    }
    try:
        source = opencode.connect(path)
    except Exception as exc:  # noqa: BLE001 - sqlite3 and OS errors alike: one note, the rest goes on
        report.note(key, f"cannot open it read-only: {exc}")
        return
    try:
        rows = opencode.changed_sessions(source, seen)
        parents = {row[0]: row[1] for row in source.execute("SELECT id, parent_id FROM session")}
        roots = {opencode.root_of(row[0], parents) for row in rows}
        report.files_read += bool(roots)
        for root in sorted(roots):
            writer.forget_session_calls("opencode", root)
            writer.file = f"{key}#{root}"
            family = [
                row
                for row in source.execute(
                    "SELECT id, parent_id, directory, title, version, time_created, time_updated FROM session"
                )
                if opencode.root_of(row[0], parents) == root
            ]
            for row in family:
                notes: list[str] = []
                for call in opencode.steps(source, row[0], root, str(row[4] or ""), notes.append):
                    writer.call(call)
                fields = opencode.session_fields(row)
                title = opencode.first_prompt(source, row[0]) if row[0] == root else ""
                fields["title"] = title or fields.get("title", "")
                if row[0] != root:
                    fields = {"times": fields.get("times", [])}
                writer.session("opencode", root, **fields)
                save_mark(
                    db,
                    f"{key}#{row[0]}",
                    "opencode",
                    root,
                    FileMark(0, int(row[6]) if isinstance(row[6], int) else 0, 0, 0),
                    None,
                    notes,
                )
                for text in notes:
                    report.note(key, text)
            writer.flush_sessions()
            db.commit()
    except opencode.Busy as exc:
        report.note(key, f"OpenCode is writing it ({exc}): read on the next pass")
    except sqlite3.Error as exc:
        report.note(key, f"cannot read it: {exc}")
    finally:
        source.close()


def index_all(
    db: sqlite3.Connection,
    homes: ClientHomes,
    progress: Progress | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> IndexReport:
    """One pass over every client's files (see the module's docstring)."""
    report = IndexReport()
    writer = IndexWriter(db)
    found = [("claude", *entry) for entry in claude_files(homes.claude_projects, report)]
    found += [("codex", *entry) for entry in codex_files(homes.codex_sessions, report)]
    total = len(found) + 1
    report.files_seen = len(found)
    present = {entry[1] for entry in found}
    marks = all_marks(db)
    gone = [path for path, mark in marks.items() if mark[0] in ("claude", "codex") and path not in present]
    for path in gone:
        writer.forget_file(path)
    for done, (client, path, session, agent) in enumerate(found, 1):
        if should_stop is not None and should_stop():
            break
        if _unchanged(path, marks.get(path)):  # paths stay text here: a Path per file cost more than a stat
            if progress is not None:
                progress(done, total, path)
            continue
        try:
            read_file(db, writer, client, Path(path), session, agent, report)
        except sqlite3.Error:
            raise
        except Exception as exc:  # noqa: BLE001 - one file's surprise must not stop the others
            db.rollback()
            report.note(path, f"reading it failed: {type(exc).__name__}: {exc}")
        if progress is not None:
            progress(done, total, path)
    if should_stop is None or not should_stop():
        read_opencode(db, writer, homes.opencode_db, report)
        if progress is not None:
            progress(total, total, str(homes.opencode_db))
    if gone or writer.touched:  # a pass that read nothing new leaves every session as it was
        db.execute(
            "DELETE FROM sessions WHERE NOT EXISTS (SELECT 1 FROM files f WHERE f.client = "
            "sessions.client AND f.session_id = sessions.session_id)"
        )
        db.commit()
    report.sessions_changed = writer.touched
    return report
