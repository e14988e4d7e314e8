"""The fast scanner's "this file needs the general path" test, composed from what each format declares.

Each module in ``kvswitch.logs.parsers`` declares ``GENERAL_ONLY`` (its text only the general path
understands); ``general_only()`` joins them. The composition must send exactly the files the single
hand-written regex of ``logs/scan.py`` used to (kept below as the reference), and must leave the
current default-format llama-server text on the fast path.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from log_samples import ALL_SAMPLES

from kvswitch.logs import parsers
from kvswitch.logs.scan import _FOREIGN

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

#: ``logs/scan.py``'s ``_FOREIGN`` before each format declared its own part
REFERENCE = re.compile(
    rb"^[ \t]*\{(?!\"type\":\"(?:log|fit_memory_breakdown)\")|^\{\"type\":\"log\"[^\n]*\\n(?!\"\})"
    rb"|slot \d+ ?: in cache|tokens in cache\)|LMCache|#cached-token|loading cache slot"
    rb"|Prompt cache restore"
    rb"|\[(?:DEBUG|INFO|WARN|WARNING|ERROR)\]|\[GIN\]|Prefix cache hit rate|level=\w+ source=",
    re.MULTILINE,
)

#: one text per marker of the reference, each of which alone sends a file to the general path
MARKERS = [
    b'{"timestamp":1717000000,"level":"INFO","function":"update_slots","line":1,"msg":"slot released"}',
    b'  {"tid":"1","timestamp":1,"level":"INFO"}',
    b'{"type":"log","time":1,"level":"info","msg":"slot print_timing: id  0 | task 9 |\\n prompt eval"}',
    b"slot 0: in cache: 12 tokens | to process: 30 tokens",
    b"slot 3 : in cache: 12 tokens | to process: 30 tokens",
    b"slot 0 released (42 tokens in cache)",
    b"[2025-04-17 18:32:17,123] LMCache INFO: Reqid: cmpl-1, Total tokens 100, LMCache hit tokens: 0",
    b"[2025-04-17 18:32:17] Prefill batch. #new-seq: 1, #new-token: 10, #cached-token: 90",
    b'time=2025-04-17T18:32:17.000Z level=DEBUG source=cache.go:104 msg="loading cache slot" id=0',
    b"time=2025-04-17T18:32:17.000Z level=INFO source=server.go:1 msg=x",
    b'[GIN] 2025/04/17 - 18:32:17 | 200 |  1.2s |  127.0.0.1 | POST     "/api/chat"',
    b"2026-06-03 11:02:46 [DEBUG] Prompt cache restore: cached_tokens=10 uncached_tokens=5",
    b"[2025-04-17 18:32:17][INFO] Running chat completion",
    b"[2024-05-17 14:45:46.998] [WARN] something",
    b"x [WARNING] y",
    b"x [ERROR] y",
    b"INFO 04-17 18:32:17 loggers.py:1] Avg prompt throughput: 1.0 tokens/s, Prefix cache hit rate: 50.0%",
]

#: current default-format llama-server text (and its ``--log-jsonl`` records), which the fast path reads
FAST_TEXT = [
    b"slot launch_slot_: id  0 | task 1 | processing task",
    b"slot update_slots: id  0 | task 1 | new prompt, n_ctx_slot = 4096, n_keep = 0, task.n_tokens = 120",
    b"slot update_slots: id  0 | task 1 | n_tokens = 48, memory_seq_rm [48, end)",
    b"slot print_timing: id  0 | task 1 | prompt eval time = 80.00 ms / 72 tokens",
    b"slot      release: id  0 | task 1 | stop processing: n_tokens = 130, truncated = 0",
    b"srv  update_slots: all slots are idle",
    b"srv  log_server_r: request: POST /v1/messages 127.0.0.1 200",
    b"0.01.234.567 I slot launch_slot_: id  0 | task 1 | processing task",
    b'{"type":"log","time":1,"level":"info","msg":"slot launch_slot_: id  0 | task 1 | processing task"}',
    b'{"type":"fit_memory_breakdown","time":1}',
]


def _fixture_logs() -> list[Path]:
    return sorted(FIXTURES.rglob("*.log"))


def test_scan_uses_the_composed_pattern() -> None:
    assert parsers.general_only() == _FOREIGN


def test_every_format_declares_its_part() -> None:
    for name in parsers.KINDS:
        module = getattr(parsers, name.replace(".", "_").replace("-", ""))
        assert module.GENERAL_ONLY, name
        assert all(isinstance(part, bytes) and part for part in module.GENERAL_ONLY), name


@pytest.mark.parametrize("text", MARKERS)
def test_each_marker_of_the_reference_still_sends_to_the_general_path(text: bytes) -> None:
    assert REFERENCE.search(text), "the sample does not show the marker it stands for"
    assert _FOREIGN.search(text)
    assert _FOREIGN.search(b"slot launch_slot_: id  0 | task 1 | processing task\n" + text + b"\nmore\n")


@pytest.mark.parametrize("text", FAST_TEXT)
def test_default_format_text_stays_on_the_fast_path(text: bytes) -> None:
    assert not _FOREIGN.search(text)
    assert not REFERENCE.search(text)


def test_same_answer_as_the_reference_on_every_sample_and_fixture_line() -> None:
    texts = [sample.text.encode() for sample in ALL_SAMPLES]
    texts += [path.read_bytes() for path in _fixture_logs()]
    assert len(texts) > len(ALL_SAMPLES)
    lines = [line for text in texts for line in text.splitlines()]
    for text in texts + lines:
        assert bool(_FOREIGN.search(text)) == bool(REFERENCE.search(text)), text[:200]
    assert any(_FOREIGN.search(text) for text in texts)
    assert not all(_FOREIGN.search(text) for text in texts)
