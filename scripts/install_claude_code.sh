#!/usr/bin/env bash
# Install a pinned Claude Code with npm into ~/.cache/kvswitch/claude-code/<version> (for the end-to-end
# tests) and print the path of its native `claude` binary on stdout (scripts/install_npm_client.sh).
# The package carries the binary in one optional dependency per platform (glibc or musl on Linux).
set -euo pipefail
VERSION="${CLAUDE_CODE_VERSION:-2.1.332}"
exec bash "$(dirname "$0")/install_npm_client.sh" claude-code @anthropic-ai/claude-code "$VERSION" \
  "@anthropic-ai/claude-code-{os}-{arch}/claude" \
  "@anthropic-ai/claude-code-{os}-{arch}-musl/claude" \
  ".bin/claude"
