"""The setup assistant's "where it looked" list: the ports it asked, the process names it recognises, the
configuration files it read, shown when detection found nothing (so "nothing found" can be checked).

Split out of ``first_run`` (the dialog) so that module stays under the project's 400-line size; the
texts keep the ``FirstRunDialog`` translation context.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication

from kvswitch.core.paths import home_dir
from kvswitch.platform.detect import Detection, process_names


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _found(present: bool) -> str:
    return (QCoreApplication.translate("FirstRunDialog", "found") if present
            else QCoreApplication.translate("FirstRunDialog", "not there"))


def searched_text(detection: Detection) -> str:
    """Where detection looked and found nothing, as a short list (the ports it asked, the process names it
    recognises, the configuration files it read), from the detection itself, not a copy of the lists."""
    searched = detection.searched
    ports = ", ".join(f"{port} ({label})" if label else str(port) for port, label in searched.ports)
    asked = QCoreApplication.translate("FirstRunDialog",
                                       "Asked on %1, port %2: none answered as a model server.")
    lines = [asked.replace("%1", searched.host).replace("%2", ports or "–")]
    if searched.process_list:
        looked = QCoreApplication.translate("FirstRunDialog",
                                            "Looked for running processes: %1 — none is running.")
        lines.append(looked.replace("%1", ", ".join(process_names())))
    else:
        lines.append(QCoreApplication.translate("FirstRunDialog", "The process list was not read."))
    for tool in detection.tools:
        read = QCoreApplication.translate("FirstRunDialog", "Read %1 (%2): %3.")
        lines.append(read.replace("%1", str(tool.config_file)).replace("%2", tool.label)
                     .replace("%3", _found(tool.has_config)))
    cc_switch = home_dir() / ".cc-switch"
    looked = QCoreApplication.translate("FirstRunDialog", "Looked for CC Switch in %1: %2.")
    lines.append(looked.replace("%1", str(cc_switch)).replace("%2", _found(cc_switch.is_dir())))
    items = "".join(f"<li>{_escape(line)}</li>" for line in lines)
    return f"<ul style=\"margin-left: -24px\">{items}</ul>"
