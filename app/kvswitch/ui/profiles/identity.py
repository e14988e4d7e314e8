"""Who a profile talks to, in the words users use: the vendor and its API, or the server kind.

A DeepSeek profile is of kind "openai-compatible" (a gateway KV Switch speaks to by URL), which says
nothing to its user; its URL says "DeepSeek's Anthropic API". Cards, the editor and the tray name a
profile by ``identity``: the catalog vendor its URL belongs to (``servers.vendor_match``) with its
logo, else the kind's name. The kind combo's names come from ``kind_name``, translated.

Loaded with the cards, after the window's first paint (the catalog is pydantic).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from urllib.parse import urlsplit

from PySide6.QtCore import QCoreApplication

from kvswitch.ui.widgets import icons


@dataclass(frozen=True)
class Identity:
    """``name`` (vendor or kind), ``api`` (the vendor's protocol at that URL, "" for a kind), the logo
    file (None: the collection has none) and the catalog vendor id (None: no vendor's URL)."""

    name: str
    api: str
    logo: str | None
    vendor_id: str | None

    @property
    def label(self) -> str:
        """``DeepSeek · Anthropic API``, or the kind's name alone."""
        return f"{self.name} · {self.api}" if self.api else self.name

    @property
    def monogram(self) -> str:
        """Two letters for a glyph when there is no logo: the vendor's own (``Ta``), never a kind's."""
        letters = [c for c in self.name if c.isalnum()]
        return ("".join(letters[:2]) or "•").title() if self.vendor_id else ""


def kind_name(kind: str) -> str:
    """The kind as users call it (the kind combo, a non-vendor profile's card and tray line)."""
    names = {
        "anthropic": QCoreApplication.translate("ProfileIdentity", "Anthropic (Claude API)"),
        "openai-compatible": QCoreApplication.translate("ProfileIdentity", "Cloud API or gateway (by URL)"),
        "llama.cpp": QCoreApplication.translate("ProfileIdentity", "llama.cpp (llama-server)"),
        "lm-studio": QCoreApplication.translate("ProfileIdentity", "LM Studio"),
        "vllm": QCoreApplication.translate("ProfileIdentity", "vLLM"),
        "sglang": QCoreApplication.translate("ProfileIdentity", "SGLang"),
        "ollama": QCoreApplication.translate("ProfileIdentity", "Ollama"),
        "custom": QCoreApplication.translate("ProfileIdentity", "Other server (custom URL)"),
    }
    return names.get(kind, kind)


def kind_description(kind: str, english: str) -> str:
    """The gallery's line about a local preset, translated (``english``: the server module's own line,
    shown when this list has none for the kind)."""
    translate = QCoreApplication.translate
    lines = {
        "anthropic": translate("ProfileIdentity", "Anthropic's own API (Claude Code's default backend)."),
        "custom": translate("ProfileIdentity", "Anything else; nothing is pre-filled."),
        "llama.cpp": translate("ProfileIdentity", "llama-server; run it with --log-file to let KV Switch "
                                                  "follow its log."),
        "lm-studio": translate("ProfileIdentity", "LM Studio's local server; logs in "
                                                  "~/.lmstudio/server-logs."),
        "ollama": translate("ProfileIdentity", "Ollama (0.30+ runs llama-server internally)."),
        "openai-compatible": translate("ProfileIdentity", "Any gateway speaking the OpenAI API (Codex) or "
                                                          "Anthropic API (Claude Code)."),
        "sglang": translate("ProfileIdentity", "SGLang; start it with --enable-cache-report to see cached "
                                               "tokens."),
        "vllm": translate("ProfileIdentity", "vLLM (optionally with LMCache)."),
    }
    return lines.get(kind, english)


def api_label(protocol_label: str) -> str:
    """A protocol's label (``servers.vendor_match.PROTOCOL_LABELS``), translated."""
    labels = {
        "Anthropic API": QCoreApplication.translate("ProfileIdentity", "Anthropic API"),
        "OpenAI Chat API": QCoreApplication.translate("ProfileIdentity", "OpenAI Chat API"),
        "OpenAI Responses API": QCoreApplication.translate("ProfileIdentity", "OpenAI Responses API"),
    }
    return labels.get(protocol_label, protocol_label)


@functools.lru_cache(maxsize=512)
def identity(base_url: str, kind: str, locale: str = "en") -> Identity:
    """The vendor behind ``base_url`` (its name in ``locale``, its API, its logo), else the kind.

    Cached per (URL, kind, language): a card paints often, its profile's URL rarely changes.
    """
    from kvswitch.servers.vendor_match import vendor_for_url  # noqa: PLC0415 - the catalog, on first card

    match = vendor_for_url(base_url)
    if match is not None:
        entry = match.vendor
        return Identity(entry.display_name(locale), api_label(match.protocol_label),
                        icons.VENDOR_LOGOS.get(entry.id), entry.id)
    return Identity(kind_name(kind), "", icons.KIND_LOGOS.get(kind), None)


def card_detail(base_url: str, kind: str, model: str, locale: str = "en") -> str:
    """A card's second line: ``DeepSeek · Anthropic API · model`` for a vendor, ``host · model`` else
    (the host tells two local servers apart; the glyph already shows the kind)."""
    found = identity(base_url, kind, locale)
    if found.vendor_id is not None:
        return f"{found.label} · {model}"
    host = urlsplit(base_url).netloc or base_url
    return f"{host} · {model}"
