"""The recorder: the gateway in a mode that forwards everything, unchanged, to one fixed upstream and
keeps a masked copy of each request.

The client (Claude Code, Codex) is pointed at the recorder instead of the server; every request goes
on byte for byte with the client's own credentials, and the answer streams back as it arrives (time
to first token untouched). Each request body is stored as a JSON capture (0600 files in a 0700
folder) with every credential masked through ``kvswitch.core.redact``: headers, ``?key=``-style query
parameters, ``api_key``-style body fields. The verify layer adds its prefix diagnosis on top (see
``kvswitch.verify.recorder``) by overriding ``make_capture``.

It listens on loopback only unless explicitly allowed: it forwards whatever it receives with the
client's credentials, which must not become an open relay on a network. The limits are the gateway's
(``kvswitch.gateway.relay.forward``).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from aiohttp import web

from kvswitch.core.addresses import check_url_port
from kvswitch.core.errors import UsageError
from kvswitch.core.fsutil import SECRET_MODE
from kvswitch.core.http import check_timeout
from kvswitch.core.models import Profile, validate_base_url
from kvswitch.core.redact import mask_headers, mask_json, mask_query, mask_text, mask_url
from kvswitch.gateway.relay.forward import (
    CLIENT_IDLE_SECONDS,
    MAX_RESPONSE_BODY,
    MAX_RESPONSE_SECONDS,
    MB,
    Attempt,
    BodyRefused,
    Limits,
    deadline_message,
    open_upstream,
    parse_json_body,
    read_body,
    refuse,
    relay,
    upstream_headers,
)
from kvswitch.gateway.relay.server import GatewayServer, Handler
from kvswitch.servers.answers import response_reading
from kvswitch.servers.base import Reading

RESPONSE_SAMPLE = 4 * MB  # bytes of each answer kept to read its cache numbers
FOLDER_MODE = 0o700

CaptureT = TypeVar("CaptureT")


@dataclass(frozen=True)
class Recorded:
    """One forwarded request as stored: masked headers, path and body, and the answer's head."""

    number: int
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    file: Path
    status: int | None
    cache: Reading | None
    response_sample: bytes
    first_byte_ms: float | None


def routed_profile(profile: Profile, recorder_url: str) -> Profile:
    """The same profile sent through a recorder whose upstream is the profile's own base URL."""
    return profile.model_copy(update={"base_url": validate_base_url(recorder_url)}, deep=True)


class _RecorderHandler(Handler):
    def __init__(self, owner: BaseRecorder[Any], limits: Limits):
        self.owner = owner
        self.limits = limits

    async def handle(self, request: web.Request) -> web.StreamResponse:
        owner = self.owner
        try:
            raw = await read_body(request, self.limits.max_request_body)
            headers = upstream_headers(request.headers.items())
        except BodyRefused as exc:
            return refuse(exc.status, f"recorder: {exc.message}")
        target = owner.target + request.rel_url.raw_path_qs
        attempt = Attempt(target)
        started = time.monotonic()
        what = f"upstream {owner.upstream}"
        stored = False

        async def store() -> None:
            nonlocal stored
            if stored:
                return
            stored = True
            status = attempt.status if attempt.committed else 502
            await asyncio.get_running_loop().run_in_executor(
                owner._writer, owner.record, request.method, request.rel_url.raw_path_qs,
                dict(request.headers.items()), raw, status, attempt.sample(), attempt.first_byte_ms,
            )

        answer: web.StreamResponse
        try:
            async with asyncio.timeout(self.limits.max_response_seconds):
                response = await open_upstream(self.session, request.method, target, headers, raw, attempt,
                                               self.limits.first_byte, started)
                if response is None:
                    answer = refuse(502, f"recorder: upstream {owner.upstream} failed: {attempt.error}")
                else:
                    answer = await relay(request, response, attempt, self.limits, started, before_end=store)
        except TimeoutError:
            if attempt.committed:
                attempt.cut = deadline_message(self.limits, what)
                transport = request.transport
                if transport is not None:
                    transport.close()
                answer = web.StreamResponse()
            else:
                attempt.status = None
                answer = refuse(502, f"recorder: upstream {owner.upstream} failed: "
                                     f"{deadline_message(self.limits, what)}")
        await store()  # a refused or cut answer: stored before the client sees its end
        return answer


class BaseRecorder(Generic[CaptureT]):
    """Start with ``start()`` (a background thread), stop with ``stop()``; ``url`` is where clients go.

    ``on_capture(capture)`` is called after each request has been answered; ``captures`` lists them.
    """

    def __init__(
        self,
        upstream: str,
        captures_dir: Path,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        allow_remote: bool = False,
        on_capture: Callable[[CaptureT], None] | None = None,
        upstream_timeout: float = 900.0,
        max_response_seconds: float = MAX_RESPONSE_SECONDS,
        max_response_bytes: int = MAX_RESPONSE_BODY,
        client_idle_timeout: float = CLIENT_IDLE_SECONDS,
    ):
        try:
            #: where requests go (it may carry ``user:password@``); ``upstream`` is how it is shown
            self.target = check_url_port(validate_base_url(upstream))
            idle = check_timeout(upstream_timeout, "upstream timeout")
            limits = Limits(
                max_response_bytes=max_response_bytes,
                max_response_seconds=check_timeout(max_response_seconds, "answer time limit"),
                upstream_idle=idle,
                # one upstream, nothing to fail over to: its headers get the time of any other read
                first_byte=idle,
                client_idle=check_timeout(client_idle_timeout, "client idle timeout"),
                sample_bytes=RESPONSE_SAMPLE,
            )
        except ValueError as exc:
            raise UsageError(f"--upstream: {mask_text(str(exc))}") from None
        #: the upstream as every banner, error and capture shows it (``redact.mask_url``)
        self.upstream = mask_url(self.target)
        self.upstream_timeout = limits.upstream_idle
        self.max_response_seconds = limits.max_response_seconds
        self.max_response_bytes = max_response_bytes
        self.client_idle_timeout = limits.client_idle
        self.captures_dir = Path(captures_dir)
        self.on_capture = on_capture
        self.captures: list[CaptureT] = []
        self._counter = itertools.count(1)
        self._lock = threading.Lock()
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kvswitch-recorder")
        self._server = GatewayServer(_RecorderHandler(self, limits), host=host, port=port,
                                     allow_remote=allow_remote)

    @property
    def host(self) -> str:
        return self._server.host

    @property
    def port(self) -> int:
        try:
            return self._server.port
        except RuntimeError:
            raise RuntimeError("recorder not started") from None

    @property
    def url(self) -> str:
        return self._server.url

    def start(self) -> BaseRecorder[CaptureT]:
        try:
            self.captures_dir.mkdir(parents=True, exist_ok=True, mode=FOLDER_MODE)
            os.chmod(self.captures_dir, FOLDER_MODE)  # captures hold prompts: the owner's alone
        except OSError as exc:
            raise UsageError(
                f"cannot create the captures directory {self.captures_dir}: {exc.strerror}"
            ) from None
        self._server.start()
        return self

    def stop(self, drain: float = 5.0) -> None:
        """Stop listening, then give requests in flight up to ``drain`` seconds to finish and be stored."""
        self._server.drain_seconds = drain
        self._server.stop()
        self._writer.shutdown(wait=True)
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kvswitch-recorder")

    def __enter__(self) -> BaseRecorder[CaptureT]:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- on the writer thread ----------------------------------------------------------------------
    def record(
        self,
        method: str,
        path: str,
        headers: dict[str, str],
        raw: bytes,
        status: int | None,
        response_sample: bytes,
        first_byte_ms: float | None = None,
    ) -> CaptureT:
        with self._lock:
            number = next(self._counter)
        parsed = parse_json_body(raw)
        body: Any = parsed if parsed is not None or not raw else raw.decode("utf-8", errors="replace")
        masked_body = mask_json(body)
        data = {
            "n": number,
            "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "method": method,
            "path": mask_query(path),
            "headers": mask_headers(headers),
            "body": masked_body,
            "response_status": status,
        }
        file = self.captures_dir / f"request_{number:04d}.json"
        with contextlib.suppress(OSError, ValueError):
            _write_private(file, (json.dumps(data, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))
        recorded = Recorded(number, method, data["path"], data["headers"], masked_body, file, status,
                            response_reading(response_sample), response_sample, first_byte_ms)
        capture = self.make_capture(recorded)
        with self._lock:
            self.captures.append(capture)
        if self.on_capture is not None:
            with contextlib.suppress(Exception):
                self.on_capture(capture)
        return capture

    def make_capture(self, recorded: Recorded) -> CaptureT:
        """What ``captures`` holds for one request (the verify layer adds its diagnosis here)."""
        raise NotImplementedError


def _write_private(file: Path, data: bytes) -> None:
    """A capture, created 0600 (never readable by others, not even for an instant); a capture is a
    diagnostic copy, so it is not fsynced like the user's own files."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(file, flags, SECRET_MODE)
    with os.fdopen(fd, "wb") as handle:
        os.chmod(file, SECRET_MODE)  # a file left from an earlier run keeps no wider mode
        handle.write(data)


class Recorder(BaseRecorder[Recorded]):
    """The recorder on its own: captures are ``Recorded`` (for callers below the verify layer)."""

    def make_capture(self, recorded: Recorded) -> Recorded:
        return recorded
