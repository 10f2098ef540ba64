#!/usr/bin/python3
"""SciPy side of bench/host-spmv.ts: single-thread CSR SpMV timings.

Usage: OMP_NUM_THREADS=1 /usr/bin/python3 bench/host_spmv_scipy.py MANIFEST.json OUT.json

MANIFEST.json (written by host-spmv.ts) lists, per matrix: name, the .mtx file written by our
writer, x (raw float64 little-endian) and where to write y = A @ x (raw float64) so the
TypeScript side can check both products agree. For every matrix this script times
`scipy.sparse.csr_matrix @ x` (the public operator, allocating y) and the raw kernel
`scipy.sparse._sparsetools.csr_matvec` (preallocated y), each as the median over batches of
calls, a batch lasting at least `batch_ms` milliseconds; the lower of two such medians is kept.
"""
import json
import os
import sys
import time

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ.setdefault(var, "1")

import numpy as np  # noqa: E402
import scipy  # noqa: E402
import scipy.io  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from scipy.sparse import _sparsetools  # noqa: E402


def median_time(fn, batch_ms, min_batches, budget_s):
    """Median seconds per call of fn(), over batches of k calls each lasting >= batch_ms."""
    for _ in range(3):
        fn()  # warm-up
    t0 = time.perf_counter()
    fn()
    one = max(time.perf_counter() - t0, 1e-9)
    k = max(1, int(batch_ms / 1e3 / one))
    samples = []
    start = time.perf_counter()
    while len(samples) < min_batches or (time.perf_counter() - start < budget_s and len(samples) < 200):
        t0 = time.perf_counter()
        for _ in range(k):
            fn()
        samples.append((time.perf_counter() - t0) / k)
        if time.perf_counter() - start > 4 * budget_s and len(samples) >= 5:
            break
    samples.sort()
    return samples[len(samples) // 2], len(samples), k


def main():
    manifest = json.load(open(sys.argv[1]))
    out = {"scipy": scipy.__version__, "numpy": np.__version__, "results": []}
    for m in manifest["matrices"]:
        a = scipy.io.mmread(m["file"])
        a = sp.csr_matrix(a, dtype=np.float64)
        a.sum_duplicates()
        a.sort_indices()
        x = np.fromfile(m["x"], dtype="<f8")
        assert a.shape == (m["rows"], m["cols"]), (m["name"], a.shape)
        assert a.nnz == m["nnz"], (m["name"], a.nnz, m["nnz"])
        y = a @ x
        y.tofile(m["y"])
        # the lower of two medians, as on the TypeScript side
        args = (manifest["batch_ms"], manifest["min_batches"], manifest["budget_s"])
        t_op, n_op, k_op = median_time(lambda: a @ x, *args)
        t_op = min(t_op, median_time(lambda: a @ x, *args)[0])
        yk = np.zeros(a.shape[0])
        indptr, indices, data = a.indptr, a.indices, a.data
        rows, cols = a.shape

        def raw():
            yk.fill(0.0)  # csr_matvec accumulates into y
            _sparsetools.csr_matvec(rows, cols, indptr, indices, data, x, yk)

        t_raw = min(median_time(raw, *args)[0], median_time(raw, *args)[0])
        out["results"].append({"name": m["name"], "ms": t_op * 1e3, "raw_ms": t_raw * 1e3, "batches": n_op, "calls_per_batch": k_op})
        print(f"  scipy {m['name']}: {t_op * 1e3:.4f} ms (@), {t_raw * 1e3:.4f} ms (csr_matvec)", file=sys.stderr, flush=True)
    json.dump(out, open(sys.argv[2], "w"), indent=1)


if __name__ == "__main__":
    main()
