"""Log evidence: the GUI's live events (a callable) and a profile's log file read by the log engine."""

from __future__ import annotations

from pathlib import Path

from kvswitch.core.models import LogSource, Profile
from kvswitch.logs.model import CacheEvent
from kvswitch.verify.logtap import LogTap


def _event(prompt: int, cached: int) -> CacheEvent:
    return CacheEvent("llama.cpp", 0, 1, prompt, cached, prompt - cached, None, 1, 2)


def test_callable_events_after_the_baseline() -> None:
    events = [_event(100, 0)]
    tap = LogTap(Profile(name="p", base_url="http://127.0.0.1:1"), lambda: events)
    tap.start()
    events.extend([_event(2400, 10), _event(500, 400), _event(2410, 2390)])
    found = tap.events(expected=3, wait=0.5)
    assert len(found) == 3
    reading = tap.reading(found, prompt_hint=2410)
    assert reading is not None
    assert (reading.source, reading.cached, reading.prompt) == ("log", 2390, 2410)


def test_a_broken_callable_is_no_evidence() -> None:
    def broken() -> list:
        raise RuntimeError("panel closed")

    tap = LogTap(Profile(name="p", base_url="http://127.0.0.1:1"), broken)
    tap.start()
    assert tap.events(wait=0.1) == []
    assert tap.reading([], None) is None


def test_log_file_lines_appended_after_start(fixtures_dir: Path, tmp_path: Path) -> None:
    source = (fixtures_dir / "llama.cpp-b11434" / "llama_server_np1_default.log").read_text().splitlines(True)
    log = tmp_path / "server.log"
    log.write_text("".join(source[:15]))  # startup and the first (cold) request
    profile = Profile(
        name="p", kind="llama.cpp", base_url="http://127.0.0.1:1", log=LogSource(kind="file", path=str(log))
    )
    tap = LogTap(profile)
    tap.start()
    with log.open("a") as handle:
        handle.write("".join(source[15:22]))  # the hit: 1536 cached, 23 new (truth file)
    found = tap.events(expected=1, wait=1.0)
    reading = tap.reading(found, None)
    assert reading is not None
    assert (reading.cached, reading.prompt) == (1536, 1559)
