#!/usr/bin/env python3
"""Write a tiny llama-architecture GGUF model that a real llama-server loads in milliseconds.

The weights are random (fixed seed), so the text it generates is garbage, but tokenisation and
prompt processing are real and deterministic: token counts, and therefore cache numbers, are
reproducible. That is all the cache tests need, without downloading a model.

usage: make_tiny_model.py OUT.gguf [--context 32768] [--seed 1234]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

N_EMBD = 64
N_LAYERS = 2
N_HEADS = 4
N_KV_HEADS = 2
N_FF = 128
SPECIAL_TOKENS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
#: a few byte-level BPE merges (GPT-2 spelling: 'Ġ' is a space) so common words become one token
MERGES = (
    ("Ġ", "t"),
    ("h", "e"),
    ("Ġt", "he"),
    ("i", "n"),
    ("Ġ", "a"),
    ("e", "r"),
    ("o", "n"),
    ("r", "e"),
    ("Ġ", "s"),
    ("a", "t"),
    ("e", "n"),
    ("Ġ", "w"),
    ("o", "r"),
    ("Ġ", "o"),
    ("Ġ", "c"),
    ("e", "s"),
    ("i", "s"),
    ("Ġ", "b"),
    ("l", "e"),
    ("a", "n"),
)
CHATML_TEMPLATE = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + "
    "'<|im_end|>' + '\\n'}}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)


def byte_tokens() -> list[str]:
    """GPT-2's reversible byte → printable character map, in byte order."""
    printable = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    mapping: dict[int, int] = {b: b for b in printable}
    extra = 0
    for b in range(256):
        if b not in mapping:
            mapping[b] = 256 + extra
            extra += 1
    return [chr(mapping[b]) for b in range(256)]


def build(out: Path, *, context: int, seed: int) -> Path:
    import gguf  # noqa: PLC0415 - a test dependency, imported only when a model is made

    tokens = byte_tokens() + [a + b for a, b in MERGES] + list(SPECIAL_TOKENS)
    types = [gguf.TokenType.NORMAL] * (256 + len(MERGES)) + [gguf.TokenType.CONTROL] * len(SPECIAL_TOKENS)
    n_vocab = len(tokens)
    special = {name: 256 + len(MERGES) + i for i, name in enumerate(SPECIAL_TOKENS)}

    rng = np.random.default_rng(seed)

    def weights(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.02).astype(np.float32)

    head_dim = N_EMBD // N_HEADS
    n_embd_kv = head_dim * N_KV_HEADS
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + f".{os.getpid()}.tmp")
    writer = gguf.GGUFWriter(str(tmp), "llama")
    writer.add_name("kvswitch-tiny")
    writer.add_context_length(context)
    writer.add_embedding_length(N_EMBD)
    writer.add_block_count(N_LAYERS)
    writer.add_feed_forward_length(N_FF)
    writer.add_head_count(N_HEADS)
    writer.add_head_count_kv(N_KV_HEADS)
    writer.add_rope_dimension_count(head_dim)
    writer.add_rope_freq_base(10000.0)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_vocab_size(n_vocab)
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges([f"{a} {b}" for a, b in MERGES])
    writer.add_bos_token_id(special["<|endoftext|>"])
    writer.add_eos_token_id(special["<|im_end|>"])
    writer.add_add_bos_token(False)
    writer.add_chat_template(CHATML_TEMPLATE)

    writer.add_tensor("token_embd.weight", weights(n_vocab, N_EMBD))
    for i in range(N_LAYERS):
        writer.add_tensor(f"blk.{i}.attn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
        writer.add_tensor(f"blk.{i}.attn_q.weight", weights(N_EMBD, N_EMBD))
        writer.add_tensor(f"blk.{i}.attn_k.weight", weights(n_embd_kv, N_EMBD))
        writer.add_tensor(f"blk.{i}.attn_v.weight", weights(n_embd_kv, N_EMBD))
        writer.add_tensor(f"blk.{i}.attn_output.weight", weights(N_EMBD, N_EMBD))
        writer.add_tensor(f"blk.{i}.ffn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
        writer.add_tensor(f"blk.{i}.ffn_gate.weight", weights(N_FF, N_EMBD))
        writer.add_tensor(f"blk.{i}.ffn_up.weight", weights(N_FF, N_EMBD))
        writer.add_tensor(f"blk.{i}.ffn_down.weight", weights(N_EMBD, N_FF))
    writer.add_tensor("output_norm.weight", np.ones(N_EMBD, dtype=np.float32))
    writer.add_tensor("output.weight", weights(n_vocab, N_EMBD))

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    os.replace(tmp, out)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="where to write the .gguf file")
    parser.add_argument("--context", type=int, default=32768, help="training context length (default 32768)")
    parser.add_argument("--seed", type=int, default=1234)
    args = parser.parse_args(argv)
    try:
        path = build(args.out, context=args.context, seed=args.seed)
    except ImportError:
        print("make_tiny_model: the 'gguf' package is missing (pip install gguf)", file=sys.stderr)
        return 3
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
