"""The recorder as a mode of the gateway (#20 item 8): captures 0600 in a 0700 folder, credentials
masked wherever a client puts them, folded headers never forwarded as they came, and 500 concurrent
connections through the gateway without one reset."""

from __future__ import annotations

import asyncio
import json
import socket
import stat
from collections.abc import Callable
from pathlib import Path

import aiohttp
from gateway_support import Responder, ScriptedUpstream, add_profiles, json_answer, sse_answer

from kvswitch.core.models import Profile
from kvswitch.core.paths import AppPaths
from kvswitch.gateway.recorder import Recorder
from kvswitch.gateway.relay.server import GatewayServer

Make = Callable[[Responder], ScriptedUpstream]
SECRET = "sk-live-0123456789abcdefSECRET"


def _raw_exchange(port: int, request: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request)
        answer = b""
        while piece := sock.recv(65536):
            answer += piece
            if b"\r\n\r\n" in answer and answer.endswith(b"}"):
                break
    return answer


def test_captures_are_private_and_every_credential_is_masked(tmp_path: Path, upstreams: Make) -> None:
    upstream = upstreams(json_answer(b'{"usage":{"input_tokens":1,"cache_read_input_tokens":9}}'))
    folder = tmp_path / "caps"
    body = {"model": "m", "api_key": SECRET, "metadata": {"client_secret": SECRET},
            "messages": [{"role": "user", "content": "the prompt stays"}]}
    with Recorder(upstream.url, folder) as recorder:
        import httpx  # noqa: PLC0415

        answer = httpx.post(f"{recorder.url}/v1/messages?key={SECRET}&beta=true", json=body,
                            headers={"X-Auth-Token": SECRET, "Authorization": f"Bearer {SECRET}"})
        assert answer.status_code == 200
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    files = list(folder.iterdir())
    assert len(files) == 1
    assert stat.S_IMODE(files[0].stat().st_mode) == 0o600
    text = files[0].read_text()
    assert SECRET not in text
    saved = json.loads(text)
    assert saved["path"] == "/v1/messages?key=REDACTED&beta=true"
    assert saved["headers"]["X-Auth-Token"] == "••••••••"
    assert saved["headers"]["Authorization"] == "••••••••"
    assert saved["body"]["api_key"] == "••••••••"
    assert saved["body"]["metadata"]["client_secret"] == "••••••••"
    assert saved["body"]["messages"][0]["content"] == "the prompt stays"
    assert SECRET not in repr(recorder.captures)
    # the upstream got the request as the client sent it: the recorder is transparent
    seen = upstream.seen[-1]
    assert seen.path == f"/v1/messages?key={SECRET}&beta=true"
    assert json.loads(seen.body) == body
    assert recorder.captures[0].cache is not None
    assert recorder.captures[0].cache.cached == 9


def test_folded_headers_are_never_forwarded_as_they_came(tmp_path: Path, upstreams: Make) -> None:
    upstream = upstreams(json_answer(b"{}"))
    request = (b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nX-Folded: first\r\n second\r\n"
               b"Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
    with Recorder(upstream.url, tmp_path / "caps") as recorder:
        answer = _raw_exchange(recorder.port, request)
    # the parser refuses obs-fold outright (RFC 9112 allows refusing it); nothing goes upstream
    assert answer.split(b" ", 2)[1] == b"400"
    assert upstream.seen == []
    assert list((tmp_path / "caps").iterdir()) == []


async def _stream_many(url: str, count: int, headers: dict[str, str]) -> tuple[int, list[str], set[bytes]]:
    connector = aiohttp.TCPConnector(limit=0, force_close=True)
    ok, errors, bodies = 0, [], set()
    async with aiohttp.ClientSession(connector=connector) as session:
        async def one(index: int) -> None:
            nonlocal ok
            try:
                data = json.dumps({"n": index, "stream": True}).encode()
                limit = aiohttp.ClientTimeout(total=120)
                async with session.post(url, data=data, headers=headers, timeout=limit) as response:
                    data = await response.read()
                    if response.status == 200:
                        ok += 1
                        bodies.add(data)
                    else:
                        errors.append(f"HTTP {response.status}")
            except (TimeoutError, aiohttp.ClientError, OSError) as exc:
                errors.append(repr(exc))

        await asyncio.gather(*(one(i) for i in range(count)))
    return ok, errors, bodies


DELTA = b'event: content_block_delta\ndata: {"type":"content_block_delta","delta":{"text":"x"}}\n\n'
EVENTS = [b'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":3}}}\n\n',
          *[DELTA] * 20, b'event: message_stop\ndata: {"type":"message_stop"}\n\n']


def test_500_concurrent_streams_through_the_gateway_without_a_reset(
    paths: AppPaths, gateway: GatewayServer, token: str, upstreams: Make
) -> None:
    upstream = upstreams(sse_answer(EVENTS, pause=0.01))
    add_profiles(paths, Profile(name="fast", kind="llama.cpp", base_url=upstream.url), route="fast")
    url = gateway.url + "/claude/v1/messages"
    ok, errors, bodies = asyncio.run(_stream_many(url, 500, {"x-api-key": token}))
    assert errors == []
    assert ok == 500
    assert bodies == {b"".join(EVENTS)}
    assert len(upstream.seen) == 500


def test_500_concurrent_streams_through_the_recorder_without_a_reset(tmp_path: Path, upstreams: Make) -> None:
    upstream = upstreams(sse_answer(EVENTS, pause=0.01))
    with Recorder(upstream.url, tmp_path / "caps") as recorder:
        ok, errors, bodies = asyncio.run(_stream_many(recorder.url + "/v1/messages", 500, {}))
    assert errors == []
    assert ok == 500
    assert bodies == {b"".join(EVENTS)}
    assert len(recorder.captures) == 500
    assert len(list((tmp_path / "caps").iterdir())) == 500


def test_custom_token_and_signature_headers_and_signed_queries_are_masked(
    tmp_path: Path, upstreams: Make
) -> None:
    """#28 item 4: a gateway's own header (``X-Custom-Token``) and a cloud's signed request
    (``X-Amz-Signature``, ``X-Amz-Security-Token``, in headers and in the query) hold credentials too."""
    import httpx  # noqa: PLC0415

    upstream = upstreams(json_answer(b"{}"))
    folder = tmp_path / "caps"
    with Recorder(upstream.url, folder) as recorder:
        answer = httpx.post(f"{recorder.url}/v1/messages?X-Amz-Signature={SECRET}&X-Amz-Date=20260101",
                            json={"model": "m"},
                            headers={"X-Custom-Token": SECRET, "X-Amz-Signature": SECRET,
                                     "X-Amz-Security-Token": SECRET, "anthropic-version": "2023-06-01"})
        assert answer.status_code == 200
    assert upstream.seen[-1].path.endswith(f"X-Amz-Signature={SECRET}&X-Amz-Date=20260101")  # forwarded
    text = next(folder.iterdir()).read_text()
    assert SECRET not in text
    saved = json.loads(text)
    assert saved["path"] == "/v1/messages?X-Amz-Signature=REDACTED&X-Amz-Date=20260101"
    for name in ("X-Custom-Token", "X-Amz-Signature", "X-Amz-Security-Token"):
        assert saved["headers"][name] == "••••••••", name
    assert saved["headers"]["anthropic-version"] == "2023-06-01"  # not a credential: shown


def test_the_banner_and_the_502_never_show_the_upstream_password(fake_home: Path, tmp_path: Path) -> None:
    """#28 item 4: ``kvswitch record --upstream http://user:PASSWORD@host`` printed the password."""
    import os  # noqa: PLC0415
    import subprocess  # noqa: PLC0415
    import sys  # noqa: PLC0415

    import httpx  # noqa: PLC0415

    password = "pw-3c9e7f1a22qq"
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    import kvswitch  # noqa: PLC0415 - the child runs the very tree under test

    env = {**os.environ, "HOME": str(fake_home), "PYTHONPATH": str(Path(kvswitch.__file__).parents[1])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "kvswitch", "record", "--upstream", f"http://user:{password}@127.0.0.1:{port}",
         "--max-requests", "1", "--captures", str(tmp_path / "caps")],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        assert proc.stdout is not None
        banner = proc.stdout.readline().decode()
        assert banner.startswith("Recording on http://127.0.0.1:"), banner
        recorder_url = banner.split()[2]
        answer = httpx.post(recorder_url + "/v1/messages", json={"model": "m"}, timeout=30)
        rest, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert answer.status_code == 502
    shown = banner + rest.decode() + answer.text + "".join(
        file.read_text() for file in (tmp_path / "caps").iterdir())
    assert "user:REDACTED@127.0.0.1" in banner
    assert password not in shown
