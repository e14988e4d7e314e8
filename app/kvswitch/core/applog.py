"""KV Switch's own log: a rotating file in ``paths.log_dir``, with keys scrubbed before they are written.

The log is what a user attaches to a bug report, so it must be bounded in size and must never carry an
API key, even if some code path logs a header or a URL with a token in it. Besides key-shaped text
(``core.redact.mask_text``: ``sk-...``, ``Bearer ...``, credential-named headers, parameters and keys,
``user:password@`` in URLs), every
secret KV Switch knows (profile keys and URL passwords, registered by the store as it loads them) is
replaced wherever it appears, whatever its shape.
"""

from __future__ import annotations

import logging
from logging.handlers import RotatingFileHandler
from pathlib import Path

from kvswitch.core.knownsecrets import hide_known
from kvswitch.core.paths import AppPaths
from kvswitch.core.redact import mask_text

LOG_NAME = "kvswitch.log"
MAX_BYTES = 1_000_000
BACKUP_COUNT = 3
FORMAT = "%(asctime)s %(levelname)-7s %(name)s: %(message)s"

#: what replaces a secret in the log
HIDDEN = "…[hidden]"


class SecretFilter(logging.Filter):
    """Replaces anything that looks like a key with a mask, in the final formatted message."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        scrubbed = scrub(message)
        if scrubbed != message:
            record.msg, record.args = scrubbed, None
        return True


def scrub(text: str) -> str:
    """Known secrets by value, then every credential shape by ``redact.mask_text`` (the one rule)."""
    return mask_text(hide_known(text), HIDDEN)


def log_file(paths: AppPaths) -> Path:
    return paths.log_dir / LOG_NAME


def setup_logging(paths: AppPaths, level: int = logging.INFO) -> Path:
    """Send the ``kvswitch`` loggers to a rotating file (1 MB × 4); safe to call more than once.

    Returns the log file's path (shown in the Settings dialog).
    """
    path = log_file(paths)
    logger = logging.getLogger("kvswitch")
    logger.setLevel(level)
    for handler in list(logger.handlers):
        if getattr(handler, "_kvswitch_file", None) == str(path):
            return path
        if getattr(handler, "_kvswitch_file", None) is not None:
            logger.removeHandler(handler)  # a different config dir: switch files
            handler.close()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler = RotatingFileHandler(path, maxBytes=MAX_BYTES, backupCount=BACKUP_COUNT, encoding="utf-8")
    except OSError as exc:
        logging.getLogger("kvswitch.applog").warning("cannot write the log file %s: %s", path, exc)
        return path
    handler.setFormatter(logging.Formatter(FORMAT))
    handler.addFilter(SecretFilter())
    handler._kvswitch_file = str(path)  # type: ignore[attr-defined]
    logger.addHandler(handler)
    return path
