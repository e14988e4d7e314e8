#!/usr/bin/env bash
# Install a pinned Claude Code with npm into ~/.cache/kvswitch/claude-code/<version> (for the end-to-end
# tests) and print the path of its native `claude` binary on stdout. Re-runs are free once installed.
set -euo pipefail
VERSION="${CLAUDE_CODE_VERSION:-2.1.332}"
CACHE="${KVSWITCH_CACHE:-$HOME/.cache/kvswitch}/claude-code/$VERSION"

case "$(uname -s)" in
  Linux) os=linux ;;
  Darwin) os=darwin ;;
  *) echo "install_claude_code: unsupported OS $(uname -s)" >&2; exit 3 ;;
esac
case "$(uname -m)" in
  x86_64|amd64) arch=x64 ;;
  aarch64|arm64) arch=arm64 ;;
  *) echo "install_claude_code: unsupported CPU $(uname -m)" >&2; exit 3 ;;
esac

find_bin() {
  local candidate
  for candidate in "$CACHE/node_modules/@anthropic-ai/claude-code-$os-$arch/claude" \
                   "$CACHE/node_modules/@anthropic-ai/claude-code-$os-$arch-musl/claude" \
                   "$CACHE/node_modules/.bin/claude"; do
    if [ -f "$candidate" ]; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}

if bin="$(find_bin)" && "$bin" --version >/dev/null 2>&1; then
  echo "$bin"
  exit 0
fi
command -v npm >/dev/null || { echo "install_claude_code: npm is missing (install Node.js and npm)" >&2; exit 3; }
mkdir -p "$CACHE"
# the native binary runs without the package's postinstall step, so scripts are not run
npm install --prefix "$CACHE" --no-audit --no-fund --ignore-scripts --loglevel=error \
  "@anthropic-ai/claude-code@$VERSION" >&2
bin="$(find_bin)" || { echo "install_claude_code: no claude binary for $os-$arch in $CACHE" >&2; exit 4; }
chmod +x "$bin" 2>/dev/null || true
"$bin" --version >/dev/null 2>&1 || { echo "install_claude_code: $bin does not run" >&2; exit 4; }
echo "$bin"
