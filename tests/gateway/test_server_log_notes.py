"""The gateway's reader of the profiles' server logs (``kvswitch.commands.server_notes``) on real files:
it reads from the end, hands on only the lines in which the server says it threw its cache away, follows
profiles as they are given or lose a log, never starts a ``command`` source, and survives a log it
cannot read. The lines are real llama-server b11434 output (``tests/fixtures/llama.cpp-b11434``)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from kvswitch.commands.server_notes import ServerLogNotes
from kvswitch.core.models import LogSource, Profile
from kvswitch.core.paths import AppPaths
from kvswitch.core.store import ProfileStore

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "llama.cpp-b11434" / "llama_server_swa_lv4.log"


def _lines(path: Path, lines: list[str]) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.writelines(line + "\n" for line in lines)


def _forced_lines() -> list[str]:
    return [line for line in FIXTURE.read_text().splitlines() if "forcing full prompt re-processing" in line]


def test_only_forced_re_processing_said_after_the_start_becomes_a_note(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    real = FIXTURE.read_text().splitlines()
    forced = _forced_lines()
    assert forced, "the fixture holds the server's own words"
    _lines(log, forced)  # said before the gateway started: about requests it never saw
    paths = AppPaths.default()
    ProfileStore(paths).add(Profile(name="local", kind="llama.cpp", base_url="http://127.0.0.1:9",
                                    log=LogSource(kind="file", path=str(log))))
    reader = ServerLogNotes(paths, poll_s=0.02).start()
    try:
        assert reader.notes.follows("local")
        since = time.monotonic()
        reader.catch_up("local")  # opens the file at its end
        _lines(log, real)  # a whole real run: prompts, timings, hits, and its forced re-processings
        note = reader.notes.claim("local", since)
        assert note is not None
        assert "forcing full prompt re-processing" in note.text
        assert note.meaning is not None
        assert "full re-processing forced" in note.meaning
        claimed = 1
        while reader.notes.claim("local", since) is not None:
            claimed += 1
        assert claimed == len(forced)  # one note per forced line, none for the other lines
    finally:
        reader.notes.close()
    assert not reader.notes.follows("local") or reader._followed == {}


def test_profiles_are_followed_as_they_change_and_a_command_source_is_never_started(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    paths = AppPaths.default()
    store = ProfileStore(paths)
    store.add(Profile(name="starts-a-server", kind="llama.cpp", base_url="http://127.0.0.1:9",
                      log=LogSource(kind="command", command=[sys.executable, "-c",
                                                             f"open({str(marker)!r}, 'w')"])))
    reader = ServerLogNotes(paths, poll_s=0.02).start()
    try:
        assert not reader.notes.follows("starts-a-server")
        log = tmp_path / "later.log"
        store.add(Profile(name="later", kind="llama.cpp", base_url="http://127.0.0.1:9",
                          log=LogSource(kind="file", path=str(log))))
        reader._refresh()  # what the thread does every PROFILES_S
        assert reader.notes.follows("later")
        store.remove("later")
        reader._refresh()
        assert not reader.notes.follows("later")
    finally:
        reader.notes.close()
    assert not marker.exists()


def test_a_log_that_cannot_be_read_costs_its_notes_and_nothing_else(tmp_path: Path) -> None:
    log = tmp_path / "a-directory-not-a-file"
    log.mkdir()
    paths = AppPaths.default()
    ProfileStore(paths).add(Profile(name="local", kind="llama.cpp", base_url="http://127.0.0.1:9",
                                    log=LogSource(kind="file", path=str(log))))
    reader = ServerLogNotes(paths, poll_s=0.02).start()
    try:
        reader.catch_up("local")
        time.sleep(0.1)  # a few polls of the thread over the unreadable source
        assert reader.notes.claim("local", 0.0) is None
        assert reader._thread is not None
        assert reader._thread.is_alive()
    finally:
        reader.notes.close()
    assert reader._thread is not None
    assert not reader._thread.is_alive()


def test_a_log_that_failed_is_left_until_the_profile_names_another(tmp_path: Path) -> None:
    """A reader that raises (a fault no real log produces on demand, so it is made to) costs that log
    its notes; the profile edited to follow another log is followed again."""
    first, second = tmp_path / "first.log", tmp_path / "second.log"
    for log in (first, second):
        log.touch()  # both servers are running
    paths = AppPaths.default()
    store = ProfileStore(paths)
    store.add(Profile(name="local", kind="llama.cpp", base_url="http://127.0.0.1:9",
                      log=LogSource(kind="file", path=str(first))))
    reader = ServerLogNotes(paths, poll_s=60).start()  # the test drives every read and refresh itself
    try:
        def broken() -> list[str]:
            raise OSError("the log went away")

        reader._followed["local"].reader.read_lines = broken  # type: ignore[method-assign]
        reader.catch_up("local")
        assert not reader.notes.follows("local")
        reader._refresh()
        assert not reader.notes.follows("local")  # the same log is not opened again
        store.update("local", Profile(name="local", kind="llama.cpp", base_url="http://127.0.0.1:9",
                                      log=LogSource(kind="file", path=str(second))))
        reader._refresh()
        assert reader.notes.follows("local")
        since = time.monotonic()
        reader.catch_up("local")  # opens the new file at its end
        _lines(second, _forced_lines()[:1])
        note = reader.notes.claim("local", since)
        assert note is not None
        assert "forcing full prompt re-processing" in note.text
    finally:
        reader.notes.close()
