#!/usr/bin/env python3
"""Write a tiny llama-architecture GGUF model that a real llama-server loads in milliseconds.

The weights are random (fixed seed), so the text it generates is garbage, but tokenisation and
prompt processing are real and deterministic: token counts, and therefore cache numbers, are
reproducible. That is all the cache tests need, without downloading a model.

usage: make_tiny_model.py OUT.gguf [--context 32768] [--seed 1234] [--swa TOKENS]
       make_tiny_model.py OUT_DIR --hf [--context 32768]   (a Hugging Face directory for vLLM)

``--swa TOKENS`` writes it as a Gemma 2 architecture instead, whose every other layer attends only to
the last TOKENS positions (sliding-window attention): the model kind on which llama-server cannot roll
its cache back to an earlier point of the prompt without a checkpoint, and says it forces a full
re-processing. Same sizes, vocabulary and template.

``--hf`` writes the same idea as a Hugging Face model directory for vLLM's ``--load-format dummy``:
``config.json`` (LlamaForCausalLM), a byte-level BPE trained here with ``tokenizers`` (no hub download,
ever), and a chat template that renders tools and tool calls (Claude Code always sends tools).
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


def build(out: Path, *, context: int, seed: int, swa: int | None = None) -> Path:
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
    writer = gguf.GGUFWriter(str(tmp), "gemma2" if swa else "llama")
    writer.add_name("kvswitch-tiny-swa" if swa else "kvswitch-tiny")
    if swa:
        writer.add_sliding_window(swa)
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
    ones = np.ones(N_EMBD, dtype=np.float32)
    for i in range(N_LAYERS):
        writer.add_tensor(f"blk.{i}.attn_norm.weight", ones)
        writer.add_tensor(f"blk.{i}.attn_q.weight", weights(N_EMBD, N_EMBD))
        writer.add_tensor(f"blk.{i}.attn_k.weight", weights(n_embd_kv, N_EMBD))
        writer.add_tensor(f"blk.{i}.attn_v.weight", weights(n_embd_kv, N_EMBD))
        writer.add_tensor(f"blk.{i}.attn_output.weight", weights(N_EMBD, N_EMBD))
        writer.add_tensor(f"blk.{i}.ffn_norm.weight", ones)
        writer.add_tensor(f"blk.{i}.ffn_gate.weight", weights(N_FF, N_EMBD))
        writer.add_tensor(f"blk.{i}.ffn_up.weight", weights(N_FF, N_EMBD))
        writer.add_tensor(f"blk.{i}.ffn_down.weight", weights(N_EMBD, N_FF))
        if swa:  # Gemma 2 normalises after attention and after the feed-forward too
            writer.add_tensor(f"blk.{i}.post_attention_norm.weight", ones)
            writer.add_tensor(f"blk.{i}.post_ffw_norm.weight", ones)
    writer.add_tensor("output_norm.weight", ones)
    if not swa:  # Gemma 2 ties its output to the token embeddings
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
    parser.add_argument("--swa", type=int, default=None, metavar="TOKENS",
                        help="a sliding-window (Gemma 2) model attending to the last TOKENS positions")
    parser.add_argument("--hf", action="store_true",
                        help="write a Hugging Face model directory (for vLLM --load-format dummy) instead")
    args = parser.parse_args(argv)
    if args.hf:
        return _main_hf(args.out, args.context)
    try:
        path = build(args.out, context=args.context, seed=args.seed, swa=args.swa)
    except ImportError:
        print("make_tiny_model: the 'gguf' package is missing (pip install gguf)", file=sys.stderr)
        return 3
    print(path)
    return 0


#: vLLM's model: hidden 128 and head_dim 64 (vLLM's CPU attention wants head sizes of 32, 64, 80, ...)
HF_HIDDEN = 128
HF_HEADS = 2
HF_KV_HEADS = 1
HF_VOCAB = 8192
#: Hermes-style tool-call markers: vLLM's `hermes` tool parser refuses a tokenizer without them
HF_SPECIAL_TOKENS = (*SPECIAL_TOKENS, "<tool_call>", "</tool_call>")
#: a ChatML template that renders tools, assistant tool calls and tool results; content may be a
#: string or a list of text parts (vLLM passes either, depending on how it reads the template)
HF_CHAT_TEMPLATE = (
    "{%- macro text(content) -%}{%- if content is string -%}{{ content }}{%- elif content -%}"
    "{%- for part in content -%}{%- if part['text'] is defined -%}{{ part['text'] }}{%- endif -%}"
    "{%- endfor -%}{%- endif -%}{%- endmacro -%}"
    "{% if tools %}<|im_start|>system\n# Tools\n{% for tool in tools %}{{ tool | tojson }}\n{% endfor %}"
    "<|im_end|>\n{% endif %}"
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ text(message['content']) }}"
    "{% if message['tool_calls'] is defined and message['tool_calls'] %}"
    "{% for call in message['tool_calls'] %}"
    "<tool_call>{{ call['function'] | tojson }}</tool_call>{% endfor %}{% endif %}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


#: text like what the model is sent: Claude Code's own captured requests (system prompt, tool schemas)
#: and the project's docs, so a Claude Code prompt (~48 KB) is ~15k tokens, not more than the context
TRAINING_FILES = ("tests/fixtures/claude-code-2.1.332/request_attribution_default_1.json", "README.md",
                  "docs/verify.md", "docs/log-engine.md", "docs/architecture.md")


def _training_text() -> list[str]:
    """A fixed corpus from this checkout, so the BPE (and every token count) is the same on every machine
    with the same commit."""
    repo = Path(__file__).resolve().parents[1]
    texts = [(repo / name).read_text(encoding="utf-8") for name in TRAINING_FILES if (repo / name).is_file()]
    words = (
        "the", "cache", "prefix", "request", "server", "model", "token", "prompt", "reply", "with",
        "one", "word", "ready", "again", "done", "name", "colour", "system", "user", "assistant", "tool",
        "call", "result", "file", "read", "write", "edit", "search", "answer", "block", "hit", "miss",
        "reuse", "verify", "session", "turn", "claude", "code", "local", "test", "json", "function",
    )
    lines = [" ".join(words[(i * 7 + j) % len(words)] for j in range(12)) for i in range(400)]
    lines.append("".join(chr(c) for c in range(32, 127)))
    return lines + texts


def build_hf(out: Path, *, context: int) -> Path:
    """Write ``out/`` (config, tokenizer, template) atomically: a temporary directory, then a rename."""
    import json  # noqa: PLC0415
    import shutil  # noqa: PLC0415

    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers  # noqa: PLC0415

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=HF_VOCAB, special_tokens=list(HF_SPECIAL_TOKENS),
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tokenizer.train_from_iterator(_training_text(), trainer)
    ids = {name: tokenizer.token_to_id(name) for name in HF_SPECIAL_TOKENS}
    vocab = tokenizer.get_vocab_size()
    config = {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": HF_HIDDEN,
        "intermediate_size": 2 * HF_HIDDEN, "num_hidden_layers": 2, "num_attention_heads": HF_HEADS,
        "num_key_value_heads": HF_KV_HEADS, "head_dim": HF_HIDDEN // HF_HEADS,
        "max_position_embeddings": context, "vocab_size": vocab, "rms_norm_eps": 1e-5,
        "rope_theta": 10000.0, "hidden_act": "silu", "tie_word_embeddings": False, "torch_dtype": "float32",
        "bos_token_id": ids["<|endoftext|>"], "eos_token_id": ids["<|im_end|>"],
    }
    tokenizer_config = {
        "tokenizer_class": "PreTrainedTokenizerFast", "model_max_length": context,
        "bos_token": "<|endoftext|>", "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>",
        "unk_token": None, "add_bos_token": False, "chat_template": HF_CHAT_TEMPLATE,
        "added_tokens_decoder": {str(i): {"content": name, "special": True, "lstrip": False,
                                          "rstrip": False, "normalized": False, "single_word": False}
                                 for name, i in ids.items()},
    }
    generation = {"bos_token_id": ids["<|endoftext|>"], "eos_token_id": ids["<|im_end|>"]}
    tmp = out.with_name(out.name + f".{os.getpid()}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    tokenizer.save(str(tmp / "tokenizer.json"))
    special_map = {"bos_token": "<|endoftext|>", "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"}
    for name, payload in (("config.json", config), ("tokenizer_config.json", tokenizer_config),
                          ("generation_config.json", generation), ("special_tokens_map.json", special_map)):
        (tmp / name).write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    shutil.rmtree(out, ignore_errors=True)
    os.replace(tmp, out)
    return out


def _main_hf(out: Path, context: int) -> int:
    os.environ["HF_HUB_OFFLINE"] = "1"
    try:
        print(build_hf(out, context=context))
    except ImportError as exc:
        print(f"make_tiny_model: --hf needs the 'tokenizers' package ({exc})", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
