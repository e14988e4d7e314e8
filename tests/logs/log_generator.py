"""Seeded llama-server logs with every request shape the fast scanner has to get right.

Lines follow llama-server's ``SLT_*`` format (``<time> <level> slot <func>: id %2d | task %d | ...``).
Requests vary in everything the block path and the tracker look at: LRU / LCP selection with high and
low similarity, ``-lv 4`` prompt-size and cached-token lines, full hits, truncation, reason lines,
server lines in between, 2024-style timing blocks on unprefixed lines, and with ``slots > 1`` requests
of several slots whose lines interleave at random.
"""

# ruff: noqa: E501 - llama-server lines are easier to check against its output unwrapped

from __future__ import annotations

import random
from collections.abc import Iterator

_FUNCS = {"sel": "get_availabl", "launch": "launch_slot_", "op": "   operator()", "timing": "print_timing",
          "release": "     release", "init": "init_sampler"}


class _Clock:
    def __init__(self) -> None:
        self.us = 250_000

    def stamp(self) -> str:
        self.us += 137
        return f"0.{self.us // 1_000_000 % 100:02d}.{self.us // 1000 % 1000:03d}.{self.us % 1000:03d}"


def _request(rng: random.Random, slot: int, task: int, clock: _Clock, old_style: bool) -> Iterator[str]:
    def slot_line(func: str, text: str, level: str = "I", task_id: int = task) -> str:
        return f"{clock.stamp()} {level} slot {_FUNCS[func]}: id {slot:2d} | task {task_id} | {text}"

    size = rng.randint(40, 3000)
    cached = rng.choice([0, 0, rng.randint(1, size - 1), size - 1, rng.randint(1, 30)])
    new = size - cached
    generated = rng.randint(1, 40)
    if rng.random() < 0.5:
        yield slot_line("sel", f"selected slot by LRU, t_last = {rng.randint(-1, 10**9)}", task_id=-1)
    else:
        yield slot_line("sel", f"selected slot by LCP similarity, f_sim_best = {rng.random():.3f} "
                        "(> 0.100 thold), f_keep = 0.995", task_id=-1)
    if rng.random() < 0.3:
        yield f"{clock.stamp()} I srv  get_availabl: updating prompt cache"
        yield slot_line("launch", "sampler params: ", task_id=-1)
        yield "\trepeat_last_n = 64, repeat_penalty = 1.000, frequency_penalty = 0.000"
    yield slot_line("launch", "processing task, is_child = 0")
    verbose = rng.random() < 0.4
    if verbose:
        yield slot_line("op", f"new prompt, n_ctx_slot = 4096, n_keep = 0, task.n_tokens = {size}")
    if cached == size - 1 and rng.random() < 0.7:
        yield slot_line("op", f"need to evaluate at least 1 token for each active slot (n_past = {size}, "
                        f"task.n_tokens() = {size})", level="W")
        yield slot_line("op", f"n_past was set to {size - 1}", level="W")
    if verbose and rng.random() < 0.8:
        yield slot_line("op", f"cached n_tokens = {cached}, memory_seq_rm [{cached}, end)")
    if rng.random() < 0.08:
        yield slot_line("op", "forcing full prompt re-processing due to lack of cache data", level="W")
    if rng.random() < 0.3:
        yield slot_line("init", f"init sampler, took 0.25 ms, tokens: text = {size}, total = {size}")
    truncated = 1 if rng.random() < 0.05 else 0
    after = cached + new + generated - 1
    release = slot_line("release", f"stop processing: n_tokens = {after}, truncated = {truncated}")
    if old_style and rng.random() < 0.3:
        yield release
        release = ""
    ms = rng.randint(1, 99999) / 100
    if old_style and rng.random() < 0.5:
        yield slot_line("timing", "")
        yield f"prompt eval time =    {ms:7.2f} ms / {new:5d} tokens (    4.00 ms per token,   250.00 tokens per second)"
        yield f"       eval time =     200.00 ms / {generated:5d} tokens (   12.50 ms per token,    80.00 tokens per second)"
        yield f"      total time =     280.00 ms / {new + generated:5d} tokens"
    else:
        yield slot_line("timing", f"prompt eval time = {ms:10.2f} ms / {new:5d} tokens (    0.05 ms per token, "
                        "19416.98 tokens per second)")
        yield slot_line("timing", f"       eval time =      10.50 ms / {generated:5d} tokens (    1.50 ms per "
                        "token,   666.60 tokens per second)")
        yield slot_line("timing", f"      total time =      89.61 ms / {new + generated:5d} tokens")
        yield slot_line("timing", "   graphs reused =          7")
    if release:
        yield release
    if rng.random() < 0.5:
        yield f"{clock.stamp()} I srv  update_slots: all slots are idle"


def generated_log(seed: int, requests: int, slots: int = 1, old_style: bool = False) -> str:
    """A log of ``requests`` requests; with several slots their lines interleave at random."""
    rng = random.Random(seed)
    clock = _Clock()
    running: list[Iterator[str]] = []
    free = list(range(slots))
    started = 0
    task = 0
    lines: list[str] = []
    while started < requests or running:
        if started < requests and free and (not running or rng.random() < 0.3):
            slot = free.pop(rng.randrange(len(free)))
            task += rng.randint(1, 120)
            running.append(_tagged(slot, _request(rng, slot, task, clock, old_style and slots == 1), free))
            started += 1
            continue
        current = running[rng.randrange(len(running))] if slots > 1 else running[0]
        line = next(current, None)
        if line is None:
            running.remove(current)
        else:
            lines.append(line)
    return "\n".join(lines) + "\n"


def _tagged(slot: int, lines: Iterator[str], free: list[int]) -> Iterator[str]:
    """The request's lines; its slot is free again once they are all out."""
    yield from lines
    free.append(slot)
