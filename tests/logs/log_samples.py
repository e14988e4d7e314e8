"""Realistic log excerpts of the eras and servers the captured fixtures don't cover.

Built from the servers' verbatim format strings (llama.cpp ``SLT_*``/``LOG_*`` macros, LM Studio,
vLLM, LMCache, SGLang and Ollama lines quoted in their code and bug reports). Each sample lists the
(new_tokens, cached_tokens) of every request it contains, in order.
"""

# ruff: noqa: E501 - verbatim server output is easier to check against its source unwrapped

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Sample:
    name: str
    kind: str | None  # profile kind forced, or None for per-line detection
    text: str
    expected: list[tuple[int, int]]  # (new, cached) per request, in order


def _timing_block(slot: int, task: int, n_prompt: int, n_gen: int, prefix: str = "") -> str:
    """Era D print_timing: one SLT_INF whose message starts with a newline (only the header prefixed)."""
    return (
        f"{prefix}slot print_timing: id  {slot} | task {task} | \n"
        f"prompt eval time =      80.00 ms / {n_prompt:5d} tokens (    4.00 ms per token,   250.00 tokens per second)\n"
        f"       eval time =     200.00 ms / {n_gen:5d} tokens (   12.50 ms per token,    80.00 tokens per second)\n"
        f"      total time =     280.00 ms / {n_prompt + n_gen:5d} tokens\n"
    )


ERA_D_TEXT = Sample(
    "era_d_multiline_print_timing",
    None,
    "slot get_availabl: id  0 | task -1 | selected slot by LCP similarity, sim_best = 0.985 (> 0.100 thold), "
    "f_keep = 0.995\n"
    "slot launch_slot_: id  0 | task 12 | processing task\n"
    "slot update_slots: id  0 | task 12 | new prompt, n_ctx_slot = 4096, n_keep = 0, task.n_tokens = 1559\n"
    "slot update_slots: id  0 | task 12 | n_tokens = 1536, memory_seq_rm [1536, end)\n"
    "slot update_slots: id  0 | task 12 | prompt processing progress, n_tokens = 1559, batch.n_tokens = 23, "
    "progress = 1.000000\n"
    "slot update_slots: id  0 | task 12 | prompt done, n_tokens = 1559, batch.n_tokens = 23\n"
    + _timing_block(0, 12, 23, 16)
    + "slot      release: id  0 | task 12 | stop processing: n_tokens = 1574, truncated = 0\n"
    "srv  update_slots: all slots are idle\n"
    "srv  log_server_r: done request: POST /v1/chat/completions 172.18.0.1 200\n"
    "slot get_availabl: id  0 | task -1 | selected slot by LRU, t_last = 2656294876\n"
    "slot launch_slot_: id  0 | task 30 | processing task\n"
    "slot update_slots: id  0 | task 30 | new prompt, n_ctx_slot = 8192, n_keep = 0, task.n_tokens = 5000\n"
    "slot update_slots: id  0 | task 30 | n_past = 4878, slot.prompt.tokens.size = 4878, seq_id = 0, "
    "pos_min = 4877, n_swa = 4096\n"
    "slot update_slots: id  0 | task 30 | forcing full prompt re-processing due to lack of cache data (likely "
    "due to SWA or hybrid/recurrent memory, see https://github.com/ggml-org/llama.cpp/pull/13194#issuecomment-"
    "2868343055)\n"
    "slot update_slots: id  0 | task 30 | n_tokens = 0, memory_seq_rm [0, end)\n"
    + _timing_block(0, 30, 5000, 8)
    + "slot      release: id  0 | task 30 | stop processing: n_tokens = 5007, truncated = 0\n",
    [(23, 1536), (5000, 0)],
)

ERA_C_TEXT = Sample(
    "era_c_release_before_timings",
    "llama.cpp",
    "slot launch_slot_: id  0 | task 5 | processing task\n"
    "slot update_slots: id  0 | task 5 | new prompt, n_ctx_slot = 4096, n_keep = 0, n_prompt_tokens = 120\n"
    "slot update_slots: id  0 | task 5 | kv cache rm [100, end)\n"
    "slot update_slots: id  0 | task 5 | prompt processing progress, n_past = 120, n_tokens = 20, "
    "progress = 0.166667\n"
    "slot update_slots: id  0 | task 5 | prompt done, n_past = 120, n_tokens = 20\n"
    "slot      release: id  0 | task 5 | stop processing: n_past = 135, truncated = 0\n"
    + _timing_block(0, 5, 20, 16)
    + "srv  update_slots: all slots are idle\n"
    "request: POST /v1/chat/completions 127.0.0.1 200\n"
    "slot launch_slot_: id  0 | task 7 | processing task\n"
    "slot update_slots: id  0 | task 7 | new prompt, n_ctx_slot = 4096, n_keep = 0, n_prompt_tokens = 300\n"
    "slot update_slots: id  0 | task 7 | kv cache rm [0, end)\n"
    "slot      release: id  0 | task 7 | stop processing: n_past = 310, truncated = 0\n"
    + _timing_block(0, 7, 300, 11),
    [(20, 100), (300, 0)],
)

ERA_B_JSON = Sample(
    "era_b_json",
    None,
    '{"tid":"140147531671424","timestamp":1714489663,"level":"INFO","function":"launch_slot_with_task",'
    '"line":1036,"msg":"slot is processing task","id_slot":0,"id_task":6}\n'
    '{"tid":"140147531671424","timestamp":1714489663,"level":"INFO","function":"update_slots","line":1836,'
    '"msg":"kv cache rm [p0, end)","id_slot":0,"id_task":6,"p0":512}\n'
    '{"tid":"140147531671424","timestamp":1714489664,"level":"INFO","function":"print_timings","line":269,'
    '"msg":"prompt eval time     =    1442.30 ms /    18 tokens (   80.13 ms per token,    12.48 tokens per '
    'second)","id_slot":0,"id_task":6,"t_prompt_processing":1442.3,"n_prompt_tokens_processed":18,'
    '"t_token":80.13,"n_tokens_second":12.48}\n'
    '{"tid":"140147531671424","timestamp":1714489666,"level":"INFO","function":"print_timings","line":283,'
    '"msg":"generation eval time =    2000.00 ms /    32 runs   (   62.50 ms per token,    16.00 tokens per '
    'second)","id_slot":0,"id_task":6,"t_token_generation":2000.0,"n_decoded":32}\n'
    '{"tid":"140147531671424","timestamp":1714489666,"level":"INFO","function":"update_slots","line":1600,'
    '"msg":"slot released","id_slot":0,"id_task":6,"n_ctx":4096,"n_past":561,"n_system_tokens":0,'
    '"n_cache_tokens":561,"truncated":false}\n'
    '{"function":"update_slots","level":"INFO","line":1836,"msg":"kv cache rm [p0, end)","p0":0,"slot_id":1,'
    '"task_id":9,"tid":"140147531671424","timestamp":1714489670}\n'
    '{"function":"print_timings","level":"INFO","line":269,"msg":"prompt eval time     =     900.00 ms /   '
    '600 tokens (    1.50 ms per token,   666.67 tokens per second)","n_prompt_tokens_processed":600,'
    '"slot_id":1,"t_prompt_processing":900.0,"task_id":9,"tid":"140147531671424","timestamp":1714489671}\n'
    '{"function":"update_slots","level":"INFO","line":1600,"msg":"slot released","n_past":610,"slot_id":1,'
    '"task_id":9,"tid":"140147531671424","timestamp":1714489672,"truncated":false}\n',
    [(18, 512), (600, 0)],
)

ERA_A_2023 = Sample(
    "era_a_2023",
    None,
    "slot 0 is processing [task id: 3]\n"
    "slot 0 : in cache: 250 tokens | to process: 30 tokens\n"
    "slot 0 : kv cache rm - [250, end)\n"
    "\n"
    "print_timings: prompt eval time =     500.00 ms /    30 tokens (   16.67 ms per token,    60.00 tokens "
    "per second)\n"
    "print_timings:        eval time =    1000.00 ms /    20 runs   (   50.00 ms per token,    20.00 tokens "
    "per second)\n"
    "print_timings:       total time =    1500.00 ms\n"
    "slot 0 released (300 tokens in cache)\n",
    [(30, 250)],
)

_ESC = "\x1b"
ANSI_COLOURED = Sample(
    "b11434_colours",
    "llama.cpp",
    f"{_ESC}[34m0.00.250.178{_ESC}[0m {_ESC}[32mI {_ESC}[0mslot get_availabl: id  0 | task -1 | selected slot "
    "by LRU, t_last = -1\n"
    f"{_ESC}[34m0.00.250.284{_ESC}[0m {_ESC}[32mI {_ESC}[0mslot launch_slot_: id  0 | task 0 | processing task, "
    "is_child = 0\n"
    f"{_ESC}[34m0.00.339.940{_ESC}[0m {_ESC}[32mI {_ESC}[0mslot print_timing: id  0 | task 0 | prompt eval time "
    "=      79.11 ms /  1536 tokens (    0.05 ms per token, 19416.98 tokens per second)\n"
    f"{_ESC}[34m0.00.340.017{_ESC}[0m {_ESC}[32mI {_ESC}[0mslot print_timing: id  0 | task 0 |        eval time "
    "=      10.50 ms /     8 tokens (    1.50 ms per token,   666.60 tokens per second)\n"
    f"{_ESC}[34m0.00.340.217{_ESC}[0m {_ESC}[32mI {_ESC}[0mslot      release: id  0 | task 0 | stop processing: "
    "n_tokens = 1543, truncated = 0\n"
    f"{_ESC}[34m0.00.543.699{_ESC}[0m {_ESC}[35mW slot   operator(): id  0 | task 20 | need to evaluate at least "
    f"1 token for each active slot (n_past = 1559, task.n_tokens() = 1559){_ESC}[0m\n"
    f"{_ESC}[34m0.00.545.457{_ESC}[0m {_ESC}[32mI {_ESC}[0mslot print_timing: id  0 | task 20 | prompt eval time "
    "=       1.75 ms /     1 tokens (    1.75 ms per token,   572.41 tokens per second)\n"
    f"{_ESC}[34m0.00.545.500{_ESC}[0m {_ESC}[32mI {_ESC}[0mslot print_timing: id  0 | task 20 |        eval time "
    "=       0.00 ms /     1 tokens (    0.00 ms per token,     0.00 tokens per second)\n"
    f"{_ESC}[34m0.00.545.701{_ESC}[0m {_ESC}[32mI {_ESC}[0mslot      release: id  0 | task 20 | stop processing: "
    "n_tokens = 1559, truncated = 0\n",
    [(1536, 0), (1, 1558)],
)


def _jsonl(msg: str, level: str = "info", time: int = 1000) -> str:
    import json

    return json.dumps({"type": "log", "time": time, "level": level, "msg": msg + "\n"}) + "\n"


LOG_JSONL = Sample(
    "b11434_log_jsonl",
    None,
    _jsonl("slot get_availabl: id  0 | task -1 | selected slot by LCP similarity, f_sim_best = 0.985 "
           "(> 0.100 thold), f_keep = 0.995")
    + _jsonl("slot launch_slot_: id  0 | task 9 | processing task, is_child = 0")
    + _jsonl("slot print_timing: id  0 | task 9 | prompt eval time =      23.30 ms /    23 tokens (    1.01 ms "
             "per token,   987.29 tokens per second)")
    + _jsonl("slot print_timing: id  0 | task 9 |        eval time =       0.00 ms /     1 tokens (    0.00 ms "
             "per token,     0.00 tokens per second)")
    + _jsonl("slot      release: id  0 | task 9 | stop processing: n_tokens = 1559, truncated = 0")
    + _jsonl("srv  update_slots: all slots are idle"),
    [(23, 1536)],
)

LMSTUDIO_0_4 = Sample(
    "lmstudio_0_4_wrapped",
    "lm-studio",
    "2026-06-03 11:02:45 [DEBUG]\n"
    " 26.26.870.100 I slot get_availabl: id  0 | task -1 | selected slot by LCP similarity, f_sim_best = 0.872 "
    "(> 0.100 thold), f_keep = 0.950\n"
    "2026-06-03 11:02:46 [DEBUG]\n"
    " 26.26.871.357 I slot launch_slot_: id  0 | task 316 | processing task, is_child = 0\n"
    "26.26.871.371 W slot update_slots: id  0 | task 316 | cache reuse is not supported - ignoring "
    "n_cache_reuse = 256\n"
    "26.26.871.374 I slot update_slots: id  0 | task 316 | Checking checkpoint with [195, 1474] against 0...\n"
    "2026-06-03 11:02:49 [DEBUG]\n"
    " 26.29.100.000 I slot print_timing: id  0 | task 316 | prompt eval time =    2100.00 ms /   200 tokens "
    "(   10.50 ms per token,    95.24 tokens per second)\n"
    "26.29.100.010 I slot print_timing: id  0 | task 316 |        eval time =    3000.00 ms /    40 tokens "
    "(   75.00 ms per token,    13.33 tokens per second)\n"
    "26.29.100.020 I slot print_timing: id  0 | task 316 |       total time =    5100.00 ms /   240 tokens\n"
    "26.29.100.030 I slot print_timing: id  0 | task 316 |    graphs reused =         39\n"
    "26.29.100.200 I slot      release: id  0 | task 316 | stop processing: n_tokens = 1713, truncated = 0\n"
    "2026-06-03 11:05:00 [DEBUG]\n"
    "slot update_slots: id  0 | task 5007 | cache reuse is not supported - ignoring n_cache_reuse = 256\n"
    "slot update_slots: id  0 | task 5007 | n_tokens = 1560, memory_seq_rm [1560, end)\n"
    "slot update_slots: id  0 | task 5007 | failed to truncate tokens with position >= 1560 - clearing the "
    "memory\n"
    "slot prompt_clear: id  0 | task 5007 | clearing prompt with 1560 tokens\n"
    "slot update_slots: id  0 | task 5007 | n_tokens = 0, memory_seq_rm [0, end)\n"
    + _timing_block(0, 5007, 1700, 10)
    + "slot      release: id  0 | task 5007 | stop processing: n_tokens = 1709, truncated = 0\n"
    "2026-02-10 10:00:00 [DEBUG]\n"
    " Prompt cache restore: cached_tokens=17408 uncached_tokens=24 lifetime_efficiency=62.41%\n"
    "[2025-04-17 18:32:17][DEBUG] Received request: POST to /v1/chat/completions with body {\n"
    "[2025-04-17 18:32:17][INFO][LM STUDIO SERVER] Running chat completion on conversation with 1 messages.\n",
    [(200, 1474), (1700, 0), (24, 17408)],
)

VLLM_LMCACHE = Sample(
    "vllm_with_lmcache",
    "vllm",
    "(APIServer pid=1742104) INFO 09-29 01:34:15 [loggers.py:310] Engine 000: Avg prompt throughput: 891.8 "
    "tokens/s, Avg generation throughput: 12.3 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: "
    "0.1%, Prefix cache hit rate: 0.0%\n"
    "[2025-08-15 18:55:27,555] LMCache INFO: Reqid: chatcmpl-c98585ab, Total tokens 3335, LMCache hit tokens: 0, "
    "need to load: 0 (vllm_v1_adapter.py:739:lmcache.integration.vllm.vllm_v1_adapter)\n"
    "[2025-08-15 18:56:02,101] LMCache INFO: Reqid: chatcmpl-d1, Total tokens 3400, Inference Engine computed "
    "tokens: 0, LMCache hit tokens: 3072, need to load: 3072 (vllm_v1_adapter.py:760:lmcache.integration.vllm."
    "vllm_v1_adapter)\n"
    "[2025-08-15 18:56:02,120] LMCache INFO: Retrieved 3072 out of 3072 required tokens (from 3400 total "
    "tokens). size: 0.3750 gb, cost 12.3456 ms, throughput: 30.3700 GB/s; (cache_engine.py:500:lmcache.v1."
    "cache_engine)\n"
    "[2025-08-15 18:56:03,000] LMCache INFO: Stored 328 out of total 3400 tokens. size: 0.0400 gb, cost 2.0000 "
    "ms, throughput: 20.0000 GB/s; offload_time: 1.0000 ms, put_time: 1.0000 ms (cache_engine.py:300:lmcache."
    "v1.cache_engine)\n"
    "[2025-08-15 18:57:00,000] LMCache INFO: Reqid: chatcmpl-e2, Total tokens 4096, Inference Engine computed "
    "tokens: 2048, LMCache hit tokens: 2048, need to load: 0 (vllm_v1_adapter.py:760:lmcache.integration.vllm."
    "vllm_v1_adapter)\n"
    "(APIServer pid=1742104) INFO 09-29 01:34:25 [loggers.py:310] Engine 000: Avg prompt throughput: 100.0 "
    "tokens/s, Avg generation throughput: 10.0 tokens/s, Running: 0 reqs, Waiting: 0 reqs, GPU KV cache usage: "
    "0.0%, Prefix cache hit rate: 45.5%, External prefix cache hit rate: 92.0%\n"
    "INFO 05-10 12:00:00 metrics.py:455] Prefix cache hit rate: GPU: 85.00%, CPU: 0.00%\n"
    '(APIServer pid=6051) INFO:     127.0.0.1:51234 - "POST /v1/chat/completions HTTP/1.1" 200 OK\n',
    [(3335, 0), (328, 3072), (2048, 2048)],
)

SGLANG = Sample(
    "sglang_three_eras",
    None,
    "[2025-03-01 10:00:00 TP0] Prefill batch. #new-seq: 1, #new-token: 2048, #cached-token: 0, cache hit rate: "
    "0.00%, #running-req: 0, #queue-req: 0\n"
    "[2025-07-26 16:09:08 TP0] Prefill batch. #new-seq: 1, #new-token: 6, #cached-token: 2048, token usage: "
    "0.00, #running-req: 0, #queue-req: 0, \n"
    "[2025-07-26 16:09:09 TP0] Decode batch. #running-req: 1, #token: 2060, token usage: 0.01, gen throughput "
    "(token/s): 50.00, #queue-req: 0, \n"
    "[2026-01-10 10:00:00 DP0 TP0] Prefill batch, #new-seq: 1, #new-token: 512, #cached-token: 512, token "
    "usage: 0.01, #running-req: 0, #queue-req: 0, #pending-token: 0, cuda graph: False, input throughput "
    "(token/s): 1234.56\n"
    '[2026-01-10 10:00:01] INFO:     127.0.0.1:40000 - "POST /v1/chat/completions HTTP/1.1" 200 OK\n',
    [(2048, 0), (6, 2048), (512, 512)],
)

OLLAMA = Sample(
    "ollama_runner_and_llama_server",
    "ollama",
    'time=2024-05-17T14:45:46.998+02:00 level=DEBUG source=cache.go:104 msg="loading cache slot" id=0 '
    "cache=11060 prompt=4539 used=2560 remaining=1979\n"
    "[GIN] 2026/04/24 - 14:49:47 | 200 |  3.900438468s |       127.0.0.1 | POST     \"/v1/chat/completions\"\n"
    'time=2024-05-17T14:46:10.000+02:00 level=DEBUG source=cache.go:104 msg="loading cache slot" id=0 '
    "cache=6518 prompt=6600 used=6518 remaining=82\n"
    "[GIN] 2026/04/24 - 14:50:01 | 500 |  0.100000000s |       127.0.0.1 | POST     \"/api/chat\"\n"
    "slot get_availabl: id  0 | task -1 | selected slot by LCP similarity, f_sim_best = 0.990 (> 0.100 thold), "
    "f_keep = 1.000\n"
    "slot launch_slot_: id  0 | task 44 | processing task, is_child = 0\n"
    "slot print_timing: id  0 | task 44 | prompt eval time =      50.00 ms /    64 tokens (    0.78 ms per "
    "token,  1280.00 tokens per second)\n"
    "slot print_timing: id  0 | task 44 |        eval time =     500.00 ms /    32 tokens (   15.63 ms per "
    "token,    64.00 tokens per second)\n"
    "slot      release: id  0 | task 44 | stop processing: n_tokens = 6695, truncated = 0\n",
    [(1979, 2560), (82, 6518), (64, 6600)],
)


def interleaved_slots() -> Sample:
    """Two slots working at once (-np 2): their lines interleave; each request stays whole."""
    a = [
        "slot get_availabl: id  0 | task -1 | selected slot by LRU, t_last = -1",
        "slot launch_slot_: id  0 | task 1 | processing task, is_child = 0",
        "slot print_timing: id  0 | task 1 | prompt eval time =     300.00 ms /  3000 tokens (    0.10 ms per "
        "token, 10000.00 tokens per second)",
        "slot print_timing: id  0 | task 1 |        eval time =     100.00 ms /    10 tokens (   10.00 ms per "
        "token,   100.00 tokens per second)",
        "slot      release: id  0 | task 1 | stop processing: n_tokens = 3009, truncated = 0",
    ]
    b = [
        "slot get_availabl: id  1 | task -1 | selected slot by LCP similarity, f_sim_best = 0.500 (> 0.100 "
        "thold), f_keep = 1.000",
        "slot launch_slot_: id  1 | task 2 | processing task, is_child = 0",
        "slot print_timing: id  1 | task 2 | prompt eval time =      50.00 ms /   500 tokens (    0.10 ms per "
        "token, 10000.00 tokens per second)",
        "slot print_timing: id  1 | task 2 |        eval time =     100.00 ms /     4 tokens (   25.00 ms per "
        "token,    40.00 tokens per second)",
        "slot      release: id  1 | task 2 | stop processing: n_tokens = 1003, truncated = 0",
    ]
    lines = [a[0], b[0], a[1], b[1], b[2], a[2], b[3], a[3], b[4], a[4]]
    return Sample("interleaved_two_slots", None, "\n".join(lines) + "\n", [(500, 500), (3000, 0)])


def format_switch() -> Sample:
    """A log that changes format mid-way (Ollama 0.29 runner, then 0.30 starting llama-server)."""
    return Sample(
        "format_switch_mid_log",
        None,
        OLLAMA.text.split("[GIN] 2026/04/24 - 14:50:01")[0] + ERA_D_TEXT.text,
        [(1979, 2560), (82, 6518), (23, 1536), (5000, 0)],
    )


ALL_SAMPLES = [
    ERA_D_TEXT, ERA_C_TEXT, ERA_B_JSON, ERA_A_2023, ANSI_COLOURED, LOG_JSONL, LMSTUDIO_0_4, VLLM_LMCACHE,
    SGLANG, OLLAMA, interleaved_slots(), format_switch(),
]
