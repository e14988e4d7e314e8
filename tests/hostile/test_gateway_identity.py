"""``gateway status`` and ``doctor`` against what really answers on the gateway's port: another program
(answering JSON to everything, or 401), this user's gateway after its token file was removed, a
gateway of another KV Switch configuration (another token), a world-readable token file, the clients'
files left on an old port by ``gateway run --listen`` elsewhere, and a second gateway on ``[::1]``
that stops. Real ``kvswitch`` subprocesses and real ``kvswitch gateway run`` processes on loopback,
real files in the temporary HOME; the "other program" is a scripted server (no real one answers as
a hostile one would on demand)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from aiohttp import web

from kvswitch.core.gateway_config import load_token, token_file
from kvswitch.core.paths import AppPaths
from kvswitch.gateway.control import remember_listen
from support.gateway import gateway_process
from support.net import free_port

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "gateway"))
from gateway_support import ScriptedUpstream  # noqa: E402


def _kvswitch(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "kvswitch", *argv], env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode != 70, done.stderr
    assert "Traceback" not in done.stderr
    return done


def _status(env: dict[str, str]) -> dict[str, object]:
    return json.loads(_kvswitch(env, "gateway", "status", "--json").stdout)  # type: ignore[no-any-return]


def _gateway_profile(env: dict[str, str], name: str = "a") -> None:
    added = _kvswitch(env, "profile", "add", name, "--kind", "llama.cpp", "--base-url", "http://127.0.0.1:9",
                      "--model", "m", "--target", "claude", "--target", "codex", "--via-gateway",
                      "--context-window", "32768")
    assert added.returncode == 0, added.stderr
    assert _kvswitch(env, "use", name).returncode == 0


@pytest.fixture
def impostor() -> Iterator[tuple[ScriptedUpstream, list[int]]]:
    """Another program on the gateway's port: JSON to every request, with the status it is told."""
    answer = [200]

    async def any_json(request: web.Request, body: bytes) -> web.StreamResponse:
        return web.json_response({"running": True, "ok": True}, status=answer[0])

    made = ScriptedUpstream(any_json)
    yield made, answer
    made.close()


@pytest.mark.parametrize("status_code", [200, 401], ids=["json-to-everything", "401"])
def test_another_program_on_the_port_is_not_called_the_gateway_nor_sent_the_token(
    child_env: dict[str, str], impostor: tuple[ScriptedUpstream, list[int]], status_code: int
) -> None:
    program, answer = impostor
    answer[0] = status_code
    paths = AppPaths.default()
    remember_listen(paths, "127.0.0.1", program.port)
    _gateway_profile(child_env)
    token = load_token(paths)
    assert token is not None
    status = _status(child_env)
    assert status["running"] is False
    assert status["identity"] == "foreign"
    said = _kvswitch(child_env, "gateway", "status")
    assert said.returncode == 1
    assert "another program answers" in said.stdout
    doctor = _kvswitch(child_env, "doctor")
    assert doctor.returncode == 1
    assert "everything looks fine" not in doctor.stdout
    assert "another program answers" in doctor.stdout
    assert program.seen, "nothing asked the program"
    for request in program.seen:
        assert all(token not in value for _, value in request.headers), request.headers
        assert token not in request.path


def test_a_removed_token_file_is_not_reissued_by_a_read_and_the_gateway_follows_the_new_one(
    child_env: dict[str, str], fake_home: Path, tmp_path: Path
) -> None:
    paths = AppPaths.default()
    port = free_port()
    with gateway_process(fake_home, port, tmp_path / "gateway.log"):
        _gateway_profile(child_env)
        assert _status(child_env)["running"] is True
        old = load_token(paths)
        token_file(paths).unlink()
        status = _status(child_env)
        assert not token_file(paths).exists()  # a read issues nothing
        assert status["identity"] == "no-token"
        assert "token file is missing" in _kvswitch(child_env, "doctor").stdout
        assert _kvswitch(child_env, "use", "a", "--rewrite-files").returncode == 0  # issues a new token
        new = load_token(paths)
        assert new is not None
        assert new != old
        settings = json.loads((fake_home / ".claude" / "settings.json").read_text())
        assert settings["env"]["ANTHROPIC_AUTH_TOKEN"] == new
        # the running gateway checks the token the clients now hold (no restart): not 401
        answer = httpx.get(f"http://127.0.0.1:{port}/_kvswitch/status", headers={"x-api-key": new},
                           timeout=10)
        assert answer.status_code == 200
        assert _status(child_env)["running"] is True
        doctor = _kvswitch(child_env, "doctor").stdout
        assert "token" not in doctor, doctor


def test_a_gateway_holding_another_token_is_named_so(
    child_env: dict[str, str], fake_home: Path, tmp_path: Path
) -> None:
    port = free_port()
    other_config = tmp_path / "other-config"
    elsewhere = {"KVSWITCH_CONFIG_DIR": str(other_config)}
    with gateway_process(fake_home, port, tmp_path / "gateway.log", env=elsewhere):
        remember_listen(AppPaths.default(), "127.0.0.1", port)
        _gateway_profile(child_env)
        status = _status(child_env)
        assert status["running"] is False
        assert status["identity"] == "other-token"
        doctor = _kvswitch(child_env, "doctor")
        assert "checks another local token" in doctor.stdout
        assert "401" in doctor.stdout


def test_a_world_readable_token_file_is_flagged(child_env: dict[str, str]) -> None:
    _gateway_profile(child_env)
    path = token_file(AppPaths.default())
    os.chmod(path, 0o644)
    said = _kvswitch(child_env, "gateway", "status")
    assert f"chmod 600 {path}" in said.stdout
    assert f"chmod 600 {path}" in _kvswitch(child_env, "doctor").stdout


def test_clients_left_on_the_old_port_after_listen_elsewhere_are_found(
    child_env: dict[str, str], fake_home: Path, tmp_path: Path
) -> None:
    first, second = free_port(), free_port()
    with gateway_process(fake_home, first, tmp_path / "first.log"):
        _gateway_profile(child_env)
        assert "everything looks fine" in _kvswitch(child_env, "doctor").stdout
    with gateway_process(fake_home, second, tmp_path / "second.log"):
        started = (tmp_path / "second.log").read_text()
        assert f"still points Claude Code at http://127.0.0.1:{first}; run 'kvswitch use a'" in started
        doctor = _kvswitch(child_env, "doctor")
        assert doctor.returncode == 1
        assert f"at http://127.0.0.1:{first}, but the gateway's address is now http://127.0.0.1:{second}" \
            in doctor.stdout
        assert f"at http://127.0.0.1:{first}, where client files point, nothing answers" in doctor.stdout
        assert _kvswitch(child_env, "use", "a").returncode == 0  # writes the new address
        settings = json.loads((fake_home / ".claude" / "settings.json").read_text())
        assert settings["env"]["ANTHROPIC_BASE_URL"] == f"http://127.0.0.1:{second}/claude"
        assert "everything looks fine" in _kvswitch(child_env, "doctor").stdout


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as sock:
            sock.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.mark.skipif(not _ipv6_loopback(), reason="this machine has no IPv6 loopback")
def test_status_after_a_second_gateway_on_ipv6_loopback_stops(
    child_env: dict[str, str], fake_home: Path, tmp_path: Path
) -> None:
    first, second = free_port(), free_port()
    with gateway_process(fake_home, first, tmp_path / "first.log"):
        with gateway_process(fake_home, second, tmp_path / "second.log", host="::1"):
            assert _status(child_env)["url"] == f"http://[::1]:{second}"
        status = _status(child_env)
        assert status["running"] is True
        assert status["url"] == f"http://127.0.0.1:{first}"
        problems = " ".join(str(p) for p in status["problems"])  # type: ignore[attr-defined]
        assert f"names http://[::1]:{second}" in problems
    assert _status(child_env)["running"] is False


def test_a_program_relaying_the_real_gateway_is_not_taken_for_it(
    child_env: dict[str, str], fake_home: Path, tmp_path: Path
) -> None:
    """A program on the address the clients use, passing the identity question on to the real gateway
    on another port: the proof is bound to the port it was asked on, so the relay gets no token."""
    real = free_port()

    async def relay(request: web.Request, body: bytes) -> web.StreamResponse:
        async with httpx.AsyncClient() as client:
            answer = await client.request(request.method, f"http://127.0.0.1:{real}{request.path_qs}",
                                          headers={k: v for k, v in request.headers.items() if k != "Host"})
        return web.Response(status=answer.status_code, body=answer.content, content_type="application/json")

    program = ScriptedUpstream(relay)
    try:
        with gateway_process(fake_home, real, tmp_path / "gateway.log"):
            remember_listen(AppPaths.default(), "127.0.0.1", program.port)
            _gateway_profile(child_env)
            token = load_token(AppPaths.default())
            assert token is not None
            status = _status(child_env)
            assert status["url"] == f"http://127.0.0.1:{real}"  # the real one, found by its record
            problems = " ".join(str(p) for p in status["problems"])  # type: ignore[attr-defined]
            assert f"http://127.0.0.1:{program.port}" in problems
            assert "relays" in problems
            assert program.seen
            for request in program.seen:
                assert all(token not in value for _, value in request.headers)
    finally:
        program.close()
