#!/usr/bin/env bash
# Run the log engine's tests against the native walk built with AddressSanitizer and UBSan.
#   scripts/sanitize_native_scan.sh [pytest args...]
# The scanner is compiled into a temporary copy of app/ (the source tree is left as it is); Python's own
# allocator is switched to malloc so that reads past a bytes object's end are caught too.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-.venv/bin/python}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp -r app "$work/app"
rm -f "$work"/app/kvswitch/logs/_blockscan*.so
include="$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')"
suffix="$("$PY" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')"
gcc -g -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fPIC -shared -I"$include" \
  app/kvswitch/logs/_native/{match,walk,rows,module}.c -o "$work/app/kvswitch/logs/_blockscan$suffix"
export LD_PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)"
export ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 PYTHONMALLOC=malloc
export PYTHONPATH="$work/app" QT_QPA_PLATFORM=offscreen
"$PY" -c 'import sys, kvswitch.logs._blockscan as m; sys.exit(0 if m.__file__.startswith(sys.argv[1]) else 1)' "$work"
"$PY" -m pytest -q -p no:cacheprovider tests/logs "$@"
