#!/usr/bin/env bash
# Install a pinned npm client into ~/.cache/kvswitch/<name>/<version> and print the path of its native
# binary on stdout; re-runs are free once installed. The thin install_<client>.sh scripts call it:
#   install_npm_client.sh <name> <package> <version> <candidate>...
# Each candidate is a path under the install's node_modules where the package may put the binary, with
# {os} (linux, darwin), {arch} (x64, arm64) and {cpu} (x86_64, aarch64) filled in for this machine. The
# first candidate that exists and answers `--version` is printed. The native binaries need nothing built
# at install time, so package scripts are not run (a postinstall would only pick or link one of them).
# Exit status: 3 unsupported platform or no npm, 4 no working binary after the install; npm's own on
# a failed install. Messages go to stderr, prefixed install_<name>.
set -euo pipefail
[ $# -ge 4 ] || { echo "usage: install_npm_client.sh <name> <package> <version> <candidate>..." >&2; exit 2; }
name="$1" package="$2" version="$3"
shift 3
me="install_${name//-/_}"
CACHE="${KVSWITCH_CACHE:-$HOME/.cache/kvswitch}/$name/$version"

case "$(uname -s)" in
  Linux) os=linux ;;
  Darwin) os=darwin ;;
  *) echo "$me: unsupported OS $(uname -s)" >&2; exit 3 ;;
esac
case "$(uname -m)" in
  x86_64|amd64) arch=x64 cpu=x86_64 ;;
  aarch64|arm64) arch=arm64 cpu=aarch64 ;;
  *) echo "$me: unsupported CPU $(uname -m)" >&2; exit 3 ;;
esac

find_bin() {
  local template candidate
  for template in "$@"; do
    candidate="$CACHE/node_modules/$template"
    candidate="${candidate//\{os\}/$os}"
    candidate="${candidate//\{arch\}/$arch}"
    candidate="${candidate//\{cpu\}/$cpu}"
    [ -f "$candidate" ] || continue
    [ -x "$candidate" ] || chmod +x "$candidate" 2>/dev/null || true
    if "$candidate" --version >/dev/null 2>&1; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}

if bin="$(find_bin "$@")"; then
  echo "$bin"
  exit 0
fi
command -v npm >/dev/null || { echo "$me: npm is missing (install Node.js and npm)" >&2; exit 3; }
mkdir -p "$CACHE"
npm install --prefix "$CACHE" --no-audit --no-fund --ignore-scripts --loglevel=error \
  "$package@$version" >&2
bin="$(find_bin "$@")" || {
  echo "$me: no $(basename "$1") binary for $os-$arch in $CACHE runs here" >&2
  exit 4
}
echo "$bin"
