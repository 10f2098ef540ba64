#!/usr/bin/env python3
"""Can SciPy's eigsh find the 4 lowest eigenvalues *with multiplicity* of the bench's stencils?

Issue 18's table compares our Lanczos (with its multiplicity check) against ARPACK on
stencil2d-100² (λ₂ double) and stencil3d-40³ (λ₂ triple), where ARPACK with its defaults
(ncv 20, a seeded random v0) returns a wrong 4th value: it misses copies. This scans ncv and
the start vector and checks each answer against the closed form of the 5- / 7-point Laplacian
(bench/matrix-set's generators: 4 − 2cos − 2cos, 6 − 2cos − 2cos − 2cos, no h² scaling).
One BLAS thread (run with OPENBLAS_NUM_THREADS=1); products counted through a LinearOperator;
process CPU time of the call. One JSON line per setting.

Usage: OPENBLAS_NUM_THREADS=1 python3 bench/eigsh_stencil_ncv.py [--ncv 20,40,60,80] [--which 2d,3d]
"""
import json
import sys
import time

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as sla


def lap1(n):
    return sp.diags([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], [-1, 0, 1], format="csr")


def stencil(dim, n):
    t, i = lap1(n), sp.identity(n, format="csr")
    if dim == 2:
        return (sp.kron(t, i) + sp.kron(i, t)).tocsr()
    return (sp.kron(sp.kron(t, i), i) + sp.kron(sp.kron(i, t), i) + sp.kron(sp.kron(i, i), t)).tocsr()


def exact_lowest(dim, n, k):
    mu = 2 - 2 * np.cos(np.arange(1, n + 1) * np.pi / (n + 1))
    grids = np.meshgrid(*([mu] * dim), indexing="ij")
    return np.sort(sum(grids).ravel())[:k]


def main():
    arg = lambda f, d: sys.argv[sys.argv.index(f) + 1] if f in sys.argv else d
    ncvs = [int(x) for x in arg("--ncv", "20,40,60,80").split(",")]
    cases = {"2d": (2, 100), "3d": (3, 40)}
    for key in arg("--which", "2d,3d").split(","):
        dim, n = cases[key]
        a = stencil(dim, n)
        exact = exact_lowest(dim, n, 4)
        starts = {"random(seed 1)": np.random.default_rng(1).standard_normal(a.shape[0]),
                  "random(seed 2)": np.random.default_rng(2).standard_normal(a.shape[0]),
                  "ones": np.ones(a.shape[0])}
        for ncv in ncvs:
            for sname, v0 in starts.items():
                ops = [0]

                def mv(v):
                    ops[0] += 1
                    return a @ v

                op = sla.LinearOperator(a.shape, matvec=mv, dtype=np.float64)
                c0 = time.process_time()
                try:
                    w = np.sort(sla.eigsh(op, k=4, which="SA", tol=1e-8, v0=v0, ncv=ncv, maxiter=20000, return_eigenvectors=False))
                    err = float(np.max(np.abs(w - exact)) / np.max(np.abs(exact)))
                    out = {"values": [float(x) for x in w], "max_rel_error_vs_exact": err, "right": err < 1e-8}
                except Exception as e:  # ARPACK's no-convergence
                    out = {"error": str(e)[:120]}
                cpu = time.process_time() - c0
                print(json.dumps({"matrix": f"stencil{key}-{n}^{dim}", "ncv": ncv, "v0": sname, "products": ops[0], "cpu_ms": round(cpu * 1e3, 1), **out, "exact": [float(x) for x in exact]}), flush=True)


if __name__ == "__main__":
    main()
