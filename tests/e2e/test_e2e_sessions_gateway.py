"""Sessions read from the clients' own files, beside what ``kvswitch gateway run`` recorded of the same
requests (issue 35), with the real Claude Code 2.1.332 and Codex 0.171 to a real llama-server b11434.

- A new Claude Code conversation on a header-on profile (``CLAUDE_CODE_ATTRIBUTION_HEADER=1``) is not a
  HIT at the gateway: ``prefix_changed`` at ``system[0]``, looks like the attribution block (the gateway's
  byte-level reason). ``kvswitch session show ID``, read from Claude Code's own transcript, shows that
  same reason, part and fix on that call (matched by session id, prompt and cached tokens).
- ``kvswitch session resume ID --run -- ARGS`` on a real Codex session runs ``codex exec resume`` (the
  interactive ``codex resume`` needs a terminal): the next request the gateway records carries the same
  session id (Codex's own ``session_id`` header), and the rollout of that id grows.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from test_e2e_live_cache import EXTRA_OPENINGS, FIRST, ONE_SLOT, SECOND, _add, _claude, _conversation_rows

from kvswitch.cli import main
from kvswitch.core.gateway_config import ensure_token, usage_db
from kvswitch.core.paths import AppPaths
from kvswitch.sessions import index_sessions, list_sessions, session_turns
from kvswitch.usage.queries import query
from kvswitch.usage.schema import UsageRow
from support.claude import claude_binary, eos_token_id
from support.clients import codex_binary
from support.gateway import gateway_process
from support.llama import llama_server
from support.net import free_port

pytestmark = [pytest.mark.real_server, pytest.mark.timeout(1500)]


def _rows(paths: AppPaths, at_least: int) -> list[UsageRow]:
    """The gateway's conversation rows, once it wrote ``at_least`` (it is another process)."""
    deadline = time.monotonic() + 20
    rows = _conversation_rows(query(usage_db(paths)))
    while len(rows) < at_least and time.monotonic() < deadline:
        time.sleep(0.2)  # polling another process's file
        rows = _conversation_rows(query(usage_db(paths)))
    return rows


def test_session_show_has_the_gateways_reason_for_the_same_claude_call(
    fake_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    claude_binary()
    paths = AppPaths.default()
    with (
        llama_server(tmp_path / "server", *ONE_SLOT) as server,
        gateway_process(fake_home, free_port(), tmp_path / "gateway.log"),
    ):
        _add("on", server.url, "--env", "CLAUDE_CODE_ATTRIBUTION_HEADER=1")
        assert main(["use", "on"]) == 0
        project = tmp_path / "on-project"
        _claude(fake_home, project, FIRST)
        seen = {r.session for r in _rows(paths, 1)}
        # b11434 streams some answers without their counts (an incomplete UTF-8 first token): such a row
        # has no verdict, or counts the gateway took from the server's /metrics, which Claude Code's own
        # file cannot carry (it records what the answer said: one CI run matched a later retry of the
        # same prompt instead), so a new conversation is opened again until an answer carried its counts
        for words in (SECOND, *EXTRA_OPENINGS, "say welcome to the new team", "say well done to the testers"):
            _claude(fake_home, project, words)
            rows = _rows(paths, 2)
            (newest,) = {r.session for r in rows} - seen
            seen.add(newest)
            opening = next(r for r in rows if r.session == newest)
            if opening.input_tokens is not None and "/metrics" not in (opening.notes or ""):
                break
    assert opening.reason == "prefix_changed", (opening.verdict, opening.reason_detail)
    detail = json.loads(opening.reason_detail or "{}")
    assert (detail["part"], detail["looks_like"]) == ("system[0]", "attribution_block"), detail

    index_sessions(paths)
    summary, turns = session_turns(paths, str(newest))
    assert summary.client == "claude"
    table = [turn.to_json() for turn in turns]
    # the call whose counts are the opening request's (the server's numbers, as the gateway recorded them)
    first = next((turn for turn in turns if turn.call.prompt == opening.input_tokens), None)
    assert first is not None, (opening.input_tokens, opening.cached_tokens, table)
    assert first.call.cache_read == opening.cached_tokens, table
    assert first.gateway is not None, table
    assert (first.gateway.verdict, first.gateway.reason) == (opening.verdict, "prefix_changed")
    assert (first.gateway.part, first.gateway.looks_like) == ("system[0]", "attribution_block")
    assert dict(first.gateway.fix) == {"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"}
    assert first.to_json()["gateway"]["looks_like"] == "attribution_block"

    capsys.readouterr()
    assert main(["session", "show", str(newest)]) == 0
    shown = capsys.readouterr().out
    assert f"gateway: {opening.verdict}, prefix changed at system[0]" in shown, shown
    assert "looks like attribution block; fix: CLAUDE_CODE_ATTRIBUTION_HEADER=0" in shown, shown


def test_session_resume_run_resumes_the_real_codex_session(
    fake_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    binary = codex_binary("0.171.0")
    paths = AppPaths.default()
    with (
        llama_server(tmp_path / "server", "-l", f"{eos_token_id()}+100", *ONE_SLOT) as server,
        gateway_process(fake_home, free_port(), tmp_path / "gateway.log"),
    ):
        _add("cx", server.url)
        assert main(["use", "cx"]) == 0
        project = tmp_path / "codex-project"
        project.mkdir()
        token = ensure_token(paths)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(fake_home), "LANG": "C.UTF-8",
               "KVSWITCH_API_KEY": token}
        done = subprocess.run([str(binary), "exec", "--skip-git-repo-check", "say hi"], cwd=project, env=env,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        before = _rows(paths, 1)
        sessions = {r.session for r in before}
        assert len(sessions) == 1, sessions
        (session,) = sessions
        assert session

        index_sessions(paths)
        found = {item.session_id: item for item in list_sessions(paths)}
        assert found[str(session)].client == "codex", found  # the rollout's id is the one Codex sends
        rollout = next((fake_home / ".codex" / "sessions").rglob(f"rollout-*{session}.jsonl"))
        size = rollout.stat().st_size

        monkeypatch.setenv("KVSWITCH_CODEX_BIN", str(binary))
        monkeypatch.setenv("KVSWITCH_API_KEY", token)
        argv = ["session", "resume", str(session), "--run", "--", "--skip-git-repo-check", "say more"]
        assert main(argv) == 0
        after = _rows(paths, len(before) + 1)
    resumed = after[len(before):]
    assert resumed, "the resumed run sent no request through the gateway"
    assert {r.session for r in resumed} == {session}
    assert {r.session_source for r in resumed} == {"header"}, [(r.session, r.session_source) for r in resumed]
    assert rollout.stat().st_size > size
