"""The Qt desktop app: the only package that imports PySide6."""

from kvswitch.ui.qtcompat import protect_none_refcount, skip_feature_source_scan

protect_none_refcount()
skip_feature_source_scan()
