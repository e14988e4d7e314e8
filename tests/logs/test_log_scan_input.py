"""``scan_file`` on hostile input: bad bytes, runaway lines, unterminated last lines, tiny chunks."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from log_samples import ERA_B_JSON, ERA_D_TEXT, LMSTUDIO_0_4, Sample

from kvswitch.core.errors import FileAccessError
from kvswitch.logs import fastscan
from kvswitch.logs.scan import fast_path_applies, open_log, scan_file
from kvswitch.logs.text import MAX_LINE_BYTES

JUNK = b"\x00\x00binary\xff\xfe\xc3 junk\x00\n" + b"y" * (10 * 1024 * 1024) + b"\n" + b"\xe2\x82 cut\n"


@pytest.mark.parametrize("sample", [ERA_D_TEXT, ERA_B_JSON, LMSTUDIO_0_4], ids=lambda s: s.name)
def test_junk_and_runaway_lines_do_not_change_the_events(sample: Sample, tmp_path: Path) -> None:
    clean = tmp_path / "clean.log"
    clean.write_text(sample.text, encoding="utf-8")
    dirty = tmp_path / "dirty.log"
    dirty.write_bytes(JUNK + sample.text.encode() + JUNK)
    expected = [(e.new_tokens, e.cached_tokens) for e in scan_file(clean, sample.kind)]
    found = list(scan_file(dirty, sample.kind))
    assert [(e.new_tokens, e.cached_tokens) for e in found] == expected
    shift = JUNK.count(b"\n")
    assert [e.last_line for e in found] == [e.last_line + shift for e in scan_file(clean, sample.kind)]


def test_unterminated_last_line_still_counts(tmp_path: Path) -> None:
    path = tmp_path / "cut.log"
    path.write_bytes(ERA_D_TEXT.text.rstrip("\n").encode())
    events = list(scan_file(path))
    assert [(e.new_tokens, e.cached_tokens) for e in events] == ERA_D_TEXT.expected
    assert events[-1].last_line == ERA_D_TEXT.text.count("\n")


def test_chunk_boundaries_never_split_a_fact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "many.log"
    path.write_text(ERA_D_TEXT.text * 40, encoding="utf-8")
    whole = [e.to_json() for e in scan_file(path)]
    monkeypatch.setattr(fastscan, "CHUNK_BYTES", 97)  # every line crosses a boundary somewhere
    assert [e.to_json() for e in scan_file(path)] == whole
    assert len(whole) == 80


def test_runaway_line_is_cut_while_reading(tmp_path: Path) -> None:
    from kvswitch.logs.scan import iter_lines

    path = tmp_path / "long.log"
    path.write_bytes(b"a\n" + b"z" * (3 * MAX_LINE_BYTES + 5) + b"\nb\nc")
    with path.open("rb") as handle:
        lines = list(iter_lines(handle, chunk_bytes=1000))
    assert [len(line) for line in lines] == [1, MAX_LINE_BYTES, 1, 1]


def test_unreadable_paths_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(FileAccessError, match="No such file"):
        scan_file(tmp_path / "missing.log")
    with pytest.raises(FileAccessError, match="directory"):
        scan_file(tmp_path)


def test_scanning_never_modifies_the_file(tmp_path: Path) -> None:
    path = tmp_path / "server.log"
    path.write_text(ERA_D_TEXT.text)
    path.chmod(0o444)
    before = (path.read_bytes(), path.stat().st_mtime_ns)
    assert len(list(scan_file(path))) == 2
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before


def _scan_seconds(path: Path) -> float:
    start = time.perf_counter()
    assert list(scan_file(path)) == []
    return time.perf_counter() - start


@pytest.mark.parametrize("blank", [b"\n", b" \n", b"\r\n", b"\t \n"], ids=repr)
def test_blank_lines_scan_in_linear_time(blank: bytes, tmp_path: Path) -> None:
    """Blank lines once made the format sniffing quadratic (1 MB of newlines took minutes): 4x the
    lines must cost about 4x the time (16x if quadratic), and 1 MB stays far below a second's work."""
    small, big = tmp_path / "small.log", tmp_path / "big.log"
    small.write_bytes(blank * ((1 << 20) // len(blank)))
    big.write_bytes(blank * ((4 << 20) // len(blank)))
    small_s = min(_scan_seconds(small) for _ in range(3))
    big_s = min(_scan_seconds(big) for _ in range(3))
    assert small_s < 5
    assert big_s < 8 * small_s + 0.2, (small_s, big_s)


def test_log_jsonl_takes_the_fast_path_unless_a_message_spans_lines(tmp_path: Path) -> None:
    real = Path(__file__).resolve().parents[1] / "fixtures" / "llama.cpp-b11434" / "formats" / "log_jsonl.log"
    with open_log(real) as handle:
        assert fast_path_applies(handle, None)
    spanning = tmp_path / "spanning.log"
    spanning.write_bytes(real.read_bytes() + b'{"type":"log","time":1,"level":"info","msg":"slot print_timing'
                         b': id  0 | task 9 |\\n prompt eval time = 1.00 ms / 5 tokens\\n"}\n')
    with open_log(spanning) as handle:
        assert not fast_path_applies(handle, None)


_HUGE = "9" * 5000  # beyond Python's int-conversion limit (4,300 digits)
_HUGE_NUMBER_LINES = [
    f"slot launch_slot_: id  {_HUGE} | task 1 | processing task",
    f"slot launch_slot_: id  0 | task -{_HUGE} | processing task",
    f"slot get_availabl: id  0 | task -1 | selected slot by LCP similarity, sim_best = {_HUGE}",
    f"slot update_slots: id  0 | task 1 | new prompt, n_ctx_slot = 4096, n_keep = 0, task.n_tokens = {_HUGE}",
    f"slot update_slots: id  0 | task 1 | n_tokens = {_HUGE}, memory_seq_rm [{_HUGE}, end)",
    f"slot print_timing: id  0 | task 1 | prompt eval time = {_HUGE}.5 ms / {_HUGE} tokens",
    f"slot print_timing: id  0 | task 1 | eval time = 1.0 ms / {_HUGE} tokens",
    f"slot      release: id  0 | task 1 | stop processing: n_tokens = {_HUGE}, truncated = {_HUGE}",
    f"slot 0 : in cache: {_HUGE} tokens | to process: 3 tokens",
    f"srv  log: common_prefix = {_HUGE}, new_tokens = {_HUGE}",
    '{"type":"log","msg":"slot update_slots: id  0 | task 1 | n_tokens = ' + _HUGE
    + ', memory_seq_rm [0, end)"}',
    f'time=2026-01-01T00:00:00Z level=DEBUG msg="loading cache slot" id={_HUGE} cache={_HUGE} prompt=1 used=1'
    " remaining=1",
    f"Prefill batch, #new-seq: 1, #new-token: {_HUGE}, #cached-token: {_HUGE}",
]


@pytest.mark.parametrize("native", ["1", "0"], ids=["native", "python"])
def test_numbers_too_long_for_int_are_no_facts_through_the_cli(native: str, tmp_path: Path) -> None:
    """A 5,000-digit "number" once ended ``log scan`` in an internal error (exit 70): every grammar bounds
    its numbers (``parsers.base.bounded``), so such a line is just not a fact and the real requests
    around it still count."""
    import json  # noqa: PLC0415
    import os  # noqa: PLC0415
    import subprocess  # noqa: PLC0415
    import sys  # noqa: PLC0415

    real = Path(__file__).resolve().parents[1] / "fixtures" / "llama.cpp-b11434"
    real = real / "llama_server_np1_default.log"
    clean = tmp_path / "clean.log"
    clean.write_bytes(real.read_bytes())
    hostile = tmp_path / "hostile.log"
    hostile.write_text("\n".join([*_HUGE_NUMBER_LINES, real.read_text(encoding="utf-8")]), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "app"),
           "KVSWITCH_NATIVE_SCAN": native}

    def scan(path: Path) -> list[dict[str, object]]:
        result = subprocess.run([sys.executable, "-m", "kvswitch", "log", "scan", str(path), "--jsonl"],
                                capture_output=True, text=True, env=env, timeout=60, check=False)
        assert result.returncode == 0, result.stderr
        assert "Traceback" not in result.stderr
        assert "internal error" not in result.stderr
        return [json.loads(line) for line in result.stdout.splitlines()]

    clean_rows, hostile_rows = scan(clean), scan(hostile)
    assert clean_rows[-1]["summary"]["requests"] == 13  # type: ignore[index]
    assert hostile_rows[-1]["summary"] == clean_rows[-1]["summary"]


_JSONL = Path(__file__).resolve().parents[1] / "fixtures" / "llama.cpp-b11434" / "llama_server_cc_jsonl.log"
_FIT = (b'{"type":"fit_memory_breakdown","data":{"unit":"MiB","rows":[{"kind":"host","name":"Host",'
        b'"self":41}]}}\n')


def write_jsonl_ending_in_fit_record(path: Path, size: int, complete: bool = True) -> None:
    """Claude Code traffic from a real ``--log-jsonl`` log, repeated to about ``size`` bytes, ending with a
    ``fit_memory_breakdown`` record (every server start writes one) and padded so that the scanner's last
    256 KiB sample starts at a ``{`` inside such a record: the shape that once took the slow path.
    ``complete=False`` cuts the last line (which did not)."""
    from kvswitch.logs import scan  # noqa: PLC0415

    src = _JSONL.read_bytes()
    body = src * max(size // len(src), 2)
    sample = scan._SAMPLE_BYTES  # noqa: SLF001 - the window whose alignment matters
    inner = body.find(b'{"kind"', len(body) - sample + 2048)
    pad = inner + sample - len(body) - len(_FIT)  # bytes of harmless log lines before the final record
    head, tail = b'{"type":"log","time":1,"level":"info","msg":"srv  operator(): ', b'\\n"}\n'
    lines = []
    while pad > 0:
        take = min(pad, 1024) if pad - min(pad, 1024) == 0 or pad - 1024 >= 200 else pad - 200
        lines.append(head + b"." * (take - len(head) - len(tail)) + tail)
        pad -= take
    data = body + b"".join(lines) + _FIT
    assert len(data) - sample == inner  # the last sample starts at '{"kind"'
    path.write_bytes(data if complete else data[:-20])


def _events_seconds(path: Path) -> float:
    start = time.perf_counter()
    assert list(scan_file(path))
    return time.perf_counter() - start


def test_log_jsonl_ending_in_a_complete_fit_record_scans_in_linear_time(tmp_path: Path) -> None:
    """A 200 MB ``--log-jsonl`` log took 60-70 s with its last line a complete ``fit_memory_breakdown``
    record and 0.5 s with it cut: a sample that began inside a line sent the file to the general path.
    Complete and cut now cost the same, and 4x the input about 4x the time (ratios, no timed bound)."""
    small, big, cut = tmp_path / "small.log", tmp_path / "big.log", tmp_path / "cut.log"
    write_jsonl_ending_in_fit_record(small, 2 << 20)
    write_jsonl_ending_in_fit_record(big, 8 << 20)
    write_jsonl_ending_in_fit_record(cut, 8 << 20, complete=False)
    for path in (small, big):
        with open_log(path) as handle:
            assert fast_path_applies(handle, None)
    small_s = min(_events_seconds(small) for _ in range(3))
    big_s = min(_events_seconds(big) for _ in range(3))
    cut_s = min(_events_seconds(cut) for _ in range(3))
    assert big_s < 3 * cut_s + 0.2, (big_s, cut_s)
    assert big_s < 8 * small_s + 0.2, (small_s, big_s)
