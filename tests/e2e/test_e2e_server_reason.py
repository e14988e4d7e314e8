"""The ``server`` reason with the real Claude Code 2.1.332 through ``kvswitch gateway run`` to a real
llama-server b11434 serving a sliding-window model (the tiny model's Gemma 2 variant, a 64-token window)
without context checkpoints (``--ctx-checkpoints 0``), its log at ``-lv 4``, where it says when it forces
a full re-processing.

A continued turn then extends the earlier prompt whole, yet the server re-processes all of it: the
sliding-window layers cannot be rolled back to where the client's rendering of the previous answer
differs from the tokens the server generated. The request's record must carry the server's own numbers
(an independent recorder reads ``/metrics`` around each request), and, for the profile that follows the
server's log, the reason ``server`` with the server's words; a profile without the log says
``unknown``; the same server with ``--swa-full`` keeps the whole window, and the continued turn hits.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from test_e2e_live_cache import (
    ONE_SLOT,
    MetricsRecorder,
    _add,
    _check_against_recorder,
    _claude,
    _dump,
    _rows,
    _turns,
)

from kvswitch.cli import main
from kvswitch.core.paths import AppPaths
from kvswitch.usage.schema import UsageRow
from support.claude import claude_binary
from support.gateway import gateway_process
from support.llama import llama_server
from support.net import free_port

pytestmark = [pytest.mark.real_server, pytest.mark.timeout(900)]

#: a window far shorter than Claude Code's prompt, no checkpoints, the trace lines, one slot; batches of
#: 64 tokens, so b11434 keeps 256 cells of the window (its 64 positions plus a batch, padded to 256)
SWA = 64
FORCING = ("-lv", "4", "--ctx-checkpoints", "0", "-b", "64", "-ub", "64", *ONE_SLOT)
#: answers long enough that rolling back to where the client's re-rendering of one differs from the
#: tokens the server generated goes past those 256 cells
LONG_ANSWERS = ("--env", "CLAUDE_CODE_MAX_OUTPUT_TOKENS=1000")
#: continued turns at most
TURNS = 4


def _said_so(rows: list[UsageRow]) -> bool:
    return any(r.reason == "server" for r in rows)


def _untold(rows: list[UsageRow]) -> bool:
    return any(r.verdict != "HIT" and r.reason == "unknown" for r in rows)


def _continued(paths: AppPaths, recorder: MetricsRecorder, home: Path, project: Path,
               until: Callable[[list[UsageRow]], bool]) -> list[UsageRow]:
    """A new conversation, then turns continued until ``until`` holds for the continued requests'
    rows (at most ``TURNS``): whether the server must roll back past its window depends on how long
    the tiny model's random answer was, so one continued turn may not need it."""
    _claude(home, project, "say hi")
    continued: list[UsageRow] = []
    for turn in range(TURNS):
        _claude(home, project, f"say more, turn {turn + 1}", resume=True)
        rows = _rows(paths, recorder)
        _check_against_recorder(rows, recorder.served)
        main_session = max({r.session for r in rows}, key=lambda s: len(_turns(rows, s)))
        continued = _turns(rows, main_session)[1:]
        if continued and until(continued):
            break
    assert continued, _dump(_rows(paths, recorder))
    return continued


@contextlib.contextmanager
def _conversation(home: Path, tmp_path: Path, *server_flags: str, follow_log: bool,
                  until: Callable[[list[UsageRow]], bool]) -> Iterator[tuple[list[UsageRow], Path]]:
    """A sliding-window b11434 (``FORCING`` and ``server_flags``), the gateway, the recorder and a
    profile routing Claude Code to them (following the server's log when ``follow_log``); yields the
    continued requests' rows of one conversation (``_continued``) and the server's log file."""
    claude_binary()
    with (
        llama_server(tmp_path / "server", *server_flags, *FORCING, swa=SWA) as server,
        gateway_process(home, free_port(), tmp_path / "gateway.log"),
    ):
        recorder = MetricsRecorder(server.url)
        try:
            _add("swa", recorder.url, *(["--log-file", str(server.log_file)] if follow_log else []),
                 *LONG_ANSWERS)
            assert main(["use", "swa"]) == 0
            yield _continued(AppPaths.default(), recorder, home, tmp_path / "project", until), server.log_file
        finally:
            recorder.close()


def test_a_forced_re_processing_is_named_in_the_servers_words(fake_home: Path, tmp_path: Path) -> None:
    with _conversation(fake_home, tmp_path, follow_log=True, until=_said_so) as (continued, log_file):
        forced = [r for r in continued if r.reason == "server"]
        assert forced, _dump(continued)
        for row in forced:
            assert row.verdict in ("MISS", "PARTIAL")
            detail = json.loads(row.reason_detail or "{}")
            assert "forcing full prompt re-processing" in detail["server_said"], detail
            assert "SWA or hybrid/recurrent" in detail["meaning"]
            assert "--swa-full" in detail["advice"]  # the server module's own switch against it
            assert detail["prompt"] == row.input_tokens
            assert detail["cached"] == row.cached_tokens
        # the server's own words are in its log, once per forced request at least
        said = log_file.read_text(errors="replace").count("forcing full prompt re-processing")
        assert said >= len(forced)


def test_without_the_log_the_same_request_is_unknown(fake_home: Path, tmp_path: Path) -> None:
    with _conversation(fake_home, tmp_path, follow_log=False, until=_untold) as (continued, _log):
        assert _untold(continued), _dump(continued)
        assert all(r.reason != "server" for r in continued)


def test_with_the_whole_window_kept_the_continued_turn_hits(fake_home: Path, tmp_path: Path) -> None:
    # as many turns as the other two tests may take, whatever the answers were
    with _conversation(fake_home, tmp_path, "--swa-full", follow_log=True,
                       until=lambda rows: False) as (continued, log_file):
        assert len(continued) >= TURNS
        # every continued request reused the cache, and none was re-processed for a reason the server
        # gave or no reason at all: a PARTIAL is Claude Code's own (at its output cap 2.1.332 re-sends a
        # turn with "Output token limit hit" appended to the first user message; its compaction rewrites
        # the conversation: prefix_changed) or a side request of the session that ran on the one slot in
        # between (evicted, named)
        for row in continued:
            assert (row.cached_tokens or 0) > 0, _dump(continued)
            assert row.verdict == "HIT" or row.reason in ("prefix_changed", "evicted"), _dump(continued)
        assert "forcing full prompt re-processing" not in log_file.read_text(errors="replace")
