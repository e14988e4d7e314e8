#!/usr/bin/env bash
# Install a pinned Codex CLI with npm into ~/.cache/kvswitch/codex/<version> (for the end-to-end tests)
# and print the path of its native `codex` binary on stdout. Re-runs are free once installed.
# The npm package is a node launcher plus one optional dependency per platform that carries the native
# binary (a static musl build on Linux); nothing is built at install time, so scripts are not run.
set -euo pipefail
VERSION="${CODEX_VERSION:-0.169.0}"
CACHE="${KVSWITCH_CACHE:-$HOME/.cache/kvswitch}/codex/$VERSION"

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64|Linux-amd64) pkg=codex-linux-x64; triple=x86_64-unknown-linux-musl ;;
  Linux-aarch64|Linux-arm64) pkg=codex-linux-arm64; triple=aarch64-unknown-linux-musl ;;
  Darwin-x86_64) pkg=codex-darwin-x64; triple=x86_64-apple-darwin ;;
  Darwin-arm64) pkg=codex-darwin-arm64; triple=aarch64-apple-darwin ;;
  *) echo "install_codex: unsupported platform $(uname -s) $(uname -m)" >&2; exit 3 ;;
esac

find_bin() {
  local candidate
  for candidate in "$CACHE/node_modules/@openai/$pkg/vendor/$triple/bin/codex" \
                   "$CACHE/node_modules/@openai/codex/vendor/$triple/bin/codex"; do
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
command -v npm >/dev/null || { echo "install_codex: npm is missing (install Node.js and npm)" >&2; exit 3; }
mkdir -p "$CACHE"
npm install --prefix "$CACHE" --no-audit --no-fund --ignore-scripts --loglevel=error \
  "@openai/codex@$VERSION" >&2
bin="$(find_bin)" || { echo "install_codex: no codex binary for $triple in $CACHE" >&2; exit 4; }
chmod +x "$bin" 2>/dev/null || true
"$bin" --version >/dev/null 2>&1 || { echo "install_codex: $bin does not run" >&2; exit 4; }
echo "$bin"
