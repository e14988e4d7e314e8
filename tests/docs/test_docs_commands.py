"""Every command shown in README.md and docs/*.md parses with the real CLI parser, and really runs.

A doc that shows a command the CLI no longer has (a renamed flag, a dropped sub-command) is stale; this
module finds it and names the page and line. Parsing uses ``kvswitch.cli.build_parser()``, the parser
the ``kvswitch`` console script builds. Running: page by page, in the order shown, each page in its own
fresh temporary HOME, as subprocesses of the venv's installed ``kvswitch`` script, against a real
llama-server b11434 on a free port (the documented ``127.0.0.1:8080`` / ``--port 18080`` are rewritten to
it). A run must not exit 2 (usage) or 70 (internal error), must not print a traceback, and exits 0
unless ``EXPECTED_FAILURE`` says why it exits 1. What is only parsed, and why: ``PARSE_ONLY`` and
``_why_not_run``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from doccommands import (
    REPO,
    DocLine,
    covering_expansions,
    every_expansion,
    inline_commands,
    pages,
    parse_synopsis,
    shell_lines,
)

from kvswitch.cli import build_parser
from support.llama import RunningServer, llama_server
from support.require import component_missing

FIXTURES = REPO / "tests" / "fixtures"
KVSWITCH = Path(sys.executable).with_name("kvswitch")
CLIENT_BINS = {"claude": "KVSWITCH_CLAUDE_BIN", "codex": "KVSWITCH_CODEX_BIN",
               "opencode": "KVSWITCH_OPENCODE_BIN"}
#: a client session against the tiny model on 2 shared cores; ablation runs several of them
CLIENT_TIMEOUT_S = 1200
TIMEOUT_S = 120

#: commands parsed but never run, with the reason (matched on the leading words of the argv)
PARSE_ONLY = {
    ("gateway", "run"): "the gateway serves until it is stopped",
    ("record",): "the recording proxy serves until it is stopped",
    ("log", "tail"): "follows the file until it is stopped",
    ("mcp", "measure"): "runs the real Claude Code three times against the active server, starting the "
                        "documented server's own command (`uvx mcp-server-fetch` is an example, not "
                        "installed here); tests/e2e/test_e2e_mcp_cost.py measures a real MCP server",
    ("sweep",): "restarts a server once per setting (minutes on 2 shared cores, and the documented model "
                "file is an example); tests/verify/test_sweep_real.py runs it against the real llama-server",
}
#: flags whose runs are only parsed here, with the reason
PARSE_ONLY_FLAGS = {
    "--ablate": "runs the client once per setting of the profile (over 20 minutes on 2 shared cores); "
                "tests/e2e/test_e2e_experiments.py runs it for real",
}
#: profiles the docs create for cloud vendors: talking to them needs their key and the internet
CLOUD_PROFILES = {"ds", "ds-codex", "cloud"}
NETWORK_COMMANDS = {"models", "test", "compare", "verify"}
#: runs that exit 1 on purpose: (page or "" for any, argv prefix, why)
EXPECTED_FAILURE = [
    ("", ("import", "cc-switch"), "a fresh HOME has no CC Switch database to import"),
    ("docs/commands.md", ("current",), "the page shows it after `undo`: no profile is applied any more"),
    ("docs/commands.md", ("import", "claude"),
     "the page shows it after `undo --original`, which put back the missing ~/.claude/settings.json"),
    ("", ("gateway", "status"),
     "status exits 1 while the gateway is not running (`gateway run` is only parsed)"),
    ("", ("diagnose",), "A.json and B.json are two real Claude Code 2.1.332 conversations: their billing "
     "headers differ, so they diverge, which diagnose reports with exit 1"),
]
#: the documented placeholders; PATH and URL depend on the run (see ``_concrete``)
PLACEHOLDERS = {"PROFILE": "local", "PROFILE_A": "local", "PROFILE_B": "cloud", "P": "local",
                "NAME": "local", "OTHER": "cloud", "B": "cloud", "ID": "deepseek"}
FAKE_KEY = "sk-docs-test-000000000000000000000000"


@dataclass(frozen=True)
class Run:
    """One concrete argv (``kvswitch`` removed) of a documented line."""

    doc: DocLine
    words: tuple[str, ...]

    @property
    def id(self) -> str:
        return f"{self.doc.where} {' '.join(self.words)}"[:140]


def _documented() -> list[DocLine]:
    return [line for page in pages() for line in shell_lines(page)]


def _kvswitch_lines() -> list[DocLine]:
    return [line for line in _documented() if line.text.split()[0] == "kvswitch"]


def _runs(page: str) -> list[Run]:
    """The page's runs in order: for each line, expansions that cover every optional part."""
    runs: list[Run] = []
    for line in _kvswitch_lines():
        if line.page == page:
            for words in covering_expansions(parse_synopsis(line.text)):
                runs.append(Run(line, tuple(words[1:])))
    return runs


def _why_not_run(words: tuple[str, ...]) -> str | None:
    for prefix, reason in PARSE_ONLY.items():
        if words[: len(prefix)] == prefix:
            return reason
    for flag, reason in PARSE_ONLY_FLAGS.items():
        if flag in words:
            return reason
    if words and words[0] in NETWORK_COMMANDS and CLOUD_PROFILES & set(words):
        return "talks to a cloud vendor (needs its API key and the internet)"
    return None


def _concrete(words: tuple[str, ...] | list[str], port: int | None, url: str | None,
              home: Path = Path("~")) -> list[str]:
    """The placeholders filled in and the documented server port moved to the test server's."""
    out: list[str] = []
    for index, word in enumerate(words):
        previous = words[index - 1] if index else ""
        if word == "PATH":
            client = previous.removeprefix("--").removesuffix("-bin")
            word = os.environ.get(CLIENT_BINS.get(client, ""), "/nonexistent/" + client)
        elif word == "URL":
            word = url or "http://127.0.0.1:9"
        elif word in PLACEHOLDERS:
            word = PLACEHOLDERS[word]
        elif word == "FILE":
            word = str(home / ".claude" / "settings.json")
        if port is not None:
            word = word.replace("127.0.0.1:8080", f"127.0.0.1:{port}")
            if previous == "--port" and word == "18080":
                word = str(port)
        out.append(word)
    return out


# --- parsing ----------------------------------------------------------------------------------------


def _parse(parser: argparse.ArgumentParser, argv: list[str]) -> str | None:
    """The argparse error for ``argv`` (None when it parses)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            parser.parse_args(argv)
        except SystemExit as exc:
            if exc.code not in (0, None):
                return err.getvalue().strip().splitlines()[-1]
    return None


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _names_exist(parser: argparse.ArgumentParser, words: list[str]) -> str | None:
    """For a command named in prose: its sub-commands and every flag exist (positionals may be omitted)."""
    current = parser
    for word in words:
        if word.startswith("-"):
            flag = word.split("=", 1)[0]
            if flag not in current._option_string_actions:
                return f"{current.prog} has no option {flag}"
            continue
        children = _subparsers(current)
        if children:
            if word not in children:
                return f"{current.prog} has no sub-command {word!r}"
            current = children[word]
    return None


@pytest.fixture(scope="module")
def parser() -> argparse.ArgumentParser:
    return build_parser()


def test_the_docs_show_commands() -> None:
    """The collector finds the documented commands (an empty list would make every check vacuous)."""
    pages_with_commands = {line.page for line in _kvswitch_lines()}
    assert {"README.md", "docs/commands.md", "docs/verify.md", "docs/gateway.md"} <= pages_with_commands
    assert len(_kvswitch_lines()) > 40


@pytest.mark.parametrize("line", _kvswitch_lines(), ids=lambda line: line.where)
def test_documented_command_parses(parser: argparse.ArgumentParser, line: DocLine) -> None:
    failures = []
    for words in every_expansion(parse_synopsis(line.text)):
        error = _parse(parser, _concrete(words[1:], 18080, "http://127.0.0.1:18080"))
        if error:
            failures.append(f"{line.where}: `{' '.join(words)}`: {error}")
    assert not failures, "stale command in the docs:\n" + "\n".join(failures)


@pytest.mark.parametrize(
    "line",
    [span for page in pages() for span in inline_commands(page)],
    ids=lambda line: f"{line.where} {line.text}"[:100],
)
def test_command_named_in_prose_exists(parser: argparse.ArgumentParser, line: DocLine) -> None:
    for words in every_expansion(parse_synopsis(line.text)):
        error = _names_exist(parser, _concrete(words[1:], None, None))
        assert error is None, f"{line.where}: `{line.text}`: {error}"


def _dev_modes() -> set[str]:
    script = (REPO / "scripts" / "dev.sh").read_text(encoding="utf-8")
    body = script.split('case "$mode" in', 1)[1]
    return {mode for match in re.findall(r"^\s+([a-z|-]+)\)", body, re.M) for mode in match.split("|")}


def test_dev_sh_lines_name_existing_modes() -> None:
    modes = _dev_modes()
    assert {"run", "test"} <= modes
    lines = [line for line in _documented() if line.text.startswith("scripts/dev.sh")]
    spans = [(page.relative_to(REPO).as_posix(), number, span)
             for page in pages()
             for number, text in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
             for span in re.findall(r"`scripts/dev\.sh ([a-z-]+)", text)]
    assert lines
    wrong = [f"{line.where}: {line.text}" for line in lines if line.text.split()[1] not in modes]
    wrong += [f"{page}:{number}: scripts/dev.sh {span}" for page, number, span in spans if span not in modes]
    assert not wrong, f"dev.sh has modes {sorted(modes)}; the docs name others:\n" + "\n".join(wrong)


# --- running ----------------------------------------------------------------------------------------


class MissingComponent(str):
    """Why a run was not made when a real component is missing: a skip locally, a failure under CI
    (``support.require``), unlike the parse-only reasons, which hold everywhere."""


@dataclass
class Page:
    """One page's fresh HOME and the results of its runs so far (they run in order, each once)."""

    name: str
    home: Path
    server: RunningServer
    runs: list[Run]
    results: dict[int, subprocess.CompletedProcess[str] | str] = field(default_factory=dict)

    def env(self) -> dict[str, str]:
        home = self.home
        env = {key: value for key, value in os.environ.items()
               if not key.startswith(("ANTHROPIC_", "OPENAI_", "CLAUDE_", "CODEX_", "XDG_", "KVSWITCH_"))}
        env.update(HOME=str(home), USERPROFILE=str(home), XDG_CONFIG_HOME=str(home / ".config"),
                   XDG_DATA_HOME=str(home / ".local/share"), XDG_STATE_HOME=str(home / ".local/state"),
                   XDG_CACHE_HOME=str(home / ".cache"), NO_COLOR="1", SHELL="/bin/bash")
        # the docs' `--client claude` finds the client on PATH, as a user's shell does
        bins = [os.environ[variable] for variable in CLIENT_BINS.values() if os.environ.get(variable)]
        env["PATH"] = os.pathsep.join([*(str(Path(binary).parent) for binary in bins), env.get("PATH", "")])
        return env

    def result(self, index: int) -> subprocess.CompletedProcess[str] | str:
        for earlier in range(index + 1):
            if earlier not in self.results:
                self.results[earlier] = self._run(self.runs[earlier])
        return self.results[index]

    def _run(self, run: Run) -> subprocess.CompletedProcess[str] | str:
        """The finished process, or why the run was not made."""
        argv = _concrete(run.words, self.server.port, self.server.url, self.home)
        reason = _why_not_run(tuple(argv))
        if reason:
            return reason
        if "--client" in run.words:
            client = run.words[run.words.index("--client") + 1]
            if not os.environ.get(CLIENT_BINS[client]):
                return MissingComponent(f"needs the real {client} binary (set {CLIENT_BINS[client]}, as "
                                        "scripts/dev.sh test does)")
        session = _client_session(tuple(argv))
        if session in _CLIENT_SESSIONS:
            return _CLIENT_SESSIONS[session]
        stdin = FAKE_KEY + "\n" if "--api-key-stdin" in run.words else ""
        timeout = CLIENT_TIMEOUT_S if "--client" in run.words else TIMEOUT_S
        done = subprocess.run([str(KVSWITCH), *argv], cwd=self.home, env=self.env(), input=stdin,
                              capture_output=True, text=True, timeout=timeout, check=False)
        if session:
            _CLIENT_SESSIONS[session] = done
        return done


#: client sessions already run (minutes each): the same session shown on two pages, or once more with
#: only ``--json``/``--csv`` added, is run once and its outcome checked for every line that shows it
_CLIENT_SESSIONS: dict[tuple[str, ...], subprocess.CompletedProcess[str]] = {}


def _client_session(words: tuple[str, ...]) -> tuple[str, ...] | None:
    if "--client" not in words:
        return None
    return tuple(word for word in words if word not in ("--json", "--csv"))


def _prepare_home(home: Path) -> None:
    """The files the pages name: a real server log, real captured requests, an Ollama log."""
    home.mkdir(parents=True, exist_ok=True)
    shutil.copy(FIXTURES / "llama.cpp-b11434" / "llama_server_cc_default.log", home / "server.log")
    shutil.copy(FIXTURES / "pasted-lines" / "ollama.log", home / "ollama.log")
    captures = FIXTURES / "claude-code-2.1.332"
    shutil.copy(captures / "request_attribution_default_1.json", home / "A.json")
    shutil.copy(captures / "request_attribution_default_3.json", home / "B.json")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with llama_server(tmp_path_factory.mktemp("docs-llama")) as running:
        yield running


_PAGES: dict[str, Page] = {}


@pytest.fixture
def page_of(server: RunningServer, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    def get(name: str) -> Page:
        if name not in _PAGES:
            home = tmp_path_factory.mktemp("docs-home-" + Path(name).stem)
            _prepare_home(home)
            _PAGES[name] = Page(name, home, server, _runs(name))
            if not any(run.words[:3] == ("profile", "add", "local") for run in _PAGES[name].runs):
                _PAGES[name].runs[:0] = _first_use_runs()
        return _PAGES[name]

    return get


def _first_use_runs() -> list[Run]:
    """README's first use (add ``local``, use it), for pages that use ``local`` without adding it."""
    readme = [line for line in _kvswitch_lines() if line.page == "README.md"]
    starts = ("kvswitch profile add local ", "kvswitch use local")
    first = [line for line in readme if line.text.startswith(starts)]
    assert len(first) == 2, "README.md's first use no longer adds and uses the profile `local`"
    return [Run(line, tuple(line.text.split()[1:])) for line in first]


def _all_runs() -> list[tuple[str, int]]:
    cases = []
    for page in pages():
        name = page.relative_to(REPO).as_posix()
        runs = _runs(name)
        offset = 0 if any(run.words[:3] == ("profile", "add", "local") for run in runs) else 2
        cases += [(name, index + offset) for index in range(len(runs))]
    return cases


@pytest.mark.real_server
@pytest.mark.parametrize(("page_name", "index"), _all_runs(),
                         ids=[f"{name}#{index}" for name, index in _all_runs()])
def test_documented_command_runs(page_of, page_name: str, index: int) -> None:  # type: ignore[no-untyped-def]
    if not KVSWITCH.is_file():
        component_missing(f"the kvswitch console script is not installed next to {sys.executable} "
                          "(pip install -e '.[test]')")
    page: Page = page_of(page_name)
    run = page.runs[index]
    outcome = page.result(index)
    if isinstance(outcome, MissingComponent):
        component_missing(f"{run.id}: {outcome}")
    if isinstance(outcome, str):
        pytest.skip(f"{run.id}: only parsed: {outcome}")
    shown = f"{run.doc.where}: `kvswitch {' '.join(run.words)}` exited {outcome.returncode}\n" \
            f"stdout: {outcome.stdout[-1500:]}\nstderr: {outcome.stderr[-1500:]}"
    assert "Traceback (most recent call last)" not in outcome.stdout + outcome.stderr, shown
    assert outcome.returncode not in (2, 70), shown
    if run.words[0] == "ps":
        # exit 1 when a running client lacks the active profile's settings (it needs a restart); the process
        # list is the machine's, so a client another program runs here decides it, not this page
        assert outcome.returncode in (0, 1), shown
        assert outcome.returncode == 0 or "restart" in outcome.stdout, shown
        return
    if run.words[0] == "verify" and "--client" in run.words:
        # documented: exit 0 HIT, 1 PARTIAL or MISS; Claude Code 2.1.332's second turn is a partial
        # reuse on the tiny model (its numbers are in the output), so either is the command working
        assert outcome.returncode in (0, 1), shown
        if "--json" in run.words:
            assert json.loads(outcome.stdout)["verdict"] in ("hit", "partial", "miss"), shown
        else:
            assert re.search(r"through profile '[^']+': (HIT|PARTIAL|MISS)", outcome.stdout), shown
        return
    expected = any(page in ("", run.doc.page) and run.words[: len(prefix)] == prefix
                   for page, prefix, _why in EXPECTED_FAILURE)
    assert outcome.returncode == (1 if expected else 0), shown
