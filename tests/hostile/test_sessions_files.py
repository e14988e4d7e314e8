"""Hostile client files for the session readers (issue 35): each gives a clear note on that file, never
stops the other files, and nothing a client owns is ever written.

The lines are made, not captured (no client writes them on purpose), in the shape Claude Code 2.1.332
writes (``api-request`` + ``assistant`` with ``requestRef``, measured: tests/fixtures/sessions-2026-12).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path

import pytest

from kvswitch.cli import main
from kvswitch.core.paths import AppPaths
from kvswitch.sessions import ClientHomes, IndexReport, index_sessions, list_sessions, session_turns
from kvswitch.sessions.lines import read_lines

PROJECT = "/tmp/hostile-project"


def _call(number: int, read: int = 0, fresh: int = 100, output: int = 5, session: str = "s1") -> bytes:
    request = {"type": "api-request", "sessionId": session, "id": f"req-{number}", "version": "2.1.332",
               "timestamp": f"2026-12-07T08:{number % 60:02d}:00.000Z", "querySource": "sdk",
               "shapeHash": "h1", "params": {"model": "claude-sonnet-4-5"}, "keep": 0, "tail": [f"m{number}"]}
    answer = {"type": "assistant", "sessionId": session, "requestRef": f"req-{number}", "cwd": PROJECT,
              "timestamp": f"2026-12-07T08:{number % 60:02d}:01.000Z",
              "message": {"id": f"msg_{number}", "model": "claude-sonnet-4-5",
                          "usage": {"input_tokens": fresh, "cache_read_input_tokens": read,
                                    "cache_creation_input_tokens": 0, "output_tokens": output}}}
    return (json.dumps(request) + "\n" + json.dumps(answer) + "\n").encode()


@pytest.fixture
def paths(fake_home: Path) -> AppPaths:
    return AppPaths.default()


@pytest.fixture
def projects(fake_home: Path) -> Path:
    folder = fake_home / ".claude" / "projects" / "-tmp-hostile-project"
    folder.mkdir(parents=True)
    return folder


def _digests(root: Path) -> dict[str, str]:
    """Every client file's content hash and mode: reading must change none of them."""
    found = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest() + oct(path.stat().st_mode)
    return found


def _session(paths: AppPaths, session: str) -> tuple[int, int]:
    found = {item.session_id: item for item in list_sessions(paths)}
    return found[session].calls, found[session].cache_read


def test_a_line_still_being_written_is_left_for_the_next_pass(paths: AppPaths, projects: Path) -> None:
    transcript = projects / "s1.jsonl"
    whole = _call(1) + _call(2, read=100)
    cut = len(_call(1)) + 40
    transcript.write_bytes(whole[:cut])  # the second call's request line is half written
    report = index_sessions(paths)
    assert not report.notes
    assert _session(paths, "s1") == (1, 0)
    with transcript.open("ab") as handle:
        handle.write(whole[cut:])
    report = index_sessions(paths)
    assert report.bytes_read == len(whole) - len(_call(1))  # only what was appended, from the cut line
    assert _session(paths, "s1") == (2, 100)


def test_not_utf8_and_not_json_lines_are_noted_and_the_rest_read(paths: AppPaths, projects: Path) -> None:
    bad = b'{"type": "user", "message": {"content": "caf\xe9 \xff"}, "cwd": "/tmp/x"}\n' + b"{not json\n"
    (projects / "s1.jsonl").write_bytes(_call(1) + bad + _call(2, read=100))
    report = index_sessions(paths)
    notes = report.notes[str(projects / "s1.jsonl")]
    assert any("not UTF-8" in text for text in notes)
    assert any("not JSON" in text for text in notes)
    assert _session(paths, "s1") == (2, 100)


def test_a_100_mb_line_is_skipped_in_bounded_memory(paths: AppPaths, projects: Path) -> None:
    huge = b'{"type": "user", "message": {"content": "' + b"x" * (100 << 20) + b'"}}\n'
    (projects / "s1.jsonl").write_bytes(_call(1) + huge + _call(2, read=100))
    (projects / "s2.jsonl").write_bytes(_call(1, session="s2"))
    report = index_sessions(paths)
    notes = report.notes[str(projects / "s1.jsonl")]
    assert any("longer than 8 MB: skipped" in text for text in notes), notes
    assert _session(paths, "s1") == (2, 100)
    assert _session(paths, "s2") == (1, 0)


def test_the_line_reader_never_holds_more_than_its_cap(tmp_path: Path) -> None:
    """The 100 MB line is walked through in 1 MiB reads: what is buffered never passes the cap."""
    path = tmp_path / "big.jsonl"
    path.write_bytes(b"a" * (20 << 20) + b"\n" + b'{"ok": 1}\n')
    notes: list[str] = []
    fd = os.open(path, os.O_RDONLY)
    try:
        lines = list(read_lines(fd, 0, notes.append, max_line=1 << 20))
    finally:
        os.close(fd)
    assert lines == [((20 << 20) + 1, b""), ((20 << 20) + 11, b'{"ok": 1}')]
    assert len(notes) == 1


def test_negative_and_huge_counts_are_dropped_with_a_note(paths: AppPaths, projects: Path) -> None:
    line = _call(1).replace(b'"input_tokens": 100', b'"input_tokens": -5').replace(
        b'"output_tokens": 5', b'"output_tokens": 1e300')
    (projects / "s1.jsonl").write_bytes(line + _call(2, read=2**70))
    report = index_sessions(paths)
    notes = report.notes[str(projects / "s1.jsonl")]
    assert any("input_tokens=-5 ignored" in text for text in notes), notes
    assert any("output_tokens=" in text and "ignored" in text for text in notes)
    assert any("cache_read_input_tokens=" in text and "ignored" in text for text in notes)
    summary = list_sessions(paths)[0]
    assert (summary.fresh, summary.output, summary.cache_read) == (100, 5, 0)


def test_a_file_replaced_or_shrunk_is_read_again_whole(paths: AppPaths, projects: Path) -> None:
    transcript = projects / "s1.jsonl"
    transcript.write_bytes(_call(1) + _call(2) + _call(3))
    index_sessions(paths)
    assert _session(paths, "s1")[0] == 3
    replacement = projects / "new.tmp"
    replacement.write_bytes(_call(7, read=50))
    os.replace(replacement, transcript)  # another file (new inode) under the same name
    index_sessions(paths)
    assert _session(paths, "s1") == (1, 50)
    transcript.write_bytes(_call(8))  # same inode, shorter
    index_sessions(paths)
    assert _session(paths, "s1") == (1, 0)


def test_a_file_deleted_while_the_pass_runs_is_noted_and_the_rest_read(
    paths: AppPaths, projects: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("a", "b", "c"):
        (projects / f"{name}.jsonl").write_bytes(_call(1, session=name))
    from kvswitch.sessions import indexer  # noqa: PLC0415 - the seam the deletion races with

    real = indexer.read_file

    def deleting(db, writer, client, path, session, agent, report):  # type: ignore[no-untyped-def]
        if path.name == "a.jsonl":
            (projects / "b.jsonl").unlink()  # b vanishes between the listing and its read
        return real(db, writer, client, path, session, agent, report)

    monkeypatch.setattr(indexer, "read_file", deleting)
    report = index_sessions(paths)
    assert any("cannot open it" in text for text in report.notes[str(projects / "b.jsonl")])
    assert {item.session_id for item in list_sessions(paths)} == {"a", "c"}


def test_symlink_loops_and_a_fifo_never_hold_the_pass(
    paths: AppPaths, projects: Path, fake_home: Path
) -> None:
    (projects / "loop").symlink_to(projects)  # a directory loop: not followed
    (projects / "self.jsonl").symlink_to(projects / "self.jsonl")  # a file loop
    os.mkfifo(projects / "fifo.jsonl")  # opening it for reading would block a naive reader forever
    (projects / "s1.jsonl").write_bytes(_call(1))
    before = _digests(fake_home / ".claude")
    result: dict[str, object] = {}
    worker = threading.Thread(target=lambda: result.setdefault("report", index_sessions(paths)), daemon=True)
    worker.start()
    worker.join(30)
    assert not worker.is_alive(), "the pass hung on the FIFO or the loop"
    report = result["report"]
    assert isinstance(report, IndexReport)
    assert any("regular file" in text for text in report.notes[str(projects / "fifo.jsonl")])
    assert any("cannot open it" in text for text in report.notes[str(projects / "self.jsonl")])
    assert [item.session_id for item in list_sessions(paths)] == ["s1"]
    assert _digests(fake_home / ".claude") == before


def test_a_broken_opencode_database_is_noted_and_the_transcripts_read(
    paths: AppPaths, projects: Path, fake_home: Path
) -> None:
    database = fake_home / ".local" / "share" / "opencode" / "opencode.db"
    database.parent.mkdir(parents=True)
    database.write_bytes(b"this is not a database" * 100)
    (projects / "s1.jsonl").write_bytes(_call(1))
    before = _digests(fake_home)
    report = index_sessions(paths, ClientHomes.from_env())
    assert any("cannot read it" in text or "cannot open it" in text for text in report.notes[str(database)])
    assert [item.session_id for item in list_sessions(paths)] == ["s1"]
    assert {k: v for k, v in _digests(fake_home).items() if "kvswitch" not in k} == \
        {k: v for k, v in before.items() if "kvswitch" not in k}
    assert not (database.parent / "opencode.db-wal").exists()


def test_the_cli_names_the_bad_file_on_stderr_and_lists_the_rest(
    paths: AppPaths, projects: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    os.mkfifo(projects / "fifo.jsonl")
    (projects / "s1.jsonl").write_bytes(_call(1) + b"\xff\xfe garbage\n")
    assert main(["sessions", "--source", "files", "--since", "all", "--json"]) == 0
    captured = capsys.readouterr()
    assert [row["session"] for row in json.loads(captured.out)] == ["s1"]
    assert "fifo.jsonl: not a regular file" in captured.err
    assert main(["session", "show", "nosuch"]) == 1
    assert "no session 'nosuch'" in capsys.readouterr().err
    summary, turns = session_turns(paths, "s1")
    assert summary.calls == len(turns) == 1


def test_a_damaged_index_is_built_anew_from_the_clients_files(paths: AppPaths, projects: Path) -> None:
    """The index runs without fsync (it is a cache): a power loss that damages it, or any other bytes at
    its path, must cost one full read, not a traceback."""
    (projects / "s1.jsonl").write_bytes(_call(1) + _call(2, read=100))
    index_sessions(paths)
    index = paths.data_dir / "sessions.db"
    index.write_bytes(b"not a database " * 4096)
    report = index_sessions(paths)
    assert report.files_read == 1
    assert _session(paths, "s1") == (2, 100)
    assert oct(index.stat().st_mode & 0o777) == "0o600"


def test_a_pass_that_finds_a_file_gone_drops_its_session(paths: AppPaths, projects: Path) -> None:
    (projects / "s1.jsonl").write_bytes(_call(1))
    (projects / "s2.jsonl").write_bytes(_call(1, session="s2"))
    index_sessions(paths)
    (projects / "s2.jsonl").unlink()
    report = index_sessions(paths)
    assert report.files_read == 0
    assert {item.session_id for item in list_sessions(paths)} == {"s1"}
