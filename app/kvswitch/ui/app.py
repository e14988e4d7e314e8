"""The desktop app's start: args → logging → paths → QApplication → single instance → UI.

Reached only through ``kvswitch.cli`` (``kvswitch`` without a sub-command, and ``kvswitch-gui``), which
parses the arguments and turns errors into one line; nothing here imports the CLI back.

Imports stay lazy (Qt and the engines load inside the functions) so ``kvswitch --help`` never loads
Qt and the window appears as fast as a bare PySide6 window would.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from PySide6.QtWidgets import QApplication

    from kvswitch.core.paths import AppPaths

log = logging.getLogger("kvswitch.ui")

EARLY_RECORDS = 1000


def setup_logging(paths: AppPaths) -> None:
    """The rotating, key-scrubbing log file in ``paths.log_dir`` (shared with the CLI)."""
    from kvswitch.core.applog import setup_logging as setup  # noqa: PLC0415

    setup(paths)


class _EarlyRecords(logging.Handler):
    """Holds the app's first log records until the log file is open.

    Opening the file (and importing ``logging.handlers``, which pulls in sockets and pickle) costs
    about 12 ms before the window could show; held records lose nothing, and an error opens the file
    at once so it is never only in memory.
    """

    def __init__(self, open_file: Callable[[], None]):
        super().__init__(logging.INFO)
        self.records: deque[logging.LogRecord] = deque(maxlen=EARLY_RECORDS)
        self._open_file = open_file

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)
        if record.levelno >= logging.ERROR:
            self._open_file()


def setup_logging_later(paths: AppPaths) -> Callable[[], None]:
    """Start logging now, to memory; the returned call opens the log file and writes what was held.

    Call it once the window has painted (``AppShell.ready``); calling it again does nothing.
    """
    logger = logging.getLogger("kvswitch")
    if logger.level == logging.NOTSET or logger.level > logging.INFO:
        logger.setLevel(logging.INFO)

    def open_file() -> None:
        if early not in logger.handlers:
            return
        logger.removeHandler(early)
        setup_logging(paths)
        for record in early.records:
            for handler in logger.handlers:
                if record.levelno >= handler.level:
                    handler.handle(record)
        early.records.clear()

    early = _EarlyRecords(open_file)
    logger.addHandler(early)
    return open_file


def after_ready(call: Callable[[], None]) -> Callable[[], None]:
    """A slot for ``AppShell.ready`` that runs ``call`` on the next event-loop turn: opening the log
    file (``logging.handlers`` and the file itself) waits until the cards and the tray are up."""

    def later() -> None:
        from PySide6.QtCore import QTimer  # noqa: PLC0415

        QTimer.singleShot(0, call)

    return later


def _install_qt_message_handler() -> None:
    from PySide6.QtCore import QtMsgType, qInstallMessageHandler  # noqa: PLC0415

    qt_log = logging.getLogger("kvswitch.qt")
    levels = {QtMsgType.QtDebugMsg: logging.DEBUG, QtMsgType.QtInfoMsg: logging.INFO,
              QtMsgType.QtWarningMsg: logging.WARNING, QtMsgType.QtCriticalMsg: logging.ERROR,
              QtMsgType.QtFatalMsg: logging.CRITICAL}

    def handler(msg_type: Any, _context: Any, message: str) -> None:
        qt_log.log(levels.get(msg_type, logging.WARNING), "%s", message)

    qInstallMessageHandler(handler)


def create_application(argv: Sequence[str] | None = None) -> QApplication:
    from PySide6.QtWidgets import QApplication  # noqa: PLC0415

    from kvswitch.core.paths import APP_ID  # noqa: PLC0415

    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(list(argv or sys.argv[:1]))
    app.setApplicationName("kvswitch")
    app.setApplicationDisplayName("KV Switch")
    app.setOrganizationName("kvswitch")
    app.setDesktopFileName(APP_ID)
    return app


def run_app(args: argparse.Namespace) -> int:
    """Start the desktop app (``kvswitch`` with no sub-command)."""
    from kvswitch.core.paths import AppPaths  # noqa: PLC0415

    config_dir = getattr(args, "config_dir", None)
    paths = AppPaths.default(Path(config_dir) if config_dir else None)
    open_log_file = setup_logging_later(paths)
    smoke = bool(getattr(args, "smoke_test", False))
    if smoke and not os.environ.get("QT_QPA_PLATFORM") and not os.environ.get("DISPLAY") \
            and not os.environ.get("WAYLAND_DISPLAY") and sys.platform.startswith("linux"):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    app = create_application()
    _install_qt_message_handler()
    from kvswitch.ui.gui_collector import GuiThreadCollector  # noqa: PLC0415

    collector = GuiThreadCollector(app)  # cycles holding Qt objects are freed on this thread only
    collector.start()

    from kvswitch.ui import i18n  # noqa: PLC0415

    # The language setting is read after the window frame shows (see AppShell); env and locale decide now.
    i18n.install(app, i18n.choose_language(None))
    if smoke:
        open_log_file()
        from kvswitch.ui.smoke import run_smoke_test  # noqa: PLC0415

        try:
            return run_smoke_test(app, paths)
        finally:
            collector.stop()

    from kvswitch.ui.shell.single_instance import SingleInstance, send_to_running, server_name  # noqa: PLC0415

    name = server_name(paths.config_dir)
    if send_to_running(name, "show"):
        log.info("another KV Switch is running; asked it to show its window")
        open_log_file()
        return 0
    instance = SingleInstance(name)
    instance.listen()

    from kvswitch.ui.errors import install_excepthooks  # noqa: PLC0415
    from kvswitch.ui.shell.shell import AppShell  # noqa: PLC0415

    install_excepthooks()
    try:
        shell = AppShell(paths, minimized=bool(getattr(args, "minimized", False)), deferred=True)
    except Exception as exc:
        from kvswitch.core.errors import KvSwitchError  # noqa: PLC0415
        from kvswitch.ui.errors import show_dialog  # noqa: PLC0415

        open_log_file()
        if not isinstance(exc, KvSwitchError):
            raise
        show_dialog(app.translate("app", "KV Switch cannot start"), str(exc), modal=True)
        return exc.exit_code
    instance.message_received.connect(shell.on_instance_message)
    shell.ready.connect(after_ready(open_log_file))  # the window is up: the file can be opened now
    shell.ready.connect(lambda: i18n.ensure_cjk_font(app))  # after the first paint, if no CJK font is here
    shell.start()
    code = int(app.exec())
    open_log_file()  # a start that never became ready still leaves its records in the file
    shell.shutdown()  # workers cancelled and joined, the gateway stopped: every write is done here
    instance.close()
    collector.stop(collect=False)
    log.info("quit: workers stopped, gateway stopped, exiting")
    end_process(code)
    return code


def end_process(code: int) -> None:
    """End the window's process now that everything it writes is written (``shutdown`` joined the
    workers and stopped the gateway): the log handlers flushed and closed, the ``atexit`` functions
    run, then ``os._exit``. Measured on this machine: the interpreter's own teardown of the window's
    objects (Qt wrappers, the frozen start-up objects) took 0.7-0.9 s of a 1.0-1.1 s quit, none of
    it writing anything; now a quit ends in about 0.1 s. ``KVSWITCH_SLOW_EXIT=1`` keeps the
    interpreter's teardown (to debug a destructor)."""
    if os.environ.get("KVSWITCH_SLOW_EXIT"):
        return
    import atexit  # noqa: PLC0415
    import contextlib  # noqa: PLC0415

    atexit._run_exitfuncs()  # what modules registered to run at exit still runs, before the handlers close
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError, AttributeError):  # closed or detached: nothing to write
            stream.flush()
    os._exit(code)
