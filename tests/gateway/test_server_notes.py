"""The ``server`` reason: a request re-processed while the server said, in the log its profile follows,
that it forced the re-processing. The notes and the record here; the reader on a real log file in
``tests/commands/test_server_log_notes.py``; the real llama-server on a sliding-window model in
``tests/e2e/test_e2e_server_reason.py``."""

from __future__ import annotations

import json
from typing import Any

from multidict import CIMultiDict, CIMultiDictProxy
from test_cache_truth import Clock, _load

from kvswitch.gateway.truth.live_record import CacheTruth
from kvswitch.gateway.truth.server_notes import NOTE_CHARS, PER_PROFILE, ServerNotes
from kvswitch.usage.schema import UsageRow

#: the line llama-server b11434 prints at ``-lv 4`` on a sliding-window model without a usable checkpoint
FORCED = ("slot update_slots: id  0 | task 12 | forcing full prompt re-processing due to lack of cache data "
          "(likely due to SWA or hybrid/recurrent memory, see https://github.com/ggml-org/llama.cpp/pull/13194"
          "#issuecomment-2868343055)")
MEANING = "full re-processing forced: SWA or hybrid/recurrent model without a usable checkpoint"


class Ticks:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 50.0

    def __call__(self) -> float:
        return self.now


def _row(truth: CacheTruth, body: Any, profile: str = "local") -> UsageRow:
    row = UsageRow(0.0, "claude", profile, None, "tiny", None)
    truth.begin(row, CIMultiDictProxy(CIMultiDict({"x-claude-code-session-id": "s1"})), body)
    return row


def _end(truth: CacheTruth, row: UsageRow, prompt: int, cached: int) -> UsageRow:
    row.status, row.upstream = 200, "http://127.0.0.1:8080/v1"
    row.input_tokens, row.cached_tokens = prompt, cached
    truth.finish(row, local=True)
    return row


def test_a_note_goes_to_one_request_read_since_it_arrived() -> None:
    ticks = Ticks()
    notes = ServerNotes(clock=ticks)
    notes.follow({"local"})
    notes.add("local", FORCED, MEANING)
    ticks.now = 60.0
    assert notes.claim("local", since=55.0) is None  # said before this request arrived
    notes.add("local", FORCED, MEANING)
    note = notes.claim("local", since=55.0)
    assert note is not None
    assert (note.read_at, note.meaning) == (60.0, MEANING)
    assert note.text.startswith("slot update_slots: id  0 | task 12 | forcing full prompt re-processing")
    assert notes.claim("local", since=55.0) is None  # claimed once
    assert notes.claim("other", since=0.0) is None  # a profile not followed


def test_notes_are_bounded_masked_on_one_line_and_dropped_with_their_profile() -> None:
    notes = ServerNotes()
    notes.follow({"local"})
    for _ in range(PER_PROFILE * 3):
        said = "forcing full prompt re-processing\x1b[31m api_key=sk-live-123456789 \n"
        notes.add("local", said + "x" * 900)
    kept = notes._notes["local"]
    assert len(kept) == PER_PROFILE
    text = kept[0].text
    assert len(text) <= NOTE_CHARS
    assert "sk-live-123456789" not in text
    assert "\n" not in text
    assert "\x1b" not in text
    notes.add("unfollowed", FORCED)
    assert "unfollowed" not in notes._notes
    notes.follow(set())
    assert notes._notes == {}
    assert not notes.follows("local")


def test_a_reprocessed_request_names_the_servers_words_when_its_log_said_so() -> None:
    ticks = Ticks()
    asked: list[str] = []
    notes = ServerNotes(catch_up=asked.append, clock=ticks)
    notes.follow({"local"})
    truth = CacheTruth(clock=Clock(), notes=notes)
    _end(truth, _row(truth, _load("claude-code-2.1.332/sessions/continue_01.json")[1]), 13100, 0)
    row = _row(truth, _load("claude-code-2.1.332/sessions/continue_02.json")[1])
    notes.add("local", FORCED, MEANING, "Start it with --swa-full")  # read while the request ran
    _end(truth, row, 13150, 0)
    assert (row.verdict, row.reason) == ("MISS", "server")
    detail = json.loads(row.reason_detail or "{}")
    assert detail["server_said"] == FORCED
    assert detail["meaning"] == MEANING
    assert detail["advice"] == "Start it with --swa-full"
    assert detail["reusable"] == 13100  # the evidence stays beside the server's word
    assert asked == ["local"]  # the log was read up to now before the judgement


def test_without_a_note_the_same_request_stays_unknown_and_a_hit_never_asks() -> None:
    asked: list[str] = []
    notes = ServerNotes(catch_up=asked.append)
    notes.follow({"local"})
    truth = CacheTruth(clock=Clock(), notes=notes)
    _end(truth, _row(truth, _load("claude-code-2.1.332/sessions/continue_01.json")[1]), 13100, 0)
    hit = _end(truth, _row(truth, _load("claude-code-2.1.332/sessions/continue_02.json")[1]), 13150, 13090)
    assert hit.verdict == "HIT"
    assert asked == []
    row = _end(truth, _row(truth, _load("claude-code-2.1.332/sessions/continue_03.json")[1]), 13200, 0)
    assert (row.verdict, row.reason) == ("MISS", "unknown")
    assert asked == ["local"]


def test_a_changed_prefix_keeps_its_own_reason_even_when_the_server_said_it_forced() -> None:
    notes = ServerNotes()
    notes.follow({"local"})
    truth = CacheTruth(clock=Clock(), notes=notes)
    _, one = _load("claude-code-2.1.332/request_attribution_default_1.json")
    _, two = _load("claude-code-2.1.332/request_attribution_default_3.json")
    _end(truth, _row(truth, one), 13800, 0)
    row = _row(truth, two)
    notes.add("local", FORCED, MEANING)
    _end(truth, row, 13805, 4)
    assert row.reason == "prefix_changed"  # the change came first: that is what to fix
    assert notes.claim("local", since=0.0) is not None  # and the note was left for its own request


def test_a_failing_log_reader_costs_the_note_never_the_record() -> None:
    def broken(_profile: str) -> None:
        raise OSError("the log went away")

    notes = ServerNotes(catch_up=broken)
    notes.follow({"local"})
    truth = CacheTruth(clock=Clock(), notes=notes)
    _end(truth, _row(truth, _load("claude-code-2.1.332/sessions/continue_01.json")[1]), 13100, 0)
    row = _end(truth, _row(truth, _load("claude-code-2.1.332/sessions/continue_02.json")[1]), 13150, 0)
    assert row.verdict == "MISS"  # judged; the reason falls back to what the record could tell
    assert row.reason == "unknown"
