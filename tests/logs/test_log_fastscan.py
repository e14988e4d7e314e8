"""The fast scan's shortcuts give exactly the events of the line-by-line path and of the live path:
whole-request blocks and the JSON lines of ``log scan --jsonl`` written in bulk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from log_generator import generated_log
from log_samples import ALL_SAMPLES
from test_log_accuracy import FIXTURE_LOGS, analyze_lines

from kvswitch.cli import main
from kvswitch.logs import fastscan
from kvswitch.logs.fastscan import Record, row_event, scan_records
from kvswitch.logs.jsonl import Totals, format_records
from kvswitch.logs.jsonscan import jsonl_file
from kvswitch.logs.model import CacheEvent
from kvswitch.logs.scan import scan_batches, scan_file
from kvswitch.logs.tracker import RequestTracker

GENERATED = {
    "one_slot": lambda: generated_log(seed=1, requests=300),
    "one_slot_2024_order": lambda: generated_log(seed=2, requests=300, old_style=True),
    "four_slots_interleaved": lambda: generated_log(seed=3, requests=300, slots=4),
    "two_slots_interleaved": lambda: generated_log(seed=4, requests=300, slots=2),
}
REAL_LOGS = [log for log in FIXTURE_LOGS if "llama.cpp" in log.parent.name]


def _records(path: Path, blocks: bool) -> list[Record]:
    with path.open("rb") as handle:
        return [r for batch in scan_records(handle, RequestTracker(), blocks=blocks) for r in batch]


def _events(records: list[Record]) -> list[CacheEvent]:
    return [r if isinstance(r, CacheEvent) else row_event("llama.cpp", r) for r in records]


def _texts() -> list[tuple[str, str]]:
    texts = [(name, make()) for name, make in GENERATED.items()]
    texts += [(log.stem, log.read_text(encoding="utf-8", errors="replace")) for log in REAL_LOGS]
    return texts


@pytest.mark.parametrize(("name", "text", "native"), [
    pytest.param(name, text, native, id=f"{name}-{'native' if native else 'regex'}")
    for name, text in _texts() for native in (True, False)
])
def test_blocks_give_the_events_of_the_line_path(name: str, text: str, native: bool, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    if not native:
        monkeypatch.setattr(fastscan, "native_scan", None)
    path = tmp_path / f"{name}.log"
    path.write_text(text, encoding="utf-8")
    with_blocks = _records(path, blocks=True)
    line_by_line = _events(_records(path, blocks=False))
    assert [e.to_json() for e in _events(with_blocks)] == [e.to_json() for e in line_by_line]
    # the native walk reads interleaved slots too; the regex path only requests one after another
    if native or "interleaved" not in name:
        assert any(isinstance(r, tuple) for r in with_blocks), "no request was read as a block"


@pytest.mark.parametrize("name", list(GENERATED))
def test_generated_logs_agree_with_the_live_path(name: str, tmp_path: Path) -> None:
    text = GENERATED[name]()
    path = tmp_path / "server.log"
    path.write_text(text, encoding="utf-8")
    live = analyze_lines(text.splitlines())
    assert len(live) == 300
    assert [e.to_json() for e in scan_file(path)] == [e.to_json() for e in live]


def test_blocks_survive_tiny_chunks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "server.log"
    path.write_text(generated_log(seed=5, requests=120, slots=2), encoding="utf-8")
    whole = [e.to_json() for e in scan_file(path)]
    for size in (61, 997, 4099):
        monkeypatch.setattr(fastscan, "CHUNK_BYTES", size)
        assert [e.to_json() for e in scan_file(path)] == whole


def test_a_block_is_not_taken_when_its_slot_is_busy(tmp_path: Path) -> None:
    """A selection on a slot whose request never released first finishes that request."""
    text = generated_log(seed=6, requests=3)
    lines = text.splitlines()
    release = next(i for i, line in enumerate(lines) if "stop processing" in line)
    cut = "\n".join(lines[:release] + lines[release + 1:]) + "\n"
    path = tmp_path / "server.log"
    path.write_text(cut, encoding="utf-8")
    assert [e.to_json() for e in scan_file(path)] == [e.to_json() for e in analyze_lines(cut.splitlines())]


@pytest.mark.parametrize(("name", "text"), _texts()[:3] + [(s.name, s.text) for s in ALL_SAMPLES],
                         ids=[n for n, _ in _texts()[:3]] + [s.name for s in ALL_SAMPLES])
def test_json_lines_are_json_dumps_of_the_events(name: str, text: str, tmp_path: Path) -> None:
    path = tmp_path / "server.log"
    path.write_text(text, encoding="utf-8")
    events = list(scan_file(path))
    totals = Totals()
    lines = "".join(format_records(batch, "llama.cpp", totals) for batch in scan_batches(path))
    assert lines.splitlines() == [json.dumps(e.to_json()) for e in events]
    assert totals.requests == len(events)
    assert (totals.prompt, totals.cached, totals.new) == (
        sum(e.prompt_tokens for e in events), sum(e.cached_tokens for e in events),
        sum(e.new_tokens for e in events))
    assert [totals.hits, totals.partial, totals.misses] == [
        sum(e.verdict == v for e in events) for v in ("hit", "partial", "miss")]
    assert totals.latest() == events[-64:]


def _sequential_jsonl(path: Path) -> tuple[bytes, Totals]:
    totals = Totals()
    text = "".join(format_records(batch, "llama.cpp", totals) for batch in scan_batches(path))
    return text.encode(), totals


def _big_text(seed: int) -> str:
    if seed % 2 and REAL_LOGS:
        return "".join(log.read_text(encoding="utf-8", errors="replace") for log in REAL_LOGS) * 3
    return generated_log(seed=seed, requests=400, slots=1 + seed % 4)


@pytest.mark.parametrize("seed", range(6))
def test_bulk_json_lines_are_those_of_the_records(seed: int, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The native scanner's JSON text, between the line path's, in small and big chunks."""
    path = tmp_path / "server.log"
    path.write_text(_big_text(seed), encoding="utf-8")
    expected, expected_totals = _sequential_jsonl(path)
    for chunk in (fastscan.CHUNK_BYTES, 5000, 777):
        monkeypatch.setattr(fastscan, "CHUNK_BYTES", chunk)
        totals = Totals()
        assert b"".join(jsonl_file(path, None, totals)) == expected
        assert totals.to_json(None) == expected_totals.to_json(None)
        assert totals.latest() == expected_totals.latest()


def test_cli_jsonl_is_the_same_without_the_native_scanner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    path = tmp_path / "server.log"
    path.write_text(generated_log(seed=11, requests=200, slots=2), encoding="utf-8")
    assert main(["log", "scan", str(path), "--jsonl"]) == 0
    native = capsysbinary.readouterr().out
    monkeypatch.setattr(fastscan, "native_scan", None)
    assert main(["log", "scan", str(path), "--jsonl"]) == 0
    assert capsysbinary.readouterr().out == native
    rows = [json.loads(line) for line in native.splitlines()]
    assert rows[-1]["summary"]["requests"] == len(rows) - 1 == 200


@pytest.mark.parametrize("selection", [
    "slot get_availabl: id  0 | task -1 |  selected slot by LRU, t_last = -1",  # two spaces
    "slot get_availabl: id  0 | task 7 | selected slot by LRU, t_last = -1",  # a task named
    "slot get_availabl: id  1 | task -1 | selected slot by LRU, t_last = -1",  # another slot
    "srv | x | slot get_availabl: id  0 | task -1 | selected slot by LRU, t_last = -1",  # more pipes
    "prompt eval time id  0 | task -1 | selected slot by LRU, t_last = -1",  # reads like a timing line
])
def test_unusual_selection_lines_agree_with_the_line_path(selection: str, tmp_path: Path) -> None:
    request = (
        "slot launch_slot_: id  0 | task 9 | processing task\n"
        "slot print_timing: id  0 | task 9 | prompt eval time =      17.50 ms /    23 tokens (x)\n"
        "slot print_timing: id  0 | task 9 |        eval time =       0.00 ms /     1 tokens (x)\n"
        "slot      release: id  0 | task 9 | stop processing: n_tokens = 1559, truncated = 0\n"
    )
    text = "slot print_timing: id  0 | task 3 | \n" + (selection + "\n" + request) * 3
    path = tmp_path / "server.log"
    path.write_text(text, encoding="utf-8")
    expected = [e.to_json() for e in _events(_records(path, blocks=False))]
    assert [e.to_json() for e in scan_file(path)] == expected
    assert expected


FORMAT_LOGS = sorted((Path(__file__).resolve().parents[1] / "fixtures" / "llama.cpp-b11434").rglob("*.log"))


@pytest.mark.parametrize("log", FORMAT_LOGS, ids=lambda log: log.stem)
def test_every_real_format_scans_to_the_events_of_the_live_path(log: Path, tmp_path: Path) -> None:
    """Every real capture (each log format llama-server b11434 writes, see formats/README.md): the
    whole-file scan, with and without the native scanner, and its JSON lines agree with ``LogAnalyzer``."""
    lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    live = [e.to_json() for e in analyze_lines(lines)]
    assert live, "no request found"
    assert [e.to_json() for e in scan_file(log)] == live
    totals = Totals()
    text = b"".join(jsonl_file(log, None, totals)).decode()
    assert [json.loads(line) for line in text.splitlines()] == live


@pytest.mark.parametrize("reason_line", [
    "slot update_slots: id  0 | task 9 | KV cache reuse failed. Forcing full prompt re-processing",
    "slot update_slots: id  0 | task 9 | Forcing full prompt re-processing due to lack of cache data",
    "slot update_slots: id  0 | task 9 | FORCING FULL PROMPT RE-PROCESSING",
    "slot update_slots: id  0 | task 9 | Common part does not match fully",
    "srv  load: KV Cache Reuse Failed - forcing full prompt re-processing",  # bare: the last slot's
    "slot update_slots: id  0 | task 9 | Clearing slot with 5 tokens",  # case-sensitive: no reason
    "slot update_slots: id  0 | task 9 | failed to truncate tokens",  # a start without the rest: no fact
])
@pytest.mark.parametrize("native", [True, False], ids=["native", "python"])
def test_reason_spellings_are_those_of_the_grammar(reason_line: str, native: bool, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Pasted and older spellings of a reason (capitalised, upper case) get the reason on every path:
    the fast scanner's reason starts and case rules are derived from the parser's patterns."""
    if not native:
        monkeypatch.setattr(fastscan, "native_scan", None)
    request = (
        "slot get_availabl: id  0 | task -1 | selected slot by LRU, t_last = -1\n"
        "slot launch_slot_: id  0 | task 9 | processing task\n"
        f"{reason_line}\n"
        "slot print_timing: id  0 | task 9 | prompt eval time =      17.50 ms /    23 tokens (x)\n"
        "slot print_timing: id  0 | task 9 |        eval time =       0.00 ms /     1 tokens (x)\n"
        "slot      release: id  0 | task 9 | stop processing: n_tokens = 1559, truncated = 0\n"
    )
    text = request * 3
    path = tmp_path / "server.log"
    path.write_text(text, encoding="utf-8")
    live = [e.to_json() for e in analyze_lines(text.splitlines())]
    assert len(live) == 3
    assert [e.to_json() for e in scan_file(path)] == live
    assert [e.to_json() for e in _events(_records(path, blocks=False))] == live
    assert b"".join(jsonl_file(path, None, Totals())).decode().splitlines() == [json.dumps(e) for e in live]


def _restating_request(task: int, statements: list[int], new: int) -> str:
    """One ``-lv 4`` request (b11434's lines) that states its cached tokens once per batch."""
    head = f"id  0 | task {task} |"
    lines = ["slot get_availabl: id  0 | task -1 | selected slot by LRU, t_last = -1",
             f"slot launch_slot_: {head} processing task",
             f"slot update_slots: {head} new prompt, n_ctx_slot = 16384, n_keep = 0, task.n_tokens = 9000"]
    for done in statements:
        lines += [f"slot   operator(): {head} cached n_tokens = {done}, memory_seq_rm [{done}, end)",
                  f"slot print_timing: {head} prompt processing, n_tokens = {done + 2048}, progress = 0.5"]
    lines += [f"slot print_timing: {head} prompt eval time =     900.00 ms / {new:5d} tokens (x)",
              f"slot print_timing: {head}        eval time =      40.00 ms /     4 tokens (x)",
              f"slot      release: {head} stop processing: n_tokens = 9003, truncated = 0"]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("statements", [
    [0, 2048, 4096, 6144],  # a long prompt's batches: the first (smallest) counts
    [4096, 6144, 1024, 3072],  # cut back mid-request: restated lower
    [5000, 5000],
    [8191, 0, 99999999999999999999],  # a number too long for the native path
])
def test_restated_cached_tokens_stay_one_block_with_the_smallest(statements: list[int],
                                                                 tmp_path: Path) -> None:
    path = tmp_path / "server.log"
    path.write_text(_restating_request(7, statements, 6000) + _restating_request(8, statements[::-1], 500),
                    encoding="utf-8")
    with_blocks = _records(path, blocks=True)
    line_by_line = _events(_records(path, blocks=False))
    assert [e.to_json() for e in _events(with_blocks)] == [e.to_json() for e in line_by_line]
    assert [e.cached_tokens for e in line_by_line] == [min(statements)] * 2
    if max(statements) < 10**15:
        assert all(isinstance(r, tuple) for r in with_blocks), "a restating request should be one block"
