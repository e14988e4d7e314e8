"""The Qt desktop app: the only package that imports PySide6."""

from kvswitch.ui.qtcompat import protect_none_refcount

protect_none_refcount()
