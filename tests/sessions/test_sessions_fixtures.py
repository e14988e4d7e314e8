"""The session readers on real files: Claude Code 2.1.332, Codex 0.171 and OpenCode 1.18.33 sessions
captured against the real llama-server b11434 by ``scripts/capture_sessions.py``
(``tests/fixtures/sessions-2026-12``, with the server's own ``/metrics`` deltas per run in ``truth.json``).

Each session's new, reused and output tokens must be the server's own for that session's runs; the turn
table must name the loss the captured runs made (a model switch after another session took the slot,
compaction) with the cause the files prove; reading is incremental (a file read in two halves gives
what one read gives) and never changes the clients' files.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from kvswitch.cli import main
from kvswitch.core.paths import AppPaths
from kvswitch.sessions import ClientHomes, SessionFilter, counts, index_sessions, list_sessions, session_turns
from kvswitch.sessions.prices import Prices
from kvswitch.usage import answer

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "sessions-2026-12"
SESSION_A = "5e5510a0-0000-4000-8000-00000000000a"
SESSION_B = "5e5510a0-0000-4000-8000-00000000000b"
SESSION_C = "5e5510a0-0000-4000-8000-00000000000c"


def _truth() -> dict[str, Any]:
    return json.loads((FIXTURE / "truth.json").read_text(encoding="utf-8"))


def _server_by_session() -> dict[str, dict[str, int]]:
    totals: dict[str, dict[str, int]] = defaultdict(lambda: {"new": 0, "cached": 0, "output": 0})
    for run in _truth()["runs"]:
        entry = totals[run["session"]]
        entry["new"] += run["server_new_tokens"]
        entry["cached"] += run["server_cached_tokens"]
        entry["output"] += run["server_output_tokens"]
    return totals


@pytest.fixture
def homes(fake_home: Path) -> ClientHomes:
    """The captured files copied where the clients keep them, in the test's HOME."""
    shutil.copytree(FIXTURE / "claude" / "projects", fake_home / ".claude" / "projects")
    shutil.copytree(FIXTURE / "codex" / "sessions", fake_home / ".codex" / "sessions")
    database = fake_home / ".local" / "share" / "opencode" / "opencode.db"
    database.parent.mkdir(parents=True)
    shutil.copy(FIXTURE / "opencode" / "opencode.db", database)
    return ClientHomes.from_env()


@pytest.fixture
def paths(fake_home: Path) -> AppPaths:
    return AppPaths.default()


def _digests(root: Path) -> dict[str, str]:
    return {
        str(path): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def test_every_session_has_the_servers_numbers(paths: AppPaths, homes: ClientHomes, fake_home: Path) -> None:
    before = {
        **_digests(fake_home / ".claude"),
        **_digests(fake_home / ".codex"),
        **_digests(fake_home / ".local"),
    }
    report = index_sessions(paths, homes)
    assert not report.notes, report.notes
    found = {item.session_id: item for item in list_sessions(paths, SessionFilter())}
    server = _server_by_session()
    assert set(found) == set(server)
    for session, truth in server.items():
        item = found[session]
        if session == SESSION_C:  # its first request was abandoned by Claude Code (truth.json's note)
            continue
        assert (item.fresh + item.cache_write_5m + item.cache_write_1h, item.cache_read, item.output) == (
            truth["new"],
            truth["cached"],
            truth["output"],
        ), (item.client, session)
    after = {
        **_digests(fake_home / ".claude"),
        **_digests(fake_home / ".codex"),
        **_digests(fake_home / ".local"),
    }
    assert after == before  # the clients' files are only read


def test_session_fields_and_resume_commands(paths: AppPaths, homes: ClientHomes) -> None:
    index_sessions(paths, homes)
    project = _truth()["project"]
    found = {item.session_id: item for item in list_sessions(paths)}
    claude = found[SESSION_A]
    assert (claude.client, claude.project, claude.title) == ("claude", project, "say hi")
    assert claude.versions == ("2.1.332",)
    assert claude.resume_command == f"cd {project} && claude --resume {SESSION_A}"
    assert claude.cost == 0.0
    assert claude.unpriced
    codex = next(item for item in found.values() if item.client == "codex")
    assert codex.resume_command == f"codex resume {codex.session_id}"
    assert codex.title == "say hi"
    assert codex.versions == ("0.171.0",)
    opencode = next(item for item in found.values() if item.client == "opencode")
    assert opencode.resume_command == f"cd {project} && opencode -s {opencode.session_id}"
    assert opencode.calls == 2


def test_the_model_switch_after_another_session_is_a_loss_with_its_cause(
    paths: AppPaths, homes: ClientHomes
) -> None:
    index_sessions(paths, homes)
    _summary, turns = session_turns(paths, SESSION_A)
    switched = [turn for turn in turns if turn.call.model == "tiny-other"]
    # two api-request lines; the turn's counts (from cost-state) are on the second, the first shares them
    assert [bool(turn.call.prompt) for turn in switched] == [False, True]
    loss = switched[1].loss
    assert loss is not None
    assert loss.causes[0] == "model_switched"
    assert "new_process" in loss.causes
    assert "tiny to tiny-other" in loss.detail
    assert loss.lost_tokens > 1000
    assert loss.lost_cost == 0.0  # a local model's tokens cost nothing


def test_the_resume_after_an_idle_past_the_lifetime_names_it(paths: AppPaths, homes: ClientHomes) -> None:
    """The capture's last run resumed A after 305 s idle (and, as a resume without --model does, on the
    profile's model again): the files prove all three."""
    index_sessions(paths, homes)
    _summary, turns = session_turns(paths, SESSION_A)
    last = turns[-1].loss
    assert last is not None
    assert {"idle", "new_process", "model_switched"} <= set(last.causes)
    assert "past the cache's 5 min lifetime" in last.detail
    idle = next(run for run in _truth()["runs"] if run["label"] == "idle")
    assert turns[-1].call.fresh == idle["server_new_tokens"]  # this turn's counts are the server's own


def test_a_compacted_session_shows_the_compaction_and_its_loss(paths: AppPaths, homes: ClientHomes) -> None:
    """Session C: /compact really compacted (a compact_boundary line); its summary request has no line of
    its own, so it is an 'unrecorded' row holding exactly what the server counted for that run; the next
    call is a loss caused by the compaction, with the server's own numbers."""
    index_sessions(paths, homes)
    summary, turns = session_turns(paths, SESSION_C)
    runs = {run["label"]: run for run in _truth()["runs"] if run["session"] == SESSION_C}
    unrecorded = [turn.call for turn in turns if turn.call.lane == "unrecorded"]
    assert [(call.fresh, call.cache_read, call.output) for call in unrecorded] == [
        (runs["compact_ok"]["server_new_tokens"], runs["compact_ok"]["server_cached_tokens"],
         runs["compact_ok"]["server_output_tokens"])]
    after = turns[-1]
    assert (after.call.fresh, after.call.cache_read, after.call.output) == (
        runs["after_compact"]["server_new_tokens"], runs["after_compact"]["server_cached_tokens"],
        runs["after_compact"]["server_output_tokens"])
    assert after.loss is not None
    assert after.loss.causes[0] == "compacted"
    assert "the conversation was compacted" in after.loss.detail
    # the abandoned first request: the server processed it, Claude Code never counted it
    talk = runs["talk"]
    counted = summary.prompt - sum(call.prompt for call in unrecorded) - after.call.prompt
    assert counted < talk["server_new_tokens"] + talk["server_cached_tokens"]


def test_reading_in_two_halves_gives_what_one_read_gives(
    paths: AppPaths, homes: ClientHomes, fake_home: Path
) -> None:
    whole = index_sessions(paths, homes)
    expected = [item.to_json() for item in list_sessions(paths)]
    shutil.rmtree(paths.data_dir)
    transcript = next(homes.claude_projects.rglob(f"{SESSION_A}.jsonl"))
    data = transcript.read_bytes()
    transcript.write_bytes(data[: len(data) // 2])  # ends inside a line: that line waits for the next pass
    index_sessions(paths, homes)
    transcript.write_bytes(data)
    second = index_sessions(paths, homes)
    assert second.bytes_read < len(data)
    assert second.files_read == 1
    assert [item.to_json() for item in list_sessions(paths)] == expected
    assert whole.files_read >= 3


def test_older_claude_lines_count_one_call_per_message_and_request(
    paths: AppPaths, fake_home: Path
) -> None:
    """Before api-request lines, one answer was several assistant lines (one per content block) sharing
    message.id + requestId, the early ones with partial output: one call, the last line's counts. The
    2.1.332 captures hold no such lines (empty answers), so these are made in the documented shape."""

    def answer(message: str, request: str, output: int, sidechain: bool = False) -> dict[str, Any]:
        return {"type": "assistant", "sessionId": "old", "requestId": request, "isSidechain": sidechain,
                "timestamp": "2026-11-01T10:00:00.000Z", "cwd": "/tmp/old", "version": "2.0.1",
                "message": {"id": message, "model": "claude-sonnet-4-5", "usage": {
                    "input_tokens": 10, "cache_read_input_tokens": 1000, "output_tokens": output,
                    "cache_creation_input_tokens": 300,
                    "cache_creation": {"ephemeral_5m_input_tokens": 100, "ephemeral_1h_input_tokens": 200}}}}

    lines = [answer("msg_1", "req_1", 1), answer("msg_1", "req_1", 40), answer("msg_2", "req_2", 7),
             answer("msg_2", "req_2", 9), answer("msg_3", "req_3", 5, sidechain=True)]
    folder = fake_home / ".claude" / "projects" / "-tmp-old"
    folder.mkdir(parents=True)
    (folder / "old.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    index_sessions(paths, ClientHomes.from_env())
    summary, turns = session_turns(paths, "old")
    assert (summary.calls, summary.subagent_calls) == (3, 1)
    assert (summary.output, summary.cache_read, summary.fresh) == (40 + 9 + 5, 3000, 30)
    assert (summary.cache_write_5m, summary.cache_write_1h) == (300, 600)
    assert [turn.call.agent for turn in turns] == ["", "", "sidechain"]
    assert summary.cost > 0  # listed: genai-prices knows claude-sonnet-4-5


def test_prices_from_genai_prices_and_the_users_file_wins(tmp_path: Path) -> None:
    prices = Prices(None)
    # genai-prices' Claude Sonnet 4.5: $3 / $0.30 / $3.75 / $6 per million new, read, 5 m and 1 h written
    assert prices.cost_of("claude-sonnet-4-5", 100_000, 0, 0, 0, 0) == pytest.approx(0.3)
    assert prices.cost_of("claude-sonnet-4-5", 0, 100_000, 0, 0, 0) == pytest.approx(0.03)
    assert prices.cost_of("claude-sonnet-4-5", 0, 0, 100_000, 0, 0) == pytest.approx(0.375)
    assert prices.cost_of("claude-sonnet-4-5", 0, 0, 0, 100_000, 0) == pytest.approx(0.6)
    # a call over 200K prompt tokens is priced on its own, at the long-context tier ($6 per million)
    assert prices.cost_of("claude-sonnet-4-5", 1_000_000, 0, 0, 0, 0) == pytest.approx(6.0)
    assert prices.cost_of("tiny", 1000, 0, 0, 0, 0) is None
    assert counts.MAX_TOKENS == answer.MAX_TOKENS  # the readers' fast path bounds counts as the gateway does
    (tmp_path / "prices.json").write_text(json.dumps({"claude-sonnet": [1, 0.5, 2]}))
    assert Prices(tmp_path).cost_of("claude-sonnet-4-5", 1_000_000, 1_000_000, 0, 0, 0) == pytest.approx(1.5)


def test_cli_lists_shows_and_resumes(
    paths: AppPaths, homes: ClientHomes, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["sessions", "--since", "all", "--source", "files", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {row["client"] for row in rows} == {"claude", "codex", "opencode"}
    assert main(["sessions", "--since", "all", "--client", "codex", "--csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("source,client,session")
    assert len(lines) == 2
    assert ",codex," in lines[1]
    assert main(["sessions", "--since", "all", "--project", "no-such-project"]) == 0
    assert "no sessions" in capsys.readouterr().out
    assert main(["session", "show", SESSION_A]) == 0
    shown = capsys.readouterr().out
    assert "loss [model_switched]" in shown
    assert f"claude --resume {SESSION_A}" in shown
    assert main(["session", "resume", SESSION_A]) == 0
    assert capsys.readouterr().out.strip().endswith(f"claude --resume {SESSION_A}")
    assert main(["session", "resume", SESSION_A[:8]]) == 1  # both captured Claude sessions start so
    assert "matches more than one session" in capsys.readouterr().err
    codex = next(row for row in rows if row["client"] == "codex")["session"]
    assert main(["session", "resume", codex[:13]]) == 0
    assert capsys.readouterr().out.strip() == f"codex resume {codex}"
    with pytest.raises(SystemExit) as exited:
        main(["sessions", "--client", "gemini"])
    assert exited.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_a_session_the_gateway_also_recorded_is_one_row_with_both(
    paths: AppPaths, homes: ClientHomes, capsys: pytest.CaptureFixture[str]
) -> None:
    from kvswitch.core.gateway_config import usage_db  # noqa: PLC0415 - the gateway's record, this test only
    from kvswitch.usage.retention import Retention  # noqa: PLC0415
    from kvswitch.usage.schema import UsageRow  # noqa: PLC0415
    from kvswitch.usage.store import UsageStore  # noqa: PLC0415

    store = UsageStore(usage_db(paths), retention=Retention(3650, 3650))
    try:
        for second in range(3):
            assert store.add(UsageRow(time.time() - 60 + second, "claude", "local", None, "tiny", 200, 13_000,
                                      12_000, 1, session=SESSION_B, verdict="HIT", client_name="claude-code"))
        assert store.add(UsageRow(time.time() - 30, "codex", "local", None, "tiny", 200, 100, 0, 1,
                                  session="gateway-only", verdict="COLD", client_name="codex"))
    finally:
        store.close()
    assert main(["sessions", "--since", "all", "--json"]) == 0
    rows = {row["session"]: row for row in json.loads(capsys.readouterr().out)}
    assert rows[SESSION_B]["source"] == "both"
    assert rows[SESSION_B]["gateway"]["requests"] == 3
    assert rows[SESSION_B]["calls"] >= 2  # the files' own numbers stay the row's
    assert rows["gateway-only"]["source"] == "gateway"
    assert rows[SESSION_A]["source"] == "files"
    assert main(["sessions", "--since", "all", "--source", "gateway", "--json"]) == 0
    assert {row["session"] for row in json.loads(capsys.readouterr().out)} == {SESSION_B, "gateway-only"}
    assert main(["sessions", "--since", "all"]) == 0
    assert "gateway: 3 requests, hit 92%" in capsys.readouterr().out
