"""KV Switch: profile switching for Claude Code and Codex, with prompt-cache visibility."""

__version__ = "0.1.0"
