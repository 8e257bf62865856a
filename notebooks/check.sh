#!/usr/bin/env bash
# Executes the notebooks headless (jupyter nbconvert --execute) and fails on any error cell.
#
#   notebooks/check.sh                 every notebook of notebooks/, at smoke scale
#   notebooks/check.sh fig7 liu-fig7   only these (ids or .ipynb paths)
#   CROSSLING_SCALE=cpu notebooks/check.sh --inplace fig7
#                                      execute into the notebooks themselves (to commit their outputs); the figure
#                                      outputs go to out/notebooks/SCALE/figures/, so the records in figures/ (with
#                                      the provenance of their full runs) stay as they are
#
# At cpu each notebook runs with as many seeds as its committed record (figures/ID.json), so its claims table is the
# one REPRODUCTION.md gives. To commit outputs from a clean tree (the provenance names the commit only when no tracked
# file has changed; --inplace changes them one by one), run with CHECK_OUT=DIR and copy DIR/*.ipynb into notebooks/.
#
# Environment: CROSSLING_SCALE (default smoke here); CHECK_OUT=DIR keeps the executed notebooks and figure outputs
# there (default: a temporary folder, removed on success; out/notebooks/SCALE with --inplace); CHECK_TIMEOUT per cell
# in seconds (default 3600: the first cell compiles crossling inside the kernel); CROSSLING_SEEDS, the seeds of every
# notebook's run (default 1, or at cpu the committed record's). figures/ is never written, and the
# committed notebooks only with --inplace.
# Needs ./setup.sh --notebooks. The notebooks are first checked against notebooks/build.py (build.py --check).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$HERE")"
JUPYTER="$ROOT/.venv/bin/jupyter"
[ -x "$JUPYTER" ] || { echo "check: $JUPYTER is missing; run ./setup.sh --notebooks" >&2; exit 1; }
kernels="$("$JUPYTER" kernelspec list 2>/dev/null || true)"
[[ "$kernels" == *crossling-rust* ]] \
  || { echo "check: the kernel crossling-rust is not registered; run ./setup.sh --notebooks" >&2; exit 1; }

"$ROOT/.venv/bin/python" "$HERE/build.py" --check

INPLACE=0
if [ "${1:-}" = "--inplace" ]; then INPLACE=1; shift; fi
export CROSSLING_SCALE="${CROSSLING_SCALE:-smoke}"
if [ "$INPLACE" = 1 ]; then
  OUT="${CHECK_OUT:-$ROOT/out/notebooks/$CROSSLING_SCALE}"
else
  OUT="${CHECK_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/crossling-notebooks-XXXXXX")}"
fi
mkdir -p "$OUT/figures"
OUT="$(cd "$OUT" && pwd)"   # absolute: the kernel runs in notebooks/
export CROSSLING_NOTEBOOK_OUT="$OUT/figures"

notebooks=()
if [ $# -eq 0 ]; then
  notebooks=("$HERE"/*.ipynb)
else
  for a in "$@"; do
    case "$a" in
      *.ipynb) notebooks+=("$a") ;;
      *) notebooks+=("$HERE/$a.ipynb") ;;
    esac
  done
fi

failed=()
t_all=$SECONDS
for nb in "${notebooks[@]}"; do
  [ -f "$nb" ] || { echo "check: no notebook $nb" >&2; failed+=("$(basename "$nb")"); continue; }
  name="$(basename "$nb" .ipynb)"
  t0=$SECONDS
  # nbconvert runs the kernel in the notebook's own folder, so `:dep crossling = { path = ".." }` is the project.
  if [ "$INPLACE" = 1 ]; then where=(--inplace); executed="$nb"; else where=(--output-dir "$OUT" --output "$name"); executed="$OUT/$name.ipynb"; fi
  seeds="${CROSSLING_SEEDS:-1}"
  if [ -z "${CROSSLING_SEEDS:-}" ] && [ "$CROSSLING_SCALE" = cpu ] && [ -f "$ROOT/figures/$name.json" ]; then
    seeds="$("$ROOT/.venv/bin/python" -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["provenance"].get("seeds") or [0]))' "$ROOT/figures/$name.json")"
  fi
  if CROSSLING_SEEDS="$seeds" "$JUPYTER" nbconvert --to notebook --execute "${where[@]}" \
       --ExecutePreprocessor.kernel_name=crossling-rust \
       --ExecutePreprocessor.timeout="${CHECK_TIMEOUT:-3600}" "$nb" >"$OUT/$name.log" 2>&1 \
     && times="$("$ROOT/.venv/bin/python" - "$executed" 2>>"$OUT/$name.log" <<'PY'
import sys, nbformat
nb = nbformat.read(sys.argv[1], as_version=4)
bad = []
for i, cell in enumerate(nb.cells):
    for out in cell.get("outputs", []):
        text = "".join(out.get("text", "")) if out.get("output_type") == "stream" else ""
        if out.get("output_type") == "error" or "panicked at" in text:
            bad.append(i)
if bad:
    sys.exit(f"error output in cell(s) {', '.join(map(str, sorted(set(bad))))}")
# Per-cell wall times that nbclient records: the `:dep` cell is the compile, the `run_script` cell the run.
from datetime import datetime
def seconds(cell):
    t = cell.get("metadata", {}).get("execution", {})
    a, b = t.get("iopub.execute_input"), t.get("shell.execute_reply")
    if not (a and b):
        return None
    parse = lambda s: datetime.fromisoformat(s.replace("Z", "+00:00"))
    return (parse(b) - parse(a)).total_seconds()
code = [c for c in nb.cells if c.cell_type == "code"]
compile_s = next((seconds(c) for c in code if c.source.startswith(":dep")), None)
run_s = next((seconds(c) for c in code if "run_script(" in c.source), None)
if compile_s is not None:
    print(f"(compile {compile_s:.0f} s, run {run_s or 0:.0f} s)", end="")
PY
)"
  then
    printf 'check: ok     %-12s %5d s %s, %d seed(s)\n' "$name" $((SECONDS - t0)) "$times" "$seeds"
  else
    printf 'check: FAILED %-12s %5d s (log: %s)\n' "$name" $((SECONDS - t0)) "$OUT/$name.log"
    tail -n 30 "$OUT/$name.log" | sed 's/^/    /'
    failed+=("$name")
  fi
done

echo "check: ${#notebooks[@]} notebook(s) at $CROSSLING_SCALE scale in $((SECONDS - t_all)) s"
if [ ${#failed[@]} -gt 0 ]; then
  echo "check: failed: ${failed[*]}" >&2
  exit 1
fi
if [ -n "${CHECK_OUT:-}" ] || [ "$INPLACE" = 1 ]; then echo "check: executed notebooks and outputs in $OUT"; else rm -rf "$OUT"; fi
