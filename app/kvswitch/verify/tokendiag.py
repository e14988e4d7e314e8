"""Where two requests stop sharing a prefix in the server's own tokens, and why.

The JSON comparison in ``diagnose`` works on bytes of the request, which is not what a server reuses: a
message whose content turns from a list into a string renders identically, and a few changed bytes
can move the token boundary. Here both requests are rendered by the server's chat template and
tokenized by its tokenizer (the routes its server module declares as ``rendering``), so
``shared_tokens`` is the common prefix the server can reuse from A for B. The place of the divergence
is mapped back to the request part whose text holds it, and a cause is named only when the rendered
prompts really differ there.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from kvswitch.core.strictparse import loads as strict_json
from kvswitch.verify.diagnose import (
    PrefixDiagnosis,
    closing_lines,
    diagnose_requests,
    request_body,
    snippet_lines,
)
from kvswitch.verify.parts import prompt_parts
from kvswitch.verify.render_client import RenderError, ServerRenderer

__all__ = ["RenderError", "ServerRenderer", "TokenDiagnosis", "diagnose_tokens"]

SNIPPET_CHARS = 48
#: shortest text of a request part worth searching for in the rendered prompt
MIN_NEEDLE = 6


@dataclass(frozen=True)
class TokenDiagnosis:
    """Request B against request A, counted in the server's tokens.

    ``shared_tokens`` is the length of the common token prefix of the two rendered prompts;
    ``divergence_char`` the character offset in B's rendered prompt where the first differing token
    starts; ``part`` the request part of B whose text is there (or the template text between parts).
    ``checked`` says the rendered token counts equal the server's own count for the original bodies.
    """

    server: str
    tokens_a: int
    tokens_b: int
    shared_tokens: int
    identical: bool
    extends: bool
    divergence_token: int | None
    divergence_char: int | None
    part: str | None
    snippet_common: str
    snippet_a: str
    snippet_b: str
    checked: bool
    cause: str | None = None
    cause_text: str | None = None
    fix_env: dict[str, str] | None = None
    json_diff: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def reusable(self) -> bool:
        return self.identical or self.extends

    def to_json(self) -> dict[str, Any]:
        return {"units": "tokens", **asdict(self)}

    def describe(self) -> str:
        share = self.shared_tokens / self.tokens_b if self.tokens_b else 1.0
        head = f"In the server's tokens ({self.server}): A has {self.tokens_a}, B has {self.tokens_b}."
        if self.identical:
            lines = [head, "The rendered prompts are identical: the whole prompt can be reused."]
        elif self.extends:
            lines = [head, f"B continues A: all {self.shared_tokens} tokens of A can be reused."]
        else:
            lines = [
                head,
                f"The server can reuse {self.shared_tokens} tokens ({share:.1%} of B); the prompts part at "
                f"token {self.divergence_token}, inside {self.part}.",
                *snippet_lines(self.snippet_common, self.snippet_a, self.snippet_b),
            ]
        return "\n".join(lines + closing_lines(self.cause_text, self.fix_env, self.notes))


def _common_prefix(a: list[int], b: list[int]) -> int:
    limit = min(len(a), len(b))
    i = 0
    while i < limit and a[i] == b[i]:
        i += 1
    return i


def _string_leaves(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        kept = [item for key, item in value.items() if key != "cache_control"]
        return [leaf for item in kept for leaf in _string_leaves(item)]
    if isinstance(value, list):
        return [leaf for item in value for leaf in _string_leaves(item)]
    return []


def locate_part(body: dict[str, Any], rendered: str, offset: int) -> str:
    """The request part whose text covers ``offset`` of the rendered prompt (or what lies between)."""
    spans: list[tuple[int, int, str]] = []
    for part in prompt_parts(body):
        for leaf in _string_leaves(strict_json(part.data)):
            for needle in (leaf, json.dumps(leaf, ensure_ascii=False)[1:-1]):
                if len(needle) < MIN_NEEDLE:
                    continue
                start = rendered.find(needle)
                if start >= 0:
                    spans.append((start, start + len(needle), part.label))
                    break
    inside = [s for s in spans if s[0] <= offset < s[1]]
    if inside:
        return min(inside, key=lambda s: s[1] - s[0])[2]
    before = [s for s in spans if s[1] <= offset]
    after = [s for s in spans if s[0] > offset]
    prev = max(before, key=lambda s: s[1])[2] if before else None
    nxt = min(after, key=lambda s: s[0])[2] if after else None
    if prev and nxt:
        return f"template text between {prev} and {nxt}"
    if nxt:
        return f"template text before {nxt}"
    return f"template text after {prev}" if prev else "the rendered prompt"


def diagnose_tokens(renderer: ServerRenderer, a: dict[str, Any], b: dict[str, Any]) -> TokenDiagnosis:
    """Render and tokenize A and B with the server, and say where and why B stops reusing A."""
    body_a, body_b = request_body(a), request_body(b)
    ra, rb = renderer.render(body_a), renderer.render(body_b)
    shared = _common_prefix(ra.tokens, rb.tokens)
    json_diag = diagnose_requests(body_a, body_b)
    notes = [n for n in json_diag.notes if "model differs" in n]
    checked = ra.checked and rb.checked
    if not checked:
        notes.append(
            "the server's own token count differs from the rendered prompt's: the rendering may not "
            "be exactly what this server builds, so the numbers are approximate."
        )
    identical = ra.tokens == rb.tokens
    extends = not identical and shared == len(ra.tokens)
    if identical or extends:
        if not json_diag.identical and not json_diag.extends:
            notes.append(
                f"the request JSON differs ({json_diag.part}), but it renders to the same prompt "
                "tokens: no effect on reuse."
            )
        return TokenDiagnosis(
            renderer.name,
            len(ra.tokens),
            len(rb.tokens),
            shared,
            identical,
            extends,
            None,
            None,
            None,
            "",
            "",
            "",
            checked,
            json_diff=_brief(json_diag),
            notes=notes,
        )
    char_b = rb.char_offset(shared)
    char_a = ra.char_offset(shared)
    part = locate_part(body_b, rb.prompt, char_b)
    cause, text, fix = (None, None, None)
    if json_diag.part is not None and part.split(" (")[0] == json_diag.part.split(" (")[0]:
        cause, text, fix = json_diag.cause, json_diag.cause_text, json_diag.fix_env
    elif part.startswith("template text"):
        text = "the chat template's own text differs here (for example a different set of messages or tools)."
    return TokenDiagnosis(
        renderer.name,
        len(ra.tokens),
        len(rb.tokens),
        shared,
        False,
        False,
        shared,
        char_b,
        part,
        _printable(rb.prompt[max(0, char_b - SNIPPET_CHARS) : char_b]),
        _printable(ra.prompt[char_a : char_a + SNIPPET_CHARS]),
        _printable(rb.prompt[char_b : char_b + SNIPPET_CHARS]),
        checked,
        cause,
        text,
        fix,
        _brief(json_diag),
        notes,
    )


def _brief(diag: PrefixDiagnosis) -> dict[str, Any]:
    """What the byte-level JSON comparison said, kept beside the token numbers for reference."""
    return {
        "identical": diag.identical,
        "extends": diag.extends,
        "part": diag.part,
        "identical_bytes": diag.identical_bytes,
        "prompt_bytes": diag.prompt_bytes,
    }


def _printable(text: str) -> str:
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)
