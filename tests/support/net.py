"""Loopback networking for tests."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from http.server import HTTPServer


def free_port() -> int:
    """A loopback port nothing listens on right now (the OS picks it, so parallel runs don't clash)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def serving(server: HTTPServer) -> Iterator[str]:
    """``server`` answering on a daemon thread until the block ends; its ``http://127.0.0.1:PORT`` URL."""
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
