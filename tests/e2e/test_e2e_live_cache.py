"""The live cache record (issue 25) with the real clients through ``kvswitch gateway run`` to a real
llama-server b11434: every request's session, prompt and cached tokens equal the server's own numbers,
taken by an independent recorder between the gateway and the server (the server's ``/metrics``
counters around each request, requests one at a time), and every request has a verdict; Claude Code's
attribution block is named as the reason a new conversation is not a HIT; with
``CLAUDE_CODE_ATTRIBUTION_HEADER=0`` continued turns are HITs; two sessions alternating on a one-slot
server without a host-RAM cache name each other as the eviction; Codex gets rows per session; the
cross-conversation alert fires for the header-on profile and not for the header-off one, and the
per-session alert for neither."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import aiohttp
import pytest
from aiohttp import web

from kvswitch.cli import main
from kvswitch.core.gateway_config import ensure_token, usage_db
from kvswitch.core.paths import AppPaths
from kvswitch.gateway.truth.alerts import alerts, opening_alerts, openings
from kvswitch.gateway.truth.counts_fallback import FILLED_NOTE
from kvswitch.usage.queries import query
from kvswitch.usage.schema import UsageRow
from support.claude import claude_binary, eos_token_id
from support.clients import codex_binary
from support.gateway import gateway_process
from support.llama import llama_server
from support.net import free_port

pytestmark = [pytest.mark.real_server, pytest.mark.timeout(1500)]

#: what an answer holds when it carries the prompt's counts (Messages, Responses, Chat, llama.cpp timings)
_COUNT_KEYS = (b'"cache_read_input_tokens"', b'"input_tokens_details"', b'"prompt_tokens"', b'"prompt_n"')
_METRIC = re.compile(r"^llamacpp:(prompt_tokens_total|prompt_tokens_cached_total) (\S+)$", re.M)


@dataclass
class Served:
    """One request as the recorder saw it: the client's session header and the server's own counts."""

    path: str
    headers: dict[str, str]
    processed: int
    cached: int
    #: whether the answer itself carried the prompt's counts (b11434 sometimes streams a Messages answer
    #: without its ``message_start`` event, so only ``/metrics`` knows them)
    answer_counts: bool = True
    #: the request's bytes as the server received them
    body: bytes = b""

    @property
    def prompt(self) -> int:
        return self.processed + self.cached


@dataclass
class MetricsRecorder:
    """A pass-through proxy in front of a llama-server: one request at a time, the server's
    ``prompt_tokens_total`` / ``prompt_tokens_cached_total`` read before and after each."""

    upstream: str
    served: list[Served] = field(default_factory=list)
    port: int = 0

    def __post_init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        assert self._ready.wait(20)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def _metrics(self, session: aiohttp.ClientSession) -> tuple[int, int]:
        async with session.get(self.upstream + "/metrics") as answer:
            found = dict(_METRIC.findall(await answer.text()))
        return int(float(found["prompt_tokens_total"])), int(float(found["prompt_tokens_cached_total"]))

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        lock = asyncio.Lock()

        async def open_client() -> aiohttp.ClientSession:
            return aiohttp.ClientSession(auto_decompress=False, timeout=aiohttp.ClientTimeout(total=900))

        client = self._loop.run_until_complete(open_client())

        async def handle(request: web.Request) -> web.StreamResponse:
            body = await request.read()
            headers = {k: v for k, v in request.headers.items()
                       if k.lower() not in ("host", "content-length")}
            # the gateway's own reads of /metrics, and its renderings of a new conversation's prompt
            # (``gateway.truth.new_conversation``: the server's template and tokenizer, no inference, its
            # counters do not move), pass at once and are not requests the server ran
            if request.method != "POST" or request.path in ("/apply-template", "/tokenize"):
                async with client.request(request.method, self.upstream + request.path_qs,
                                          data=body, headers=headers) as answer:
                    return web.Response(status=answer.status, body=await answer.read(), headers={
                        k: v for k, v in answer.headers.items() if k.lower() == "content-type"})
            async with lock:
                before = await self._metrics(client)
                async with client.request(request.method, self.upstream + request.path_qs, data=body,
                                          headers=headers) as answer:
                    out = web.StreamResponse(status=answer.status, headers={
                        k: v for k, v in answer.headers.items()
                        if k.lower() in ("content-type", "content-encoding")})
                    await out.prepare(request)
                    kept = bytearray()
                    async for chunk in answer.content.iter_any():
                        kept += chunk
                        await out.write(chunk)
                if answer.status == 200:
                    after = before
                    for _ in range(50):  # the counters move when the slot is released
                        after = await self._metrics(client)
                        if after != before:
                            break
                        await asyncio.sleep(0.05)
                    counts = any(key in kept for key in _COUNT_KEYS)
                    self.served.append(Served(request.path, dict(request.headers), after[0] - before[0],
                                              after[1] - before[1], counts, body))
                await out.write_eof()
                return out

        app = web.Application(client_max_size=1 << 26)
        app.router.add_route("*", "/{tail:.*}", handle)
        runner = web.AppRunner(app, access_log=None)
        self._loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", 0)
        self._loop.run_until_complete(site.start())
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._ready.set()
        self._loop.run_forever()
        self._loop.run_until_complete(client.close())
        self._loop.run_until_complete(runner.cleanup())

    def close(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(20)


def _claude(home: Path, project: Path, prompt: str, *, resume: bool = False) -> None:
    project.mkdir(parents=True, exist_ok=True)
    argv = [str(claude_binary()), "-p", prompt, "--max-turns", "1", *(["--continue"] if resume else [])]
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8"}
    done = subprocess.run(argv, cwd=project, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=600)
    # the tiny model's random tokens end the answer at Claude Code's output cap, which it reports
    # with exit 1 after the request completed
    capped = re.search(r"exceeded the \d+ output token maximum", done.stdout) is not None
    assert done.returncode == 0 or capped, done.stderr[-2000:] + done.stdout[-2000:]


def _add(name: str, url: str, *extra: str) -> None:
    # 16 output tokens: an answer is never empty (Claude Code re-sends a turn whose answer shows nothing,
    # with a reminder in its first message: real, but not what these tests are about) and ends quickly
    assert main(["profile", "add", name, "--kind", "llama.cpp", "--base-url", url, "--model", "tiny",
                 "--small-fast-model", "tiny", "--target", "claude", "--target", "codex", "--via-gateway",
                 "--env", "CLAUDE_CODE_MAX_OUTPUT_TOKENS=16", *extra]) == 0


def _dump(rows: list[UsageRow]) -> list[tuple[object, ...]]:
    return [(r.session and r.session[:8], r.agent, r.input_tokens, r.cached_tokens, r.output_tokens,
             r.verdict, r.reason, r.error, r.ttft_ms, r.duration_ms, r.reason_detail) for r in rows]


def _conversation_rows(rows: list[UsageRow]) -> list[UsageRow]:
    """The rows of the requests the server answered (what the recorder saw, in the same order)."""
    return [r for r in rows
            if r.status == 200 and r.upstream and not r.upstream.endswith(("/models", "/props"))]


def _rows(paths: AppPaths, recorder: MetricsRecorder) -> list[UsageRow]:
    """The conversation rows once there is one per request the recorder saw: a row whose answer carried
    no counts is stored after the gateway read the server's counters (``gateway.counts_fallback``),
    within seconds of the answer's end."""
    deadline = time.monotonic() + 15
    rows = _conversation_rows(query(usage_db(paths)))
    while len(rows) < len(recorder.served) and time.monotonic() < deadline:
        time.sleep(0.1)  # the gateway is another process: its rows reach the file when it writes them
        rows = _conversation_rows(query(usage_db(paths)))
    return rows


def _check_against_recorder(rows: list[UsageRow], served: list[Served]) -> None:
    """Row by row (both in the order the server ran them): the server's own numbers, the client's own
    session id, and a verdict."""
    assert len(rows) == len(served), (_dump(rows), [(s.path, s.prompt, s.cached) for s in served])
    for row, seen in zip(rows, served, strict=True):
        header = {k.lower(): v for k, v in seen.headers.items()}.get("x-claude-code-session-id")
        if header is not None:
            assert row.session == header
            assert row.session_source == "header"
        assert row.session
        if not seen.answer_counts:  # nothing in the answer: the numbers come from the server's counters
            if row.input_tokens is None:  # only when they could not be this request's alone, which it says
                assert "prompt counts not known: another request ran" in (row.notes or ""), _dump([row])
                assert row.verdict is None
                continue
            assert FILLED_NOTE in (row.notes or ""), _dump([row])
        assert (row.input_tokens, row.cached_tokens) == (seen.prompt, seen.cached), _dump(rows)
        assert row.verdict in ("HIT", "PARTIAL", "MISS", "COLD")
        assert row.reusable_tokens is not None
        if row.verdict != "HIT":
            assert row.reason in ("cold", "prefix_changed", "evicted", "expired", "server", "unknown")
            assert row.reason_detail is not None
            assert json.loads(row.reason_detail)["prompt"] == row.input_tokens


def _turns(rows: list[UsageRow], session: str | None) -> list[UsageRow]:
    """A session's main-conversation requests (its largest prompts, one per run of the client)."""
    return [r for r in rows if r.session == session and (r.input_tokens or 0) > 5000]


#: one slot, no host-RAM prompt cache: what the slot holds is all the server can reuse
ONE_SLOT = ("--cache-ram", "0")


def _usage_json(capsys: pytest.CaptureFixture[str]) -> list[SimpleNamespace]:
    """``kvswitch usage --json`` as the rules read rows (what a user or a script gets)."""
    capsys.readouterr()
    assert main(["usage", "--json", "--since", "all"]) == 0
    return [SimpleNamespace(**row) for row in json.loads(capsys.readouterr().out)]


#: the two first messages of the captured bodies (``tests/fixtures/claude-code-2.1.332``): the block's
#: fingerprint is taken from the first message's characters, so these two get different ones
FIRST, SECOND = "say hi", "say hello to the whole team"
#: further first messages, for a new conversation opened again (their fingerprints differ from FIRST's)
EXTRA_OPENINGS = ("say good morning to everyone", "say thanks to the reviewers")


def test_claude_code_attribution_block_is_named_and_continued_turns_hit(
        fake_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    claude_binary()
    paths = AppPaths.default()
    port = free_port()
    with (
        llama_server(tmp_path / "server", *ONE_SLOT) as server,
        gateway_process(fake_home, port, tmp_path / "gateway.log"),
    ):
        recorder = MetricsRecorder(server.url)
        try:
            # a local profile gets CLAUDE_CODE_ATTRIBUTION_HEADER=0 by default (core.presets): "on" undoes it
            _add("on", recorder.url, "--env", "CLAUDE_CODE_ATTRIBUTION_HEADER=1")
            _add("off", recorder.url, "--env", "CLAUDE_CODE_ATTRIBUTION_HEADER=0")
            # the header-off profile: a conversation continued once, then a new one
            assert main(["use", "off"]) == 0
            _claude(fake_home, tmp_path / "off-project", FIRST)
            _claude(fake_home, tmp_path / "off-project", "say more", resume=True)
            _claude(fake_home, tmp_path / "off-project", SECOND)
            off_rows = _rows(paths, recorder)
            _check_against_recorder(off_rows, recorder.served)
            off_sessions = {r.session for r in off_rows}
            main_off = max(off_sessions, key=lambda s: len(_turns(off_rows, s)))
            continued = _turns(off_rows, main_off)[1:]
            assert continued
            assert all(r.verdict == "HIT" for r in continued), _dump(off_rows)
            off_opening = [r for r in openings(off_rows) if (r.input_tokens or 0) > 5000]
            assert off_opening, _dump(off_rows)
            # the second conversation's opening differs from the first's at the user's own words: what
            # it could reuse is what the server rendered before them (measured by the server itself:
            # its template puts Claude Code's own system message after the words and the tools nowhere),
            # and it reused all of it (issue 38, item 3: it was a PARTIAL "prefix changed" with seconds
            # of time lost)
            second_opening = next(r for r in off_rows
                                  if r.session != main_off and (r.input_tokens or 0) > 5000)
            assert second_opening.verdict == "HIT", second_opening.reason_detail  # (the evidence)
            detail = json.loads(second_opening.reason_detail or "{}")
            assert detail["new_conversation"] == "messages[0].content[1]", detail
            assert detail["measured_by"] == "server", detail
            assert detail["reusable"] == second_opening.reusable_tokens, detail
            assert second_opening.reusable_tokens == second_opening.cached_tokens, detail
            assert detail["estimated_reusable"] > detail["reusable"], detail

            # the header-on profile: two new conversations in one project
            assert main(["use", "on"]) == 0
            _claude(fake_home, tmp_path / "on-project", FIRST)
            first = {r.session for r in _rows(paths, recorder)} - off_sessions
            # b11434 streams an answer without its counts when its first token is an incomplete UTF-8
            # sequence (see the two-session test): the opening of the second conversation must carry
            # the server's numbers to be judged, so a new conversation is opened again (at most twice
            # more, each with its own first words, so its own fingerprint) when it did not
            seen_sessions = set(off_sessions) | first
            for words in (SECOND, *EXTRA_OPENINGS):
                _claude(fake_home, tmp_path / "on-project", words)
                rows = _rows(paths, recorder)
                _check_against_recorder(rows, recorder.served)
                second = {r.session for r in rows} - seen_sessions
                assert len(second) == 1
                seen_sessions |= second
                (newest,) = second
                if next(r for r in rows if r.session == newest).input_tokens is not None:
                    break
            assert len(first) == 1
            # the bytes the server received (the independent recorder): the header-on conversations
            # carry the block in system[0], each with its own fingerprint; the header-off ones none
            blocks = {}
            for seen in recorder.served:
                sent = json.loads(seen.body)
                head = sent["system"][0]["text"] if isinstance(sent.get("system"), list) else ""
                session = {k.lower(): v for k, v in seen.headers.items()}.get("x-claude-code-session-id")
                blocks.setdefault(session, head if head.startswith("x-anthropic-billing-header:") else None)
            assert all(blocks[s] is None for s in off_sessions), blocks
            on_blocks = [blocks[s] for s in (*first, *second)]
            assert all((b or "").startswith("x-anthropic-billing-header: cc_version=2.1.332.")
                       for b in on_blocks), on_blocks
            assert on_blocks[0] != on_blocks[1], on_blocks
            opening = next(r for r in rows if r.session == newest)
            assert opening == _turns(rows, newest)[0], _dump(rows)
            assert opening.verdict != "HIT", _dump(rows)
            assert opening.reason == "prefix_changed"
            detail = json.loads(opening.reason_detail or "{}")
            assert (detail["part"], detail["looks_like"]) == ("system[0]", "attribution_block"), detail
            assert detail["reference"]["same_session"] is False
            block = detail["attribution"]
            assert block["now"].startswith("cc_version=2.1.332.")
            assert block["fingerprint"]["now"] != block["fingerprint"]["before"], block
            assert detail["fix"] == {"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"}

            # the alerts, on the rows as `kvswitch usage --json` gives them: new conversations on the
            # header-on profile lose the prompt (the cross-conversation rule), those on the header-off one
            # do not, and inside each session the cache works (the per-session rule)
            listed = _usage_json(capsys)
            found = {alert.profile: alert for alert in opening_alerts(listed)}
            assert "off" not in found, (found, _dump(off_rows))
            assert found["on"].looks_like == "attribution_block", found
            assert found["on"].fix == {"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"}
            assert alerts(listed) == [], _dump(rows)
        finally:
            recorder.close()


def test_two_sessions_alternating_on_one_slot_name_each_other(fake_home: Path, tmp_path: Path) -> None:
    claude_binary()
    paths = AppPaths.default()
    port = free_port()
    with (
        llama_server(tmp_path / "server", *ONE_SLOT) as server,
        gateway_process(fake_home, port, tmp_path / "gateway.log"),
    ):
        recorder = MetricsRecorder(server.url)
        try:
            _add("one", recorder.url)
            assert main(["use", "one"]) == 0
            _claude(fake_home, tmp_path / "a", "say hi")
            a_sessions = {r.session for r in _rows(paths, recorder)}
            _claude(fake_home, tmp_path / "b", "say hi")
            b_sessions = {r.session for r in _rows(paths, recorder)} - a_sessions
            # b11434 streams a Messages answer without its message_start (the prompt's counts) when the
            # first token is an incomplete UTF-8 sequence (the tiny model's random tokens often are):
            # that row has no numbers and no verdict by design, so the alternation is run again, at
            # most three times, until A's turn after B carries the server's numbers
            for _attempt in range(3):
                _claude(fake_home, tmp_path / "a", "say more", resume=True)
                rows = _rows(paths, recorder)
                _check_against_recorder(rows, recorder.served)
                last_b = max(i for i, r in enumerate(rows) if r.session in b_sessions)
                again = next(r for r in rows[last_b:] if r.session in a_sessions)  # A's first after B
                if again.input_tokens is not None:
                    break
                _claude(fake_home, tmp_path / "b", "say more", resume=True)
            assert again.verdict in ("MISS", "PARTIAL"), _dump(rows)
            assert again.reason == "evicted"
            detail = json.loads(again.reason_detail or "{}")
            assert detail["reference"]["same_session"] is True
            b_short = {s[:13] for s in b_sessions if s}
            assert any(entry["who"] == "another session" and entry["session"] in b_short
                       for entry in detail["between"])
        finally:
            recorder.close()


def test_codex_gets_rows_per_session_with_its_own_numbers(fake_home: Path, tmp_path: Path) -> None:
    binary = codex_binary()
    paths = AppPaths.default()
    port = free_port()
    # an end-of-turn bias: Codex's answers end at once
    with (
        llama_server(tmp_path / "server", "-l", f"{eos_token_id()}+100", *ONE_SLOT) as server,
        gateway_process(fake_home, port, tmp_path / "gateway.log"),
    ):
        recorder = MetricsRecorder(server.url)
        try:
            _add("cx", recorder.url)
            assert main(["use", "cx"]) == 0
            project = tmp_path / "codex-project"
            project.mkdir()
            env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(fake_home), "LANG": "C.UTF-8",
                   "KVSWITCH_API_KEY": ensure_token(paths)}
            for argv in (["exec", "--skip-git-repo-check", "say hi"],
                         ["exec", "resume", "--last", "--skip-git-repo-check", "say more"],
                         ["exec", "--skip-git-repo-check", "say hello"]):
                done = subprocess.run([str(binary), *argv], cwd=project, env=env, stdin=subprocess.DEVNULL,
                                      capture_output=True, text=True, timeout=600)
                assert done.returncode == 0, done.stderr[-2000:]
            rows = _rows(paths, recorder)
            _check_against_recorder(rows, recorder.served)
            assert {r.client_name for r in rows} == {"codex"}
            sessions = list(dict.fromkeys(r.session for r in rows))
            assert len(sessions) == 2  # the resumed run continues the first conversation's session
            for row, seen in zip(rows, recorder.served, strict=True):
                body_session = seen.headers.get("session_id") or seen.headers.get("Session_id")
                if body_session:
                    assert row.session == body_session
            resumed = [r for r in rows if r.session == sessions[0]][-1]
            assert resumed.verdict == "HIT", (resumed.verdict, resumed.reason, resumed.reason_detail)
        finally:
            recorder.close()
