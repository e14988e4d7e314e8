"""The native walk (``_blockscan.scan``) ends every chunk in exactly the state of the line path, so the
events of a scan never depend on whether the extension is built.

The walk, the ``BLOCK`` regex path and the line path run on the same bytes with fresh trackers: their
events, the line count and the requests left open (field by field) must be identical, and the walk must
leave the tracker's last slot where the line path does. This holds on the real captures, on generated
logs of every request shape (interleaved slots too), and on those logs damaged at random (hypothesis)
where the paths are most likely to part ways: pipes, digits, spaces, newlines, fact words, other slots'
lines and idle slots' reasons inserted, deleted or replaced.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from log_generator import generated_log
from log_samples import ALL_SAMPLES
from test_log_accuracy import FIXTURE_LOGS, FIXTURES

from kvswitch.logs import blocks, fastscan
from kvswitch.logs.fastscan import Record
from kvswitch.logs.model import CacheEvent
from kvswitch.logs.parsers.base import What
from kvswitch.logs.tracker import MAX_PENDING, PendingRequest, RequestTracker

native = blocks.native_scan
REAL_LOGS = [log for log in FIXTURE_LOGS if "llama.cpp" in log.parent.name]


Outcome = tuple[list[dict[str, object]], int, dict[int | None, PendingRequest], int | None]


def _run(data: bytes, how: str, busy: tuple[int, ...] = ()) -> tuple[Outcome, list[Record]]:
    """The events, the next line number, the requests left open and the tracker's last slot after one
    chunk read ``how``: ``native`` (the walk), ``regex`` (``BLOCK``) or ``lines`` (the line path)."""
    tracker = RequestTracker()
    for slot in busy:  # a selection whose request has not finished yet
        tracker.slot_fact(What.SELECT, slot, -1, None, None, None, "lru", 0)
    out: list[Record] = []
    walk = native if how == "native" else None
    line_no = fastscan._chunk(data, len(data), 1, tracker, out, how != "lines", walk)
    events = [(r if isinstance(r, CacheEvent) else fastscan.row_event("llama.cpp", r)).to_json() for r in out]
    return (events, line_no, dict(tracker.pending), tracker._last_slot), out


def _assert_same(data: bytes, busy: tuple[int, ...] = ()) -> list[Record]:
    """The walk ends in exactly the state of the line path (events, line number, open requests field by
    field, last slot), and gives the events of the ``BLOCK`` path too."""
    if not data.endswith(b"\n"):
        data += b"\n"
    with_native, records = _run(data, "native", busy)
    line_by_line, _records = _run(data, "lines", busy)
    assert with_native == line_by_line
    assert with_native[:3] == _run(data, "regex", busy)[0][:3]
    return records


def test_the_native_scanner_is_built() -> None:
    """``pip install -e .`` compiles it (setup.py); a missing compiler would silently cost the speed."""
    assert native is not None, "kvswitch.logs._blockscan is not built: install a C compiler and python3-dev"


_TEXTS = {
    **{log.stem: lambda log=log: log.read_bytes() for log in REAL_LOGS},
    "one_slot": lambda: generated_log(seed=11, requests=400).encode(),
    "old_order": lambda: generated_log(seed=12, requests=300, old_style=True).encode(),
    "two_slots": lambda: generated_log(seed=13, requests=300, slots=2).encode(),
    "four_slots": lambda: generated_log(seed=14, requests=300, slots=4).encode(),
    "samples": lambda: "\n".join(s.text for s in ALL_SAMPLES).encode(),
    "restated_cached_tokens": lambda: _restating_log(),
}


@pytest.mark.parametrize("name", list(_TEXTS))
def test_same_records_as_the_regex_path(name: str) -> None:
    records = _assert_same(_TEXTS[name]())
    if name == "one_slot" or name.startswith("llama_server_np1"):
        assert sum(type(r) is tuple for r in records) > len(records) // 2, "blocks should be the common case"


def test_busy_slots_and_a_full_tracker_go_to_the_line_path() -> None:
    data = generated_log(seed=15, requests=60).encode()
    assert _assert_same(data, busy=(0,))
    assert _assert_same(data, busy=tuple(range(1, MAX_PENDING + 1)))


def test_numbers_too_long_for_the_native_path_are_read_by_the_line_path() -> None:
    text = generated_log(seed=16, requests=40)
    huge = "1" + "0" * 25
    for number_after in (r"ms / +", r"stop processing: n_tokens = ", r"\| task ", r"ms / +\d+ tokens"):
        found = re.compile(number_after).search(text, len(text) // 3)
        assert found, number_after
        text = text[:found.end()] + huge + text[found.end():]
    records = _assert_same(text.encode())
    assert any(str(huge) in str(r) for r in records)


def test_out_of_range_positions_are_refused() -> None:
    assert native is not None
    with pytest.raises(ValueError, match="pos and end"):
        native(b"abc\n", 0, 9, 1, {}, MAX_PENDING)
    with pytest.raises(ValueError, match="pos and end"):
        native(b"abc\n", 3, 2, 1, {}, MAX_PENDING)
    assert native(b"abc\n", 0, 4, 1, {}, MAX_PENDING) == ([], 4, 2, 4, [], None)


_PIECES = [b"|", b" | ", b"\n", b" ", b"  ", b"0", b"7", b"-1", b".", b"1.5", b"id ", b"id  0 |", b" task ",
           b"task 3 |", b"selected slot by LRU", b"selected slot by LCP similarity, sim_best = 0.9",
           b"processing task", b"prompt eval time =", b"eval time =", b" ms /", b" tokens", b" runs",
           b"stop processing: n_past = ", b", truncated = 1", b"cached ", b"n_tokens = ",
           b", memory_seq_rm [", b"need to evaluate at least 1 token", b"total time", b"- skipping",
           b"new prompt, n_ctx_slot = 9, n_keep = 0, n_prompt_tokens = 12", b"\t", b"\xff",
           # an idle slot's reason, a reason of a slot at work, another slot's line (the walk's cases)
           b"id  2 | task -1 | clearing prompt with 0 tokens", b"Forcing full prompt re-processing",
           b"id  1 | task -1 | ", b"id  3 | task 9 | ", b"selected slot by LRU, t_last = -1\n"]
def _restating_log() -> bytes:
    """``-lv 4`` requests stating their cached tokens after every batch, growing or cut back lower."""
    text = ""
    for task, statements in enumerate(([0, 2048, 4096], [4096, 1024, 3072], [12, 12], [7, 5])):
        head = f"id  {task % 2} | task {task} |"
        text += f"slot get_availabl: id  {task % 2} | task -1 | selected slot by LRU, t_last = -1\n"
        text += f"slot launch_slot_: {head} processing task\n"
        for done in statements:
            text += f"slot   operator(): {head} cached n_tokens = {done:03d}, memory_seq_rm [{done}, end)\n"
            text += f"slot print_timing: {head} prompt processing, n_tokens = {done + 9}, progress = 0.5\n"
        text += (f"slot print_timing: {head} prompt eval time =      90.00 ms /   300 tokens (x)\n"
                 f"slot print_timing: {head}        eval time =      40.00 ms /     4 tokens (x)\n"
                 f"slot      release: {head} stop processing: n_tokens = 5003, truncated = 0\n")
    return text.encode()


_BASE = [generated_log(seed=seed, requests=12, slots=1 + seed % 3, old_style=seed == 3).encode()
         for seed in range(4)] + [_restating_log()]
#: real interleaving: four slots at once, and idle slots' reasons inside a request (first 40 lines)
_BASE += [b"".join((FIXTURES / "llama.cpp-b11434" / name).read_bytes().splitlines(True)[start:start + 40])
          for name, start in (("formats/np4_unified.log", 60), ("llama_server_cc_lv4.log", 170))]


@st.composite
def damaged_logs(draw: st.DrawFn) -> bytes:
    data = bytearray(_BASE[draw(st.integers(0, len(_BASE) - 1))])
    for _ in range(draw(st.integers(1, 12))):
        at = draw(st.integers(0, len(data)))
        cut = draw(st.integers(0, 12))
        data[at:at + cut] = draw(st.sampled_from(_PIECES)) if draw(st.booleans()) else b""
    return bytes(data)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(damaged_logs())
def test_damaged_logs_give_the_same_records(data: bytes) -> None:
    _assert_same(data)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(damaged_logs(), st.data())
def test_nothing_past_end_is_read(data: bytes, draw: st.DataObject) -> None:
    """The scanner is handed a chunk's text with more bytes after ``end``; they must not matter."""
    assert native is not None
    end = draw.draw(st.integers(0, len(data)))
    pos = data.rfind(b"\n", 0, draw.draw(st.integers(0, end))) + 1
    for server in ((), (b'"llama.cpp"',)):
        assert native(data, pos, end, 1, {}, MAX_PENDING, *server) == native(data[:end], pos, end, 1, {},
                                                                            MAX_PENDING, *server)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=60))
def test_logs_made_of_fragments_give_the_same_records(pieces: list[bytes]) -> None:
    _assert_same(b"".join(pieces))


def test_chunks_of_any_size_give_the_same_events(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "server.log"
    path.write_bytes(generated_log(seed=17, requests=150, slots=2).encode())
    from kvswitch.logs.scan import scan_file

    whole = [e.to_json() for e in scan_file(path)]
    monkeypatch.setattr(fastscan, "native_scan", None)
    for size in (53, 1000, 8191):
        monkeypatch.setattr(fastscan, "CHUNK_BYTES", size)
        assert [e.to_json() for e in scan_file(path)] == whole


_CRAFTED = {
    "selections without pipes": b"selected slot by LRU " * 250_000 + b"\n",
    "a long chain of harmless lines": b"selected slot by LRU id  0 | task 1 | total time " * 100_000 + b"\n",
    "one pipe after a long run": b"selected slot by LRU " * 200_000 + b"id  0 | task 1 | processing task\n",
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", list(_CRAFTED))
def test_crafted_text_cannot_make_the_scan_quadratic(name: str) -> None:
    """Text made so that a scanner trying a match at every selection would walk the same megabytes again:
    the walk reads each pipe once and hands what it cannot read to the line path, which is linear."""
    data = _CRAFTED[name]
    tracker = RequestTracker()
    out: list[Record] = []
    assert fastscan._chunk(data, len(data), 1, tracker, out, True, native) == data.count(b"\n") + 1
    line_path: list[Record] = []
    fastscan._chunk(data, len(data), 1, RequestTracker(), line_path, False, None)
    assert out == line_path


def test_every_fact_of_the_line_regex_starts_with_a_fact_start() -> None:
    """``blocks.FACT_STARTS`` (what makes a slot line not harmless, in both scanners) covers every fact
    ``fastscan._LINE`` reads, in every real capture, sample and generated log, and in the reason spellings
    of the grammar in any case."""
    texts = [log.read_bytes() for log in REAL_LOGS] + [t() for t in _TEXTS.values()]
    upper = [b"id  0 | task 1 | %s x\n" % prefix.upper() for prefix in blocks.FACT_STARTS_ANY_CASE]
    texts.append(b"".join(upper))
    exact, folded = blocks.FACT_STARTS, blocks.FACT_STARTS_ANY_CASE
    seen = 0
    for data in texts:
        for m in fastscan._LINE.finditer(data):
            if m.lastindex == 24:  # an empty message: never harmless either
                continue
            start = data.find(b"|", data.find(b"| task ", m.start()) + 1) + 1
            while data[start:start + 1] == b" ":
                start += 1
            text = data[start:m.end()]
            assert text.startswith(exact) or text.lower().startswith(folded), text
            seen += 1
    assert seen > 1000


@given(st.lists(st.sampled_from([
    b"srv  load: - found better prompt with f_keep = 0.5, sim = 0.9\n", b"KV CACHE REUSE FAILED\n",
    b"slot x: id  0 | task 1 | Clearing slot with 3 tokens\n", b"| task ", b"clearing ", b"\n", b"x", b"\r",
    b"Forcing Full Prompt Re-Processing", b"reusing chunk with size 3", b"\xc3", b"|",
]), max_size=40), st.integers(0, 5), st.integers(0, 5))
@settings(max_examples=300, deadline=None)
def test_bare_reason_candidates_are_the_same_in_c(parts: list[bytes], cut_start: int, cut_end: int) -> None:
    data = b"".join(parts)
    start, end = min(cut_start, len(data)), max(min(len(data) - cut_end, len(data)), 0)
    start = min(start, end)
    assert blocks.native_bare_reason_lines is not None
    assert blocks.native_bare_reason_lines(data, start, end) == fastscan._candidate_lines(data, start, end)


def test_bare_reason_candidates_of_real_logs_are_the_same_in_c() -> None:
    assert blocks.native_bare_reason_lines is not None
    for data in [log.read_bytes() for log in REAL_LOGS] + [t() for t in _TEXTS.values()]:
        size = len(data)
        assert blocks.native_bare_reason_lines(data, 0, size) == fastscan._candidate_lines(data, 0, size)


def test_a_slot_line_inside_a_timing_block_keeps_the_line_numbers() -> None:
    """A slot fact pasted into the unprefixed lines of an empty timing header (found by the damaged-log
    test): the line path counted that block's lines twice, so every later request was a line off."""
    text = (b"slot get_availabl: id  0 | task -1 | selected slot by LRU, t_last = -1\n"
            b"slot launch_slot_: id  0 | task 7 | processing task\n"
            b"slot print_timing: id  0 | task 7 | \n"
            b"prompt eval time =     720.42 ms /  2257 tokens (x)\n"
            b"       eval time =     200.00 ms /    31 tokens"
            b"id  2 | task -1 | clearing prompt with 0 tokens\n"
            b"      total time =     280.00 ms /  2288 tokens\n"
            b"slot      release: id  0 | task 7 | stop processing: n_tokens = 2299, truncated = 0\n")
    records = _assert_same(text * 3)
    events = [fastscan.row_event("llama.cpp", r) if type(r) is tuple else r for r in records]
    assert [(e.first_line, e.last_line) for e in events] == [(1, 7), (8, 14), (15, 21)]  # type: ignore[union-attr]
