#!/usr/bin/env bash
# Starts the evcxr Rust kernel for crossling's notebooks. `./setup.sh --notebooks` registers it in .venv as the
# Jupyter kernel "crossling-rust" (kernel.json runs this file with `--control_file {connection_file}`).
#
# What it adds to plain evcxr_jupyter:
# - LIBTORCH and LD_LIBRARY_PATH: evcxr builds `:dep crossling = { path = ".." }` in its own folder, where
#   torch-sys needs LIBTORCH, and loads the result with dlopen, where libtorch must be on the library path (the
#   rpath that build.rs bakes into crossling's own binaries does not reach evcxr's code).
# - A reusable build folder (EVCXR_TMPDIR): evcxr otherwise builds in a fresh temporary folder per kernel, i.e.
#   compiles crossling and all its dependencies again each time a notebook starts. Here each running kernel holds
#   one of the slots .tools/evcxr-build/slot-N (an flock on slot-N.lock), so a notebook started after another one
#   finished reuses its build, and two kernels running at once never share a folder.
# - Cargo.lock: the project's lock file is copied into the slot, so the notebook builds the same dependency versions
#   as `cargo build`.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
EVCXR="$ROOT/.tools/evcxr/bin/evcxr_jupyter"
[ -x "$EVCXR" ] || { echo "evcxr-kernel: $EVCXR is missing; run ./setup.sh --notebooks in $ROOT" >&2; exit 1; }
export LIBTORCH="$ROOT/.venv/libtorch"
[ -d "$LIBTORCH/lib" ] || { echo "evcxr-kernel: $LIBTORCH/lib is missing; run ./setup.sh in $ROOT" >&2; exit 1; }
export LD_LIBRARY_PATH="$LIBTORCH/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# evcxr refreshes its kernel files under $JUPYTER_PATH/kernels/rust when that folder exists; pointing it at the
# venv (where our kernel is named crossling-rust) keeps it away from the user's own Jupyter folder.
export JUPYTER_PATH="$ROOT/.venv/share/jupyter"

BUILD="$ROOT/.tools/evcxr-build"
mkdir -p "$BUILD"
slot=""
if command -v flock >/dev/null 2>&1; then
  for i in 0 1 2 3 4 5 6 7; do
    exec 9>"$BUILD/slot-$i.lock"
    if flock -n 9; then slot="$BUILD/slot-$i"; break; fi
    exec 9>&-
  done
  # Eight kernels at once: the ninth builds in a folder of its own, removed on exit.
  [ -n "$slot" ] || { slot="$(mktemp -d "$BUILD/once-XXXXXX")"; trap 'rm -rf "$slot"' EXIT; }
else
  slot="$BUILD/slot-0"   # no flock (e.g. macOS): one shared folder; run one notebook at a time
fi
mkdir -p "$slot"
cp "$ROOT/Cargo.lock" "$slot/Cargo.lock"
export EVCXR_TMPDIR="$slot"
if [[ "$slot" == "$BUILD"/once-* ]]; then
  "$EVCXR" "$@"
else
  exec "$EVCXR" "$@"   # the lock on fd 9 is held for the kernel's lifetime
fi
