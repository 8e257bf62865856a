"""Reference timing for `crossling bench cka`: Kornblith et al.'s (2019) notebook function
`feature_space_linear_cka` applied to every (layer i of X, layer j of Y) pair, as a user of the notebook would.

Usage: bench_cka.py X.npy Y.npy THREADS   (X, Y: [layers, n, d] float32)
Prints one JSON line: wall and CPU times (CPU time: all threads of the process) of the grid with the arrays cast to float64 once per layer (the notebook's precision)
and with the float32 arrays as given, and both grids.
"""
import json
import os
import sys
import time

threads = sys.argv[3] if len(sys.argv) > 3 else "1"
for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = threads
import numpy as np  # noqa: E402  (after the thread settings)


def feature_space_linear_cka(features_x, features_y, debiased=False):
    features_x = features_x - np.mean(features_x, 0, keepdims=True)
    features_y = features_y - np.mean(features_y, 0, keepdims=True)
    dot_product_similarity = np.linalg.norm(features_x.T.dot(features_y)) ** 2
    normalization_x = np.linalg.norm(features_x.T.dot(features_x))
    normalization_y = np.linalg.norm(features_y.T.dot(features_y))
    return dot_product_similarity / (normalization_x * normalization_y)


def grid(xs, ys):
    return [[float(feature_space_linear_cka(x, y)) for y in ys] for x in xs]


def main():
    xs = np.load(sys.argv[1])
    ys = np.load(sys.argv[2])
    t0, c0 = time.perf_counter(), time.process_time()
    xs64 = [x.astype(np.float64) for x in xs]
    ys64 = [y.astype(np.float64) for y in ys]
    g64 = grid(xs64, ys64)
    t64, c64 = time.perf_counter() - t0, time.process_time() - c0
    t0, c0 = time.perf_counter(), time.process_time()
    g32 = grid(list(xs), list(ys))
    t32, c32 = time.perf_counter() - t0, time.process_time() - c0
    print(json.dumps({"seconds_f64": t64, "seconds_f32": t32, "cpu_seconds_f64": c64, "cpu_seconds_f32": c32, "grid_f64": g64, "grid_f32": g32,
                      "numpy": np.__version__, "threads": int(threads)}))


if __name__ == "__main__":
    main()
