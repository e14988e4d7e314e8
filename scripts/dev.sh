#!/usr/bin/env bash
# One entry point for a fresh Debian/Ubuntu machine:
#   scripts/dev.sh run   - install what the app needs and launch it
#   scripts/dev.sh test  - install what the tests need (real shells, Xvfb, a real llama-server,
#                          Claude Code, Codex 0.169.0 and 0.171.0, OpenCode, ccusage, vLLM) and run the whole suite;
#                          under CI=true a real component that cannot be installed fails the run
#   scripts/dev.sh components [NAME...] - only install/find the real components and print their exports
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
# fontconfig (fc-list) and one Latin-only font: tests/ui/test_cjk_font.py builds a system without CJK fonts;
# sqlite3 (the shell): benchmarks/usage_scale.py's baseline; redis-server: LMCache's Redis L2 tier (the tests
# start their own on a free port)
APT_TEST=(bash zsh fish xvfb xauth cmake g++ make git desktop-file-utils appstream fontconfig fonts-dejavu-core
  sqlite3 redis-server)

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

under_ci() {
  case "${CI:-}" in [Tt][Rr][Uu][Ee]|1|[Yy][Ee][Ss]|[Oo][Nn]) return 0 ;; *) return 1 ;; esac
}

# The real components the tests run, each exported as the variable the tests read (tests/support/require.py
# has the same table). The installers cache under ~/.cache/kvswitch, print the path on stdout, and say on
# stderr why when they cannot. A variable already set to an executable is used as it is (your own build).
# the installers' cache, exported so the tests look there too (their HOME is a temporary one)
export KVSWITCH_CACHE="${KVSWITCH_CACHE:-$HOME/.cache/kvswitch}"
CODEX_NEW_VERSION="${CODEX_NEW_VERSION:-0.171.0}"
ALL_COMPONENTS=(llama-server claude-code codex codex-new opencode ccusage vllm)
COMPONENT_FAILURES=()
COMPONENT_EXPORTS=()

# component LABEL VARIABLE COMMAND...: start COMMAND in the background (the installers are independent:
# a compiler build, pip and npm downloads overlap instead of queueing; a fresh machine is the slow case).
# finish_components then exports VARIABLE as the path COMMAND printed. When COMMAND fails, its last
# stderr line is the reason: under CI=true the run will fail naming LABEL and the reason; on a
# developer's machine that tier's tests are skipped, each printing its reason in pytest's summary.
COMPONENT_DIR=""
COMPONENT_LABELS=()
COMPONENT_VARIABLES=()
COMPONENT_PIDS=()
COMPONENT_STARTED=()
component() {
  local label="$1" variable="$2" index="${#COMPONENT_LABELS[@]}"
  shift 2
  [ -n "$COMPONENT_DIR" ] || COMPONENT_DIR="$(mktemp -d)"
  COMPONENT_LABELS+=("$label")
  COMPONENT_VARIABLES+=("$variable")
  COMPONENT_STARTED+=("$SECONDS")
  if [ -n "${!variable:-}" ] && [ -f "${!variable}" ] && [ -x "${!variable}" ]; then
    printf '%s\n' "${!variable}" > "$COMPONENT_DIR/$index.out"
    COMPONENT_PIDS+=("")
    return 0
  fi
  (
    rc=0
    "$@" > "$COMPONENT_DIR/$index.out" 2> "$COMPONENT_DIR/$index.err" || rc=$?
    echo "$((SECONDS - COMPONENT_STARTED[index]))" > "$COMPONENT_DIR/$index.seconds"
    exit "$rc"
  ) &
  COMPONENT_PIDS+=("$!")
}

# finish_components: wait for every installer started by `component`, in order; print each one's own
# messages as one block (not interleaved with the others'), then export what it found; under CI=true,
# exit 1 naming every one that is missing, with its reason
finish_components() {
  local index label variable path reason rc told
  for index in "${!COMPONENT_LABELS[@]}"; do
    label="${COMPONENT_LABELS[$index]}" variable="${COMPONENT_VARIABLES[$index]}" path="" reason="" rc=0
    if [ -n "${COMPONENT_PIDS[$index]}" ]; then
      # a line a minute while it runs, so a CI log never goes silent through a long build
      told=$SECONDS
      while kill -0 "${COMPONENT_PIDS[$index]}" 2>/dev/null; do
        sleep 2
        if [ $((SECONDS - told)) -ge 60 ]; then
          told=$SECONDS
          echo "dev.sh: $label: still installing ($((SECONDS - COMPONENT_STARTED[index])) s)" >&2
        fi
      done
      wait "${COMPONENT_PIDS[$index]}" || rc=$?
      [ -s "$COMPONENT_DIR/$index.err" ] && sed "s/^/[$label] /" "$COMPONENT_DIR/$index.err" >&2
      echo "dev.sh: $label: installer took $(cat "$COMPONENT_DIR/$index.seconds" 2>/dev/null || echo '?') s" >&2
    fi
    if [ "$rc" -eq 0 ]; then
      path="$(tail -n 1 "$COMPONENT_DIR/$index.out")"
      reason="its installer printed no path"
    else
      reason="$(grep -v '^[[:space:]]*$' "$COMPONENT_DIR/$index.err" | tail -n 1)"
      reason="${reason:-its installer exited non-zero and said nothing}"
    fi
    if [ -n "$path" ]; then
      export "$variable=$path"
      COMPONENT_EXPORTS+=("$variable=$path")
      echo "dev.sh: $label: $path" >&2
    elif under_ci; then
      COMPONENT_FAILURES+=("$label: $reason")
      echo "dev.sh: $label could not be installed or found: $reason" >&2
    else
      echo "dev.sh: $label could not be installed or found ($reason); its tests will be skipped" >&2
    fi
  done
  rm -rf "$COMPONENT_DIR"
  COMPONENT_DIR=""
  if [ ${#COMPONENT_FAILURES[@]} -gt 0 ]; then
    echo "dev.sh: CI=true and ${#COMPONENT_FAILURES[@]} real component(s) could not be installed or found:" >&2
    printf 'dev.sh:   %s\n' "${COMPONENT_FAILURES[@]}" >&2
    exit 1
  fi
}

# the vLLM tier's installer prints the python of vLLM's venv; under CI a checkout without it fails
vllm_python() {
  [ -f scripts/install_vllm.sh ] || { echo "dev.sh: scripts/install_vllm.sh is not in this checkout" >&2; return 3; }
  bash scripts/install_vllm.sh
}

# start_components [NAME...]: start installing or finding the named components (default: all of
# ALL_COMPONENTS), each in the background
start_components() {
  local name
  [ $# -gt 0 ] || set -- "${ALL_COMPONENTS[@]}"
  for name in "$@"; do
    case "$name" in
      llama-server) component llama-server KVSWITCH_LLAMA_SERVER bash scripts/build_llama_server.sh ;;
      claude-code) component "Claude Code" KVSWITCH_CLAUDE_BIN bash scripts/install_claude_code.sh ;;
      codex) component "Codex ${CODEX_VERSION:-0.169.0}" KVSWITCH_CODEX_BIN bash scripts/install_codex.sh ;;
      codex-new) component "Codex $CODEX_NEW_VERSION" KVSWITCH_CODEX_NEW_BIN \
                   env CODEX_VERSION="$CODEX_NEW_VERSION" bash scripts/install_codex.sh ;;
      opencode) component OpenCode KVSWITCH_OPENCODE_BIN bash scripts/install_opencode.sh ;;
      # the usage anchor the sessions tests compare with (tests/e2e/test_e2e_sessions.py)
      ccusage) component "ccusage 18.0.11" KVSWITCH_CCUSAGE bash scripts/install_ccusage.sh ;;
      vllm) component vLLM KVSWITCH_VLLM_PYTHON vllm_python ;;
      *) echo "dev.sh: no component '$name' (known: ${ALL_COMPONENTS[*]})" >&2; exit 2 ;;
    esac
  done
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
    start_components  # while the app's own venv installs
    python_env "[test]"
    finish_components
    export QT_QPA_PLATFORM="${QT_QPA_PLATFORM:-offscreen}"
    "$VENV/bin/ruff" check app tests benchmarks scripts
    "$VENV/bin/mypy"
    "$VENV/bin/lint-imports"  # the layer contracts in pyproject.toml
    # start-up figures for the CI log (a reported ratio against a bare PySide6 window, not a timed
    # assertion: the pre-paint import boundary is what tests/ui/test_startup_boundary.py checks)
    "$VENV/bin/python" benchmarks/ui_startup.py --runs 5 | sed 's/^/ui start-up: /' \
      || echo "dev.sh: the start-up benchmark did not run" >&2
    xvfb=(xvfb-run -a -s "-screen 0 1280x1024x24")
    (($#)) && exec "${xvfb[@]}" "$VENV/bin/python" -m pytest "$@"  # the tests named, as named
    # The whole suite in two parts. The tests that drive a real server or client (marked real_server:
    # llama-server, vLLM + LMCache, Claude Code, Codex, OpenCode) run one at a time, as each is measured,
    # with the machine to themselves; the rest (files, shells, Qt, scripted servers) run on two workers,
    # a file per worker at a time (about 7 instead of 15 minutes on 2 cores, measured on 2026-12-07).
    # Both parts always run; the first that failed gives the exit status.
    status=0
    "${xvfb[@]}" "$VENV/bin/python" -m pytest -m "not real_server" -n 2 --dist loadfile || status=$?
    "${xvfb[@]}" "$VENV/bin/python" -m pytest -m real_server || { rc=$?; ((status)) || status=$rc; }
    exit "$status"
    ;;
  components)
    # the component section alone (no apt, no venv): `eval "$(scripts/dev.sh components)"` exports them
    start_components "$@"
    finish_components
    for assignment in "${COMPONENT_EXPORTS[@]}"; do printf 'export %q\n' "$assignment"; done
    ;;
  translations)
    python_env ""
    ts=app/kvswitch/ui/i18n/kvswitch_zh_CN.ts
    mapfile -t sources < <(find app/kvswitch/ui -name '*.py' | sort)
    "$VENV/bin/pyside6-lupdate" -no-obsolete "${sources[@]}" -ts "$ts"
    "$VENV/bin/pyside6-lrelease" "$ts" -qm "${ts%.ts}.qm"
    # the bundled CJK font subset follows the translations' characters (scripts/make_cjk_font.py)
    if command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null; then
      "$VENV/bin/python" -c "import fontTools" 2>/dev/null || "$VENV/bin/pip" install -q "fonttools>=4.47"
      "$VENV/bin/python" scripts/make_cjk_font.py
    else
      echo "dev.sh: apt-get/dpkg-deb are missing, so resources/fonts was not regenerated" >&2
    fi
    ;;
  *)
    echo "usage: scripts/dev.sh run|test|components|translations [args...]" >&2
    exit 2
    ;;
esac
