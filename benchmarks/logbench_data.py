"""Builds big, realistic llama-server logs for the log-scan benchmark from the real captured lines.

Request blocks are cut from the real b11434 captures and repeated with new task ids and shifted token
counts (processed and slot size move together, so every generated request still has a true cached count).
"""

from __future__ import annotations

import re
from pathlib import Path

FIXTURE_LOGS = (
    "llama_server_np1_default.log", "llama_server_np1_trace_lv4.log", "llama_server_np4_default.log",
)
_TASK = re.compile(r"task (\d+) ")
_COUNTS = re.compile(r"(/ +| n_tokens = )(\d+)( tokens|,)")


def fixture_dir() -> Path:
    return Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "llama.cpp-b11434"


def request_blocks(directory: Path) -> list[list[str]]:
    """Every request of the captures, as the lines from its slot selection to its release."""
    blocks: list[list[str]] = []
    for name in FIXTURE_LOGS:
        current: list[str] = []
        for line in (directory / name).read_text(encoding="utf-8").splitlines():
            starts = "selected slot" in line or " - checking sim" in line
            if starts and current and any("stop processing" in item for item in current):
                blocks.append(current)
                current = []
            if current or "selected slot" in line or " - checking sim" in line:
                current.append(line)
        if current:
            blocks.append(current)
    return blocks


def write_log(path: Path, size_bytes: int) -> int:
    """Write about ``size_bytes`` of log to ``path``; returns the number of requests written."""
    blocks = request_blocks(fixture_dir())
    templates = ["\n".join(block) + "\n" for block in blocks]
    written = 0
    requests = 0
    task_base = 0
    with path.open("w", encoding="utf-8") as out:
        buffer: list[str] = []
        pending = 0
        while written < size_bytes:
            template = templates[requests % len(templates)]
            delta = requests % 97
            base = task_base

            def _task(m: re.Match[str], base: int = base) -> str:
                return f"task {int(m.group(1)) + base} "

            def _count(m: re.Match[str], delta: int = delta) -> str:
                return f"{m.group(1)}{int(m.group(2)) + delta}{m.group(3)}"

            text = _COUNTS.sub(_count, _TASK.sub(_task, template))
            buffer.append(text)
            pending += len(text)
            written += len(text)
            requests += 1
            task_base += 100
            if pending > 4 << 20:
                out.write("".join(buffer))
                buffer.clear()
                pending = 0
        out.write("".join(buffer))
    return requests
