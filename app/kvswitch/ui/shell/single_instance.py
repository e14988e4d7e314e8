"""One KV Switch per user and config dir: a second launch asks the first to show itself and exits.

The socket name is a hash of the user and the config dir, so two users (or a test with its own config
dir) never collide. A socket left behind by a crashed instance is detected (nobody answers) and removed.
"""

from __future__ import annotations

import getpass
import logging
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtNetwork import QAbstractSocket, QLocalServer, QLocalSocket

log = logging.getLogger("kvswitch.ui.ipc")

CONNECT_TIMEOUT_MS = 500


def _sha256(data: bytes) -> Any:
    """SHA-256 without ``hashlib``, whose OpenSSL load costs 5-15 ms before the window can show."""
    try:
        from _sha256 import sha256  # type: ignore[import-not-found]  # noqa: PLC0415  (CPython 3.11)
    except ImportError:
        try:
            from _sha2 import sha256  # type: ignore[import-not-found]  # noqa: PLC0415  (3.12+)
        except ImportError:
            from hashlib import sha256  # noqa: PLC0415
    return sha256(data)


def server_name(config_dir: Path) -> str:
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "unknown"
    digest = _sha256(f"{user}\0{Path(config_dir).resolve()}".encode()).hexdigest()[:16]
    return f"kvswitch-{digest}"


def send_to_running(name: str, message: str = "show") -> bool:
    """True when another instance is listening and got ``message``."""
    socket = QLocalSocket()
    socket.connectToServer(name)
    if not socket.waitForConnected(CONNECT_TIMEOUT_MS):
        return False
    socket.write(message.encode() + b"\n")
    socket.flush()
    socket.waitForBytesWritten(CONNECT_TIMEOUT_MS)
    socket.disconnectFromServer()
    if socket.state() != QLocalSocket.LocalSocketState.UnconnectedState:
        socket.waitForDisconnected(CONNECT_TIMEOUT_MS)
    return True


class SingleInstance(QObject):
    """The listening side.

    Signals:
        message_received(str): a later launch sent a command (``show``).
    """

    message_received = Signal(str)

    def __init__(self, name: str, parent: QObject | None = None):
        super().__init__(parent)
        self.name = name
        self._server = QLocalServer(self)
        self._server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self._server.newConnection.connect(self._on_server_new_connection)
        self._buffers: dict[QLocalSocket, bytes] = {}

    def listen(self) -> bool:
        """Start listening, clearing a stale socket once; False if that is impossible."""
        if self._server.listen(self.name):
            return True
        if self._server.serverError() == QAbstractSocket.SocketError.AddressInUseError:
            QLocalServer.removeServer(self.name)
            if self._server.listen(self.name):
                return True
        log.warning("single-instance server cannot listen on %s: %s", self.name, self._server.errorString())
        return False

    def close(self) -> None:
        """Stop listening and drop clients, so no socket signal reaches a half-destroyed object."""
        for socket in list(self._buffers):
            socket.readyRead.disconnect()
            socket.disconnected.disconnect()
            socket.abort()
            socket.deleteLater()
        self._buffers.clear()
        self._server.close()

    @Slot()
    def _on_server_new_connection(self) -> None:
        while (socket := self._server.nextPendingConnection()) is not None:
            self._buffers[socket] = b""
            socket.readyRead.connect(lambda s=socket: self._on_socket_ready_read(s))
            socket.disconnected.connect(lambda s=socket: self._on_socket_disconnected(s))
            if socket.bytesAvailable():
                self._on_socket_ready_read(socket)

    def _on_socket_ready_read(self, socket: QLocalSocket) -> None:
        data = self._buffers.get(socket, b"") + bytes(socket.readAll().data())
        *lines, rest = data.split(b"\n")
        self._buffers[socket] = rest
        for line in lines:
            text = line.decode("utf-8", "replace").strip()
            if text:
                self.message_received.emit(text)

    def _on_socket_disconnected(self, socket: QLocalSocket) -> None:
        if socket not in self._buffers:
            return
        if socket.bytesAvailable():
            self._on_socket_ready_read(socket)
        self._buffers.pop(socket, None)
        socket.deleteLater()
