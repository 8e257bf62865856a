#!/usr/bin/env bash
# crossling setup: a project-local Python virtual environment whose PyPI `torch` wheel provides libtorch
# for the `tch` crate. Idempotent: a second run checks and returns in about a second.
#
#   ./setup.sh            create .venv, install torch==2.13.0 (the libtorch that tch 0.26 needs)
#
# Environment: PYTHON=/path/to/python3 chooses the interpreter (3.10 or newer).
# After it, `cargo build`, `cargo run` and `cargo test` need no `export`: .cargo/config.toml points LIBTORCH at
# .venv/libtorch and build.rs bakes an rpath to its lib/ folder into every binary.
set -euo pipefail

TORCH_VERSION="2.13.0"   # must match the libtorch that the tch crate in Cargo.toml expects
# Reference implementations that the tests and benchmarks compare against (Hugging Face interop, CKA, CSLS,
# gensim's word2vec for `bench word2vec`).
PY_TOOLS=("numpy==2.4.6" "transformers==5.23.0" "safetensors==0.8.0" "gensim==4.4.0")
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="$ROOT/.venv"

say() { printf 'setup: %s\n' "$*"; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

PY="${PYTHON:-}"
if [ -z "$PY" ]; then
  for candidate in python3 python; do
    if command -v "$candidate" >/dev/null 2>&1; then PY="$(command -v "$candidate")"; break; fi
  done
fi
[ -n "$PY" ] || die "no python3 found; install Python 3.10+ (e.g. 'apt-get install python3 python3-venv') or set PYTHON=/path/to/python3"
"$PY" -c 'pass' >/dev/null 2>&1 || die "'$PY' does not run as Python; install Python 3.10+ or set PYTHON=/path/to/python3"
"$PY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' \
  || die "$PY is Python $("$PY" -c 'import sys; print(sys.version.split()[0])'); torch $TORCH_VERSION needs 3.10 or newer: set PYTHON=/path/to/python3.10+"
command -v cargo >/dev/null 2>&1 || die "cargo not found; install Rust with rustup (https://rustup.rs) and re-run ./setup.sh"

if [ ! -x "$VENV/bin/python" ]; then
  say "creating virtual environment $VENV"
  "$PY" -m venv "$VENV" || die "'$PY -m venv' failed; install the venv module (e.g. 'apt-get install python3-venv')"
fi
VPY="$VENV/bin/python"

installed_torch() {
  "$VPY" - <<'PY' 2>/dev/null || true
import importlib.metadata as m
try:
    print(m.version("torch"))
except m.PackageNotFoundError:
    pass
PY
}

have="$(installed_torch)"
if [ "${have%%+*}" != "$TORCH_VERSION" ]; then
  say "installing torch==$TORCH_VERSION from PyPI into $VENV (about 3 GB with its CUDA runtime libraries; once)"
  "$VPY" -m pip install --disable-pip-version-check --quiet --progress-bar on "torch==$TORCH_VERSION" numpy \
    || die "pip could not install torch==$TORCH_VERSION; check the network / PyPI access and re-run ./setup.sh"
  have="$(installed_torch)"
  [ "${have%%+*}" = "$TORCH_VERSION" ] || die "torch $TORCH_VERSION is still not importable from $VENV (found '${have:-none}')"
else
  say "torch $have already installed"
fi

# The Python reference tools, pinned; pip is only called when one is missing or at another version.
missing_tools="$("$VPY" - "${PY_TOOLS[@]}" <<'PY' 2>/dev/null || echo all
import importlib.metadata as m, sys
for spec in sys.argv[1:]:
    name, version = spec.split("==")
    try:
        if m.version(name) != version:
            print(spec)
    except m.PackageNotFoundError:
        print(spec)
PY
)"
if [ -n "$missing_tools" ]; then
  say "installing the reference tools ${PY_TOOLS[*]} (used by tests and benchmarks)"
  "$VPY" -m pip install --disable-pip-version-check --quiet "${PY_TOOLS[@]}" \
    || die "pip could not install ${PY_TOOLS[*]}; check the network / PyPI access and re-run ./setup.sh"
else
  say "reference tools ${PY_TOOLS[*]} already installed"
fi

# A stable path for .cargo/config.toml: .venv/libtorch -> site-packages/torch (holds include/ and lib/).
TORCH_DIR="$("$VPY" -c 'import importlib.util, pathlib; print(pathlib.Path(importlib.util.find_spec("torch").origin).parent)')"
[ -f "$TORCH_DIR/lib/libtorch_cpu.so" ] || die "$TORCH_DIR/lib/libtorch_cpu.so is missing; remove .venv and re-run ./setup.sh"
ln -sfn "$TORCH_DIR" "$VENV/libtorch"
say "libtorch: $VENV/libtorch -> $TORCH_DIR"
say "done; now: cargo run --release -- data verify   (or: cargo test)"
