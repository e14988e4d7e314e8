#!/usr/bin/env bash
# One entry point for a fresh Debian/Ubuntu machine:
#   scripts/dev.sh run   - install what the app needs and launch it
#   scripts/dev.sh test  - install what the tests need (real shells, Xvfb, a real llama-server,
#                          Claude Code, Codex, OpenCode) and run the whole suite
#   scripts/dev.sh translations - bring the zh_CN .ts file up to date with every ui source and compile it
# Idempotent: everything already installed or built (under ~/.cache/kvswitch) is reused.
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-}"
shift || true
VENV="${KVSWITCH_VENV:-.venv}"

# python3-dev and gcc build the native log scanner (kvswitch.logs._blockscan) during the install
APT_RUNTIME=(python3 python3-venv python3-pip python3-dev gcc libegl1 libgl1 libxkbcommon-x11-0 libxcb-cursor0 libxcb-icccm4
  libxcb-image0 libxcb-keysyms1 libxcb-randr0 libxcb-render-util0 libxcb-shape0 libxcb-xinerama0 libxcb-xfixes0
  libdbus-1-3 libfontconfig1 libglib2.0-0)
# fontconfig (fc-list) and one Latin-only font: tests/ui/test_cjk_font.py builds a system without CJK fonts
APT_TEST=(bash zsh fish xvfb xauth cmake g++ make git desktop-file-utils appstream fontconfig fonts-dejavu-core)

apt_install() {
  command -v apt-get >/dev/null || return 0
  local missing=()
  for pkg in "$@"; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "dev.sh: installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

python_env() {
  local extra="$1"
  if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
  fi
  "$VENV/bin/python" -m pip install -q --upgrade pip >&2
  "$VENV/bin/python" -m pip install -q -e ".$extra" >&2
}

# install_client LABEL VARIABLE SCRIPT: export VARIABLE as the binary scripts/SCRIPT prints (its
# install cached under ~/.cache/kvswitch by scripts/install_npm_client.sh); when the install fails,
# the script has said why on stderr and that client's end-to-end tier is skipped
install_client() {
  local bin
  if bin="$(bash "scripts/$3")"; then
    export "$2=$bin"
    echo "dev.sh: $1: $bin" >&2
  else
    echo "dev.sh: $1 could not be installed; its end-to-end tier will be skipped" >&2
  fi
}

case "$mode" in
  run)
    apt_install "${APT_RUNTIME[@]}"
    python_env ""
    exec "$VENV/bin/kvswitch" "$@"
    ;;
  test)
    apt_install "${APT_RUNTIME[@]}" "${APT_TEST[@]}"
    # Node.js may come from elsewhere than Debian (its own npm conflicts with Debian's): only fill a gap.
    command -v npm >/dev/null || apt_install nodejs npm
    python_env "[test]"
    if llama="$(bash scripts/build_llama_server.sh)"; then
      export KVSWITCH_LLAMA_SERVER="$llama"
    else
      echo "dev.sh: llama-server could not be built; the real-server tier will be skipped" >&2
    fi
    # each client binary is optional: a failed install leaves its variable unset and its tests skip with the reason
    install_client "Claude Code" KVSWITCH_CLAUDE_BIN install_claude_code.sh
    install_client Codex KVSWITCH_CODEX_BIN install_codex.sh
    install_client OpenCode KVSWITCH_OPENCODE_BIN install_opencode.sh
    export QT_QPA_PLATFORM="${QT_QPA_PLATFORM:-offscreen}"
    "$VENV/bin/ruff" check app tests benchmarks scripts
    "$VENV/bin/mypy"
    "$VENV/bin/lint-imports"  # the layer contracts in pyproject.toml
    # start-up figures for the CI log (a reported ratio against a bare PySide6 window, not a timed
    # assertion: the pre-paint import boundary is what tests/ui/test_startup_boundary.py checks)
    "$VENV/bin/python" benchmarks/ui_startup.py --runs 5 | sed 's/^/ui start-up: /' \
      || echo "dev.sh: the start-up benchmark did not run" >&2
    exec xvfb-run -a -s "-screen 0 1280x1024x24" "$VENV/bin/python" -m pytest "$@"
    ;;
  translations)
    python_env ""
    ts=app/kvswitch/ui/i18n/kvswitch_zh_CN.ts
    mapfile -t sources < <(find app/kvswitch/ui -name '*.py' | sort)
    "$VENV/bin/pyside6-lupdate" -no-obsolete "${sources[@]}" -ts "$ts"
    "$VENV/bin/pyside6-lrelease" "$ts" -qm "${ts%.ts}.qm"
    # the bundled CJK font subset follows the translations' characters (scripts/make_cjk_font.py)
    if command -v npm >/dev/null; then
      "$VENV/bin/python" -c "import fontTools" 2>/dev/null || "$VENV/bin/pip" install -q "fonttools>=4.47"
      "$VENV/bin/python" scripts/make_cjk_font.py
    else
      echo "dev.sh: npm is missing, so resources/fonts was not regenerated" >&2
    fi
    ;;
  *)
    echo "usage: scripts/dev.sh run|test|translations [args...]" >&2
    exit 2
    ;;
esac
