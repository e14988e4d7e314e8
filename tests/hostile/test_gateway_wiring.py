"""Clients sent where nothing serves them, found by a user who wires profiles the wrong way round:
every client target a profile writes must land on a route that serves it (refused at ``profile
add/edit``), the shell targets of a Codex-only gateway profile leave Claude Code alone, and Codex
through the gateway finds the local token without a shell (the real Codex 0.169.0 and, when
installed, 0.171.0, against a real ``kvswitch gateway run``). Real ``kvswitch`` subprocesses on real
files in the temporary HOME."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiohttp import web

from kvswitch.core.gateway_config import load_token
from kvswitch.core.paths import AppPaths
from support.clients import codex_binary
from support.gateway import gateway_process
from support.llama import CACHE
from support.net import free_port

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "gateway"))
from gateway_support import ScriptedUpstream  # noqa: E402

MARKER = "kvswitch-hostile-upstream-was-reached"


def _kvswitch(env: dict[str, str], *argv: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "kvswitch", *argv], env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    if ok:
        assert done.returncode == 0, done.stdout + done.stderr
    return done


def _refused(done: subprocess.CompletedProcess[str], *words: str) -> None:
    assert done.returncode not in (0, 70), done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    for word in words:
        assert word in done.stderr, done.stderr


@pytest.fixture
def upstream() -> Iterator[ScriptedUpstream]:
    """An upstream that refuses every request with a 400 naming itself: Codex prints the message and
    stops (a 4xx is not retried), so its output says whether the gateway let it through."""
    async def refuse(request: web.Request, body: bytes) -> web.StreamResponse:
        return web.json_response({"error": {"message": MARKER, "type": "invalid_request_error"}}, status=400)

    made = ScriptedUpstream(refuse)
    yield made
    made.close()


def test_a_codex_only_gateway_profile_leaves_claude_code_alone_in_new_shells(
    child_env: dict[str, str], fake_home: Path
) -> None:
    _kvswitch(child_env, "profile", "add", "cx", "--kind", "llama.cpp", "--base-url", "http://127.0.0.1:9",
              "--model", "m", "--target", "codex", "--target", "bash", "--via-gateway")
    _kvswitch(child_env, "use", "cx")
    shell = {k: v for k, v in child_env.items() if k in ("PATH", "HOME", "LANG")}
    seen = subprocess.run(["bash", "-c", '. "$HOME/.bashrc"; printf "%s|%s" "${ANTHROPIC_BASE_URL-unset}" '
                           '"${ANTHROPIC_AUTH_TOKEN-unset}"'], env=shell, capture_output=True, text=True,
                          timeout=30, check=True)
    assert seen.stdout == "unset|unset"  # Claude Code in a new shell keeps the user's own settings
    doctor = _kvswitch(child_env, "doctor", ok=False)
    assert "Claude Code at the gateway" not in doctor.stdout


@pytest.mark.parametrize(("targets", "extra", "words"), [
    (["opencode"], ["--via-gateway"], ["OpenCode through the gateway", "--direct"]),
    (["claude"], ["--protocol", "openai_responses"],
     ["no gateway bridge turns anthropic into openai_responses"]),
    (["codex"], ["--protocol", "anthropic"], ["no gateway bridge turns openai_responses into anthropic"]),
    (["codex"], ["--via-gateway", "--fallback", "NOSUCH"], ["fallback 'NOSUCH' is not a profile"]),
], ids=["opencode-via-gateway", "claude-as-responses", "codex-as-messages", "fallback-nosuch"])
def test_a_profile_whose_client_nothing_serves_is_refused(
    child_env: dict[str, str], targets: list[str], extra: list[str], words: list[str]
) -> None:
    flags = [part for target in targets for part in ("--target", target)]
    added = _kvswitch(child_env, "profile", "add", "p", "--kind", "llama.cpp", "--base-url",
                      "http://127.0.0.1:9", *flags, *extra, ok=False)
    _refused(added, *words)
    assert json.loads(_kvswitch(child_env, "profile", "list", "--json").stdout) == []
    _kvswitch(child_env, "profile", "add", "p", "--kind", "llama.cpp", "--base-url", "http://127.0.0.1:9",
              *flags)
    _refused(_kvswitch(child_env, "profile", "edit", "p", *extra, ok=False), *words)


def test_a_bridge_that_exists_and_a_fallback_that_exists_are_accepted(child_env: dict[str, str]) -> None:
    _kvswitch(child_env, "profile", "add", "b", "--kind", "llama.cpp", "--base-url", "http://127.0.0.1:8")
    done = _kvswitch(child_env, "profile", "add", "a", "--kind", "llama.cpp", "--base-url", "http://127.0.0.1:9",
                     "--protocol", "openai_chat", "--via-gateway", "--fallback", "B")
    shown = _kvswitch(child_env, "profile", "show", "a").stdout
    assert "fallbacks: b" in shown  # spelled as the profile is, which is how the gateway looks it up
    assert "bridged anthropic -> openai_chat" in shown, done.stdout


@pytest.mark.parametrize("backend", [["--preset", "deepseek"], ["--kind", "anthropic"]],
                         ids=["preset", "kind"])
def test_a_keyless_gateway_profile_is_warned_about_the_gateway_not_the_login(
    child_env: dict[str, str], backend: list[str]
) -> None:
    done = _kvswitch(child_env, "profile", "add", "ds", *backend, "--via-gateway")
    said = done.stdout + done.stderr
    assert "Claude login" not in said
    assert "the gateway forwards the clients' requests" in said
    assert "401" in said


def _codex_binaries() -> list[Path]:
    found = [codex_binary()]
    newer = Path(os.environ.get("KVSWITCH_CODEX_NEW_BIN") or CACHE / "codex" / "0.171.0" / "node_modules" /
                 "@openai" / "codex-linux-x64" / "vendor" / "x86_64-unknown-linux-musl" / "bin" / "codex")
    if newer.is_file():
        found.append(newer)
    return found


@pytest.mark.real_server
def test_codex_through_the_gateway_needs_no_shell_for_the_token(
    child_env: dict[str, str], fake_home: Path, tmp_path: Path, upstream: ScriptedUpstream
) -> None:
    port = free_port()
    with gateway_process(fake_home, port, tmp_path / "gateway.log"):
        _kvswitch(child_env, "profile", "add", "cx", "--kind", "llama.cpp", "--base-url", upstream.url,
                  "--model", "m", "--target", "codex", "--via-gateway")
        applied = _kvswitch(child_env, "use", "cx")
        assert "export it yourself" not in applied.stderr
        token = load_token(AppPaths.default())
        assert token is not None
        config = fake_home / ".codex" / "config.toml"
        assert oct(config.stat().st_mode & 0o777) == "0o600"  # it holds the local token now
        project = tmp_path / "project"
        project.mkdir()
        for binary in _codex_binaries():
            # what a desktop launcher or an IDE gives Codex: no shell start-up file, no KVSWITCH_API_KEY
            bare = {"HOME": str(fake_home), "PATH": "/usr/bin:/bin", "CODEX_HOME": str(fake_home / ".codex")}
            done = subprocess.run([str(binary), "exec", "--skip-git-repo-check", "Say hi."], cwd=project,
                                  env=bare, capture_output=True, text=True, timeout=180,
                                  stdin=subprocess.DEVNULL, check=False)
            said = done.stdout + done.stderr
            assert "Missing environment variable" not in said, (binary, said[-2000:])
            # a 401 status, not the digits inside a session id's hex (a fresh-clone CI run met "...958401c9")
            assert not re.search(r"(?<![0-9A-Za-z-])401(?![0-9A-Za-z-])", said), said[-2000:]
            assert MARKER in said, (binary, said[-2000:])  # through the gateway to the backend and back
        assert upstream.seen, "nothing reached the backend"
        for request in upstream.seen:  # the local token stays between Codex and the gateway
            assert all(token not in value for _, value in request.headers)


def test_a_profile_saved_before_the_check_is_refused_by_use_and_named_by_doctor(
    child_env: dict[str, str], fake_home: Path
) -> None:
    from kvswitch.core.models import Profile, ProfileKind  # noqa: PLC0415
    from kvswitch.core.store import ProfileStore  # noqa: PLC0415

    # what an older version let through: OpenCode and Claude Code through the gateway, one bad bridge
    ProfileStore(AppPaths.default()).add(Profile(
        name="old", kind=ProfileKind.LLAMA_CPP, base_url="http://127.0.0.1:9", model="m",
        targets=["claude", "opencode"], via_gateway=True, protocol="openai_responses"))
    used = _kvswitch(child_env, "use", "old", ok=False)
    _refused(used, "no route for OpenCode")
    assert not (fake_home / ".config" / "opencode" / "opencode.json").exists()
    doctor = _kvswitch(child_env, "doctor", ok=False)
    assert doctor.returncode == 1
    assert "[no-route]" in doctor.stdout
    assert "OpenCode through the gateway" in doctor.stdout
    assert "no gateway bridge turns anthropic into openai_responses" in doctor.stdout


def test_doctor_names_a_client_file_whose_gateway_route_has_no_profile(child_env: dict[str, str]) -> None:
    _kvswitch(child_env, "profile", "add", "a", "--kind", "llama.cpp", "--base-url", "http://127.0.0.1:9",
              "--target", "claude", "--via-gateway")
    _kvswitch(child_env, "use", "a")
    _kvswitch(child_env, "profile", "remove", "a")
    doctor = _kvswitch(child_env, "doctor", ok=False)
    assert doctor.returncode == 1
    assert "routes it to profile 'a', which no longer exists: every request gets 503" in doctor.stdout
