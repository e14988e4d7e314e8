"""Line kinds and highlight spans, and the prefilter contract the fast scanner depends on."""

# ruff: noqa: E501 - verbatim server output is easier to check against its source unwrapped

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from log_samples import ALL_SAMPLES

from kvswitch.logs import LineKind, LogAnalyzer, classify_line, strip_ansi
from kvswitch.logs.classify import run_parsers
from kvswitch.logs.parsers import anchors_for, parsers_for
from kvswitch.logs.parsers.base import What

_HERE = Path(__file__).resolve()
FIXTURE_LOGS = sorted((_HERE.parents[1] / "fixtures").glob("*/*.log"))
PASTED = sorted((_HERE.parents[1] / "fixtures" / "pasted-lines").glob("*.log"))


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("0.00.250.178 I slot get_availabl: id  0 | task -1 | selected slot by LRU, t_last = -1", LineKind.REQUEST),
        ("0.00.339.940 I slot print_timing: id  0 | task 0 | prompt eval time =      79.11 ms /  1536 tokens "
         "(    0.05 ms per token, 19416.98 tokens per second)", LineKind.TIMING),
        ("0.00.543.699 W slot   operator(): id  0 | task 20 | need to evaluate at least 1 token for each active "
         "slot (n_past = 1559, task.n_tokens() = 1559)", LineKind.HIT),
        ("slot update_slots: id  0 | task 30 | forcing full prompt re-processing due to lack of cache data",
         LineKind.MISS),
        ("slot update_slots: id  0 | task 30 | n_tokens = 0, memory_seq_rm [0, end)", LineKind.MISS),
        ("0.00.006.597 W srv  llama_server: security: no API key is set", LineKind.WARNING),
        # real b11434 lines for every Codex 0.169 request (llama_server_codex_responses.log): harmless notes
        ("0.29.008.042 W srv  server_chat_: unsupported Responses tool type 'namespace' skipped", LineKind.OTHER),
        ("0.29.008.113 W srv  server_chat_: unsupported Responses tool type 'web_search' skipped", LineKind.OTHER),
        ("0.00.006.597 E srv    send_error: task id = 5, error: the request exceeds the available context",
         LineKind.ERROR),
        ("srv  log_server_r: done request: POST /v1/chat/completions 172.18.0.1 200", LineKind.REQUEST),
        ("srv  log_server_r: done request: POST /v1/chat/completions 172.18.0.1 500", LineKind.ERROR),
        ("0.00.005.670 I srv          init: using 5 threads for HTTP server", LineKind.OTHER),
        ('[GIN] 2026/04/24 - 14:49:47 | 200 | 3.900438468s | 127.0.0.1 | POST "/v1/chat/completions"',
         LineKind.REQUEST),
        ("[2025-07-26 16:09:08 TP0] Prefill batch. #new-seq: 1, #new-token: 6, #cached-token: 2048, token usage: "
         "0.00, #running-req: 0, #queue-req: 0, ", LineKind.HIT),
        ("(APIServer pid=1) INFO 09-29 01:34:15 [loggers.py:310] Engine 000: Avg prompt throughput: 891.8 "
         "tokens/s, GPU KV cache usage: 0.1%, Prefix cache hit rate: 0.0%", LineKind.TIMING),
        ("(APIServer pid=1) ERROR 09-29 01:34:15 [engine.py:1] EngineCore failed", LineKind.ERROR),
    ],
)
def test_line_kinds(line: str, kind: LineKind) -> None:
    assert classify_line(line).kind is kind


def test_spans_index_the_ansi_free_text() -> None:
    raw = ("\x1b[34m0.00.339.940\x1b[0m \x1b[32mI \x1b[0mslot print_timing: id  0 | task 0 | prompt eval time "
           "=      79.11 ms /  1536 tokens (    0.05 ms per token, 19416.98 tokens per second)")
    line = classify_line(raw)
    assert line.text == strip_ansi(raw)
    assert "\x1b" not in line.text
    assert line.spans
    start, end, kind = line.spans[0]
    assert line.text[start:end].startswith("prompt eval time")
    assert kind is LineKind.TIMING


def test_vllm_rate_spans_show_how_good_the_rate_is() -> None:
    line = classify_line("INFO 09-29 01:34:25 [loggers.py:310] Engine 000: Avg prompt throughput: 1.0 tokens/s, "
                         "Prefix cache hit rate: 45.5%, External prefix cache hit rate: 92.0%")
    kinds = {line.text[s:e]: k for s, e, k in line.spans}
    assert kinds["Prefix cache hit rate: 45.5%"] is LineKind.PARTIAL
    assert kinds["External prefix cache hit rate: 92.0%"] is LineKind.HIT


def test_completing_line_takes_the_request_verdict() -> None:
    analyzer = LogAnalyzer()
    lines = ALL_SAMPLES[0].text.splitlines()
    kinds = [analyzer.feed(line, n).line.kind for n, line in enumerate(lines, 1)]
    release_kinds = [k for line, k in zip(lines, kinds, strict=True) if "stop processing" in line]
    assert release_kinds == [LineKind.HIT, LineKind.MISS]


def test_strip_ansi_and_control_characters() -> None:
    assert strip_ansi("\x1b[1;31mE \x1b[0mboom\x00\r") == "E boom"
    assert strip_ansi("\ttab stays") == "\ttab stays"
    assert strip_ansi("\x1b]0;title\x07text") == "text"


def _all_lines() -> list[str]:
    lines = [line for sample in ALL_SAMPLES for line in sample.text.splitlines()]
    for log in FIXTURE_LOGS:
        lines.extend(log.read_text(encoding="utf-8", errors="replace").splitlines())
    return lines


def test_every_fact_line_contains_an_anchor() -> None:
    """The fast scanner skips lines without an anchor: no line that yields a fact may lack one."""
    anchors = anchors_for(None)
    parsers = parsers_for(None)
    for line in _all_lines():
        text = strip_ansi(line)
        facts = [f for f in run_parsers(text, parsers).facts if f.what is not What.CLOCK]
        if facts:
            assert any(anchor in text for anchor in anchors), line


@given(st.text(max_size=300))
def test_any_text_is_classified_without_error(text: str) -> None:
    line = classify_line(text)
    assert line.kind in LineKind
    for start, end, _kind in line.spans:
        assert 0 <= start < end <= len(line.text)
    analyzer = LogAnalyzer()
    analyzer.feed(text, 1)
    analyzer.flush()


@given(st.lists(st.sampled_from(_all_lines()), max_size=60))
def test_any_mix_of_real_lines_gives_consistent_events(lines: list[str]) -> None:
    analyzer = LogAnalyzer()
    events = []
    for number, line in enumerate(lines, 1):
        events.extend(analyzer.feed(line, number).events)
    events.extend(analyzer.flush())
    for event in events:
        assert event.cached_tokens >= 0
        assert event.new_tokens >= 0
        assert event.prompt_tokens == event.cached_tokens + event.new_tokens
        assert 1 <= event.first_line <= event.last_line <= max(len(lines), 1)
        assert event.verdict in ("hit", "partial", "miss")


@pytest.mark.parametrize(
    "line",
    [
        "slot print_timing: id  0 | task 0 | prompt eval time = 1.2.3 ms /  5 tokens",
        "slot get_availabl: id  0 | task -1 | selected slot by LCP similarity, sim_best = 0..5 (> 0.100 thold)",
        "slot      release: id  0 | task 0 | stop processing: n_tokens = 99999999999999999999999, truncated = 0",
        "Engine 000: Avg prompt throughput: 1.0 tokens/s, Prefix cache hit rate: 1.2.3%",
        '{"msg": "prompt eval time", "n_prompt_tokens_processed": "many", "id_slot": [1]}',
        '{"type": "log", "msg": 5}',
        "[2025-07-26 16:09:08 TP0] Prefill batch. #new-seq: 1, #new-token: 0, #cached-token: 0, token usage: 0.00",
    ],
)
def test_malformed_numbers_never_raise(line: str, tmp_path: Path) -> None:
    from kvswitch.logs.scan import scan_file

    classify_line(line)
    analyzer = LogAnalyzer()
    analyzer.feed(line, 1)
    analyzer.flush()
    path = tmp_path / "bad.log"
    path.write_text(line + "\n")
    list(scan_file(path))


def test_endless_unfinished_slots_keep_memory_bounded() -> None:
    from kvswitch.logs.tracker import MAX_PENDING

    analyzer = LogAnalyzer()
    for slot in range(5 * MAX_PENDING):
        analyzer.feed(f"slot launch_slot_: id {slot} | task {slot} | processing task", slot + 1)
    assert len(analyzer._tracker._pending) <= MAX_PENDING


def _expected(log: Path) -> dict:
    return json.loads(log.with_suffix(".expected.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("log", PASTED, ids=[log.stem for log in PASTED])
def test_pasted_lines_have_their_kinds(log: Path) -> None:
    """Lines as users paste them (other builds' spellings, other servers): each line's kind."""
    expected = _expected(log)
    lines = log.read_text(encoding="utf-8").splitlines()
    kinds = [classify_line(line, expected["kind_hint"]).kind.value for line in lines]
    assert kinds == expected["line_kinds"]


@pytest.mark.parametrize("log", PASTED, ids=[log.stem for log in PASTED])
def test_pasted_lines_give_their_requests_on_both_paths(log: Path) -> None:
    from kvswitch.logs.scan import scan_file

    expected = _expected(log)
    hint = expected["kind_hint"]
    analyzer = LogAnalyzer(hint)
    events = []
    for number, line in enumerate(log.read_text(encoding="utf-8").splitlines(), 1):
        events.extend(analyzer.feed(line, number).events)
    events.extend(analyzer.flush())
    for found in (events, list(scan_file(log, hint))):
        got = [{"line": e.last_line, "server": e.server, "new_tokens": e.new_tokens,
                "cached_tokens": e.cached_tokens, "verdict": e.verdict} for e in found]
        assert got == expected["events"]


@pytest.mark.parametrize(
    "line",
    [
        "KV cache reuse failed. Forcing full prompt re-processing ... common_prefix 0",
        "kv cache reuse failed, forcing full prompt re-processing",
        "slot update_slots: id  0 | task 4 | Forcing full prompt re-processing due to lack of cache data",
        "slot update_slots: id  0 | task 4 | FORCING FULL PROMPT RE-PROCESSING",
    ],
)
def test_forced_re_processing_is_a_miss_in_any_spelling(line: str) -> None:
    classified = classify_line(line)
    assert classified.kind is LineKind.MISS
    facts = run_parsers(line, parsers_for("llama.cpp")).facts
    assert any(f.what is What.REASON and "process" in (f.note or "") for f in facts)


def test_pasted_cache_fields_are_coloured_by_what_they_say() -> None:
    line = classify_line("KV cache reuse failed. Forcing full prompt re-processing ... common_prefix 0")
    assert {line.text[s:e]: k for s, e, k in line.spans}["common_prefix 0"] is LineKind.MISS
    kept = classify_line("slot update_slots: id  0 | task 7 | n_past = 13800, new_tokens = 240")
    assert kept.kind is LineKind.HIT
    few = classify_line("slot update_slots: id  0 | task 7 | common_prefix: 48, new_tokens: 14072")
    assert few.kind is LineKind.MISS
    routed = classify_line("slot get_availabl: id  3 | task -1 | f_sim_best = 1.000, f_keep = 1.000")
    assert routed.kind is LineKind.REQUEST  # a similarity is routing, never a hit
    assert classify_line("slot   operator(): id  3 | task 74 | n_past was set to 14537").kind is LineKind.OTHER


def test_lmcache_skip_retrieve_counts_only_what_vllm_held() -> None:
    """``need to load: L < min_retrieve M, skip retrieve``: LMCache loads nothing, so only the engine's
    own prefix (``Inference Engine computed tokens``) was reused, not LMCache's larger hit."""
    analyzer = LogAnalyzer("vllm")
    line = ("[2026-11-02 09:16:44,510] LMCache INFO: Reqid: chatcmpl-91ce02, Total tokens 14200, Inference Engine "
            "computed tokens: 6080, LMCache hit tokens: 6144, but need to load: 64 < min_retrieve 256, skip "
            "retrieve but record for save skip (vllm_v1_adapter.py:1301:lmcache.integration.vllm.vllm_v1_adapter)")
    (event,) = analyzer.feed(line, 1).events
    assert (event.cached_tokens, event.new_tokens) == (6080, 8120)
    assert "min_retrieve" in (event.reason or "")
    loaded = line.replace(", but need to load: 64 < min_retrieve 256, skip retrieve but record for save skip",
                          ", need to load: 64")
    (event,) = LogAnalyzer("vllm").feed(loaded, 1).events
    assert event.cached_tokens == 6144


def test_codex_tool_notes_in_a_real_log_are_not_warnings() -> None:
    """The real log of a Codex session: every skipped-tool line is a plain note, the rest keep their kinds."""
    log = _HERE.parents[1] / "fixtures" / "llama.cpp-b11434" / "llama_server_codex_responses.log"
    lines = log.read_text(encoding="utf-8").splitlines()
    notes = [line for line in lines if "unsupported Responses tool type" in line]
    assert len(notes) == 16
    assert {classify_line(line, "llama.cpp").kind for line in notes} == {LineKind.OTHER}
    security = next(line for line in lines if "security: no API key" in line)
    assert classify_line(security, "llama.cpp").kind is LineKind.WARNING
