"""``kvswitch record``: a recording proxy between a client and its server, headless.

Every request is forwarded unchanged and stored (keys masked); each one is compared with the one
before, in bytes at once and, when the upstream can render prompts, in its own tokens a moment later.
"""

from __future__ import annotations

import argparse
import queue
import threading
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from kvswitch.commands.common import out, paths_from, store_from
from kvswitch.core.errors import UsageError


def register(subparsers: Any) -> None:
    record = subparsers.add_parser(
        "record",
        help="run a recording proxy: store each request and show divergences live",
        description="Point the client at the recorder; it forwards to the upstream unchanged (streaming "
        "byte for byte), stores every request body with keys masked, and prints how each one "
        "differs from the previous. Stop with Ctrl-C.",
    )
    record.add_argument(
        "--listen", default="127.0.0.1:0", help="HOST:PORT (default 127.0.0.1:0 = any free port)"
    )
    record.add_argument("--upstream", help="the server to forward to (e.g. http://127.0.0.1:8080)")
    record.add_argument("--profile", help="use this profile's base URL as the upstream")
    record.add_argument(
        "--captures", type=Path, help="directory for the captures (default: in KV Switch's data)"
    )
    record.add_argument("--allow-remote", action="store_true", help="allow a non-loopback --listen address")
    record.add_argument(
        "--max-requests", type=_count, default=None, help="stop after this many requests"
    )
    record.set_defaults(func=_record)


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value <= 0:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _record(args: argparse.Namespace) -> int:
    from kvswitch.verify.recorder import Capture, Recorder, parse_listen  # noqa: PLC0415

    if bool(args.upstream) == bool(args.profile):
        raise UsageError("give exactly one of --upstream URL or --profile NAME")
    upstream = args.upstream or store_from(args).get(args.profile).base_url
    host, port = parse_listen(args.listen, args.allow_remote)
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    captures = args.captures or paths_from(args).data_dir / "captures" / stamp
    done = threading.Event()
    seen = [0]

    tokens = TokenFollower(upstream, out)

    def show(capture: Capture) -> None:
        out(capture.summary())
        tokens.follow(capture)
        seen[0] += 1
        if args.max_requests is not None and seen[0] >= args.max_requests:
            done.set()

    recorder = Recorder(
        upstream, captures, host=host, port=port, allow_remote=args.allow_remote, on_capture=show
    )
    recorder.start()
    out(f"Recording on {recorder.url} -> {recorder.upstream}; captures in {captures}")
    out(f"Point the client at it, e.g. ANTHROPIC_BASE_URL={recorder.url}   (Ctrl-C stops)")
    try:
        while not done.wait(0.2):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        recorder.stop()
        tokens.stop()
    out(f"Stopped after {len(recorder.captures)} request(s).")
    return 0


class TokenFollower:
    """Says, for each recorded request, what the upstream can reuse from the one before, in its own tokens.

    Rendering two long prompts takes the server a moment, so it runs on its own thread: the proxy
    never waits for it. After the first request the upstream cannot render, it stays quiet.
    """

    def __init__(self, upstream: str, show: Callable[[str], None]) -> None:
        self.upstream, self.show = upstream, show
        self.last: dict[str, Any] = {}
        self.jobs: queue.Queue[tuple[int, int, Any, Any] | None] = queue.Queue()
        self.thread = threading.Thread(target=self._run, name="kvswitch-token-diagnosis", daemon=True)
        self.thread.start()

    def follow(self, capture: Any) -> None:
        if not isinstance(capture.body, dict) or capture.method != "POST":
            return
        route = capture.path.split("?")[0]
        prior = self.last.get(route)
        self.last[route] = (capture.number, capture.body)
        if prior is not None:
            self.jobs.put((prior[0], capture.number, prior[1], capture.body))

    def stop(self) -> None:
        self.jobs.put(None)
        self.thread.join(timeout=30)

    def _run(self) -> None:
        from kvswitch.verify.tokendiag import RenderError, ServerRenderer, diagnose_tokens  # noqa: PLC0415

        while (job := self.jobs.get()) is not None:
            before, number, a, b = job
            try:
                diag = diagnose_tokens(ServerRenderer(self.upstream, timeout=60), a, b)
            except RenderError:
                return  # this upstream cannot render: the byte diagnosis above is all there is
            where = f", the prompts part at token {diag.divergence_token} in {diag.part}"
            where = "" if diag.reusable else where
            self.show(f"    #{number} vs #{before} in the server's tokens: {diag.shared_tokens} of "
                      f"{diag.tokens_b} reusable{where}")
