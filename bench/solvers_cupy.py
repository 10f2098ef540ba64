#!/usr/bin/env python3
"""CuPy baselines for bench/solvers.ts and bench/cg.ts, run in the same call on the GPU machine.

  python3 bench/solvers_cupy.py DIR --json out.jsonl [--restart 30] [--gmres-iters 300] [--k 4]

DIR holds the matrices the TypeScript benches dumped (NAME.rowptr int32, NAME.cols int32,
NAME.vals float32, exact for these matrices). By name:
  cd2d-*     GMRES(restart) in float32: ms per inner iteration over --gmres-iters iterations
             (tolerance far below reach); float64 GMRES time to rtol 1e-10.
  poisson2d-* float64 CG time to rtol 1e-10 (the float32 CG per-iteration figure comes from
             .gpukit/cusparse_anchor.py --cg).
  hubbard-*  eigsh (thick-restart Lanczos) for the k smallest ('SA'): float32 with tol 1e-5 and
             float64 with tol 1e-10; wall time to the answer, matvecs counted in a second run
             through a LinearOperator, residual norms recomputed (also relative to |θ|, eigsh's
             own criterion).
  spd-*      the same eigsh runs on the SPD matrices of bench/solvers.ts --spd (issue 15's eigen
             target: the 4 lowest eigenvalues to 1e-10 relative).
b = A·1 for the linear systems, as in the TypeScript benches. Times: wall clock around the call
after a warm-up, device synchronised.
"""
import inspect, json, os, sys, time
import numpy as np, cupy as cp, scipy.sparse as sp, cupyx.scipy.sparse as csp
import cupyx.scipy.sparse.linalg as spl


def load(base):
    rp = np.fromfile(base + '.rowptr', dtype=np.int32).astype(np.int64)
    ci = np.fromfile(base + '.cols', dtype=np.int32).astype(np.int64)
    v = np.fromfile(base + '.vals', dtype=np.float32)
    n = len(rp) - 1
    return sp.csr_matrix((v, ci, rp), shape=(n, n))


def tol_kw(fn, value):
    """CuPy renamed tol to rtol (SciPy 1.12 style) in newer releases: pass whichever exists."""
    params = inspect.signature(fn).parameters
    return {'rtol': value} if 'rtol' in params else {'tol': value}


def timed(fn):
    cp.cuda.Device().synchronize()
    t0 = time.perf_counter()
    out = fn()
    cp.cuda.Device().synchronize()
    return out, (time.perf_counter() - t0) * 1e3


def rel_res(G, x, b):
    return float(cp.linalg.norm(b - G @ x) / cp.linalg.norm(b))


def main(argv):
    d = argv[0]
    out = argv[argv.index('--json') + 1] if '--json' in argv else None
    opt = lambda n, dflt: type(dflt)(argv[argv.index(n) + 1]) if n in argv else dflt
    restart, iters, k = opt('--restart', 30), opt('--gmres-iters', 300), opt('--k', 4)
    rows = []
    names = sorted({f[:-7] for f in os.listdir(d) if f.endswith('.rowptr')})
    dev = cp.cuda.runtime.getDeviceProperties(0)['name'].decode()
    print(f'device {dev}, cupy {cp.__version__}')
    for name in names:
        A = load(os.path.join(d, name))
        n = A.shape[0]
        if name.startswith('cd2d'):
            G = csp.csr_matrix(A.astype(np.float32))
            b = G @ cp.ones(n, dtype=np.float32)
            cycles = [0]
            def cb(_): cycles[0] += 1
            spl.gmres(G, b, restart=restart, maxiter=restart, **tol_kw(spl.gmres, 1e-30))  # warm-up
            _, ms = timed(lambda: spl.gmres(G, b, restart=restart, maxiter=iters, callback=cb, callback_type='pr_norm', **tol_kw(spl.gmres, 1e-30)))
            # inner iterations counted through a LinearOperator (CuPy counts maxiter in inner
            # iterations and SciPy in cycles): matvecs minus one residual product per cycle
            calls = [0]
            def mv(x):
                calls[0] += 1
                return G @ x
            cycles[0] = 0
            spl.gmres(spl.LinearOperator((n, n), matvec=mv, dtype=np.float32), b, restart=restart, maxiter=iters, callback=cb, callback_type='pr_norm', **tol_kw(spl.gmres, 1e-30))
            inner = calls[0] - (cycles[0] + 1)
            row = dict(problem=name, solver=f'cupy gmres({restart})', precision='f32', rows=n, nnz=int(A.nnz), iterations=inner, matvecs=calls[0], ms=ms, msPerIter=ms / max(1, inner))
            rows.append(row); print(json.dumps(row))
            if n > 1.1e6: continue  # float64 time to answer on the 10^6-row grid only (as bench/solvers.ts)
            G64 = csp.csr_matrix(A.astype(np.float64))
            b64 = G64 @ cp.ones(n, dtype=np.float64)
            spl.gmres(G64, b64, restart=restart, maxiter=restart, **tol_kw(spl.gmres, 1e-30))
            (x, info), ms = timed(lambda: spl.gmres(G64, b64, restart=restart, maxiter=60000, atol=0.0, **tol_kw(spl.gmres, 1e-10)))
            row = dict(problem=name, solver=f'cupy gmres({restart})', precision='f64', rtol=1e-10, rows=n, ms=ms, info=int(info), relativeResidual=rel_res(G64, x, b64))
            rows.append(row); print(json.dumps(row))
        elif name.startswith('poisson2d'):
            G64 = csp.csr_matrix(A.astype(np.float64))
            b64 = G64 @ cp.ones(n, dtype=np.float64)
            it = [0]
            def cb(_): it[0] += 1
            spl.cg(G64, b64, maxiter=3, **tol_kw(spl.cg, 1e-30))
            (x, info), ms = timed(lambda: spl.cg(G64, b64, maxiter=200000, atol=0.0, callback=cb, **tol_kw(spl.cg, 1e-10)))
            row = dict(problem=name, solver='cupy cg', precision='f64', rtol=1e-10, rows=n, ms=ms, iterations=it[0], info=int(info), relativeResidual=rel_res(G64, x, b64))
            rows.append(row); print(json.dumps(row))
        elif name.startswith('hubbard') or name.startswith('spd-'):
            for dt, tol in ((np.float32, 1e-5), (np.float64, 1e-10)):
                G = csp.csr_matrix(A.astype(dt))
                spl.eigsh(G, k=k, which='SA', tol=1e-2, maxiter=20)  # warm-up
                (w, v), ms = timed(lambda: spl.eigsh(G, k=k, which='SA', tol=tol))
                calls = [0]
                def mv(x):
                    calls[0] += 1 if x.ndim == 1 else x.shape[1]
                    return G @ x
                L = spl.LinearOperator((n, n), matvec=mv, dtype=dt)
                spl.eigsh(L, k=k, which='SA', tol=tol)
                res = [float(cp.linalg.norm(G @ v[:, i] - w[i] * v[:, i])) for i in range(k)]
                rel = [r / max(abs(float(w[i])), 1e-300) for i, r in enumerate(res)]
                row = dict(problem=name, solver='cupy eigsh SA', precision=np.dtype(dt).name, tol=tol, k=k, rows=n, nnz=int(A.nnz), ms=ms, matvecs=calls[0], msPerMatvec=ms / max(1, calls[0]), values=[float(x) for x in cp.asnumpy(w)], residualNorms=res, residualOverTheta=rel)
                rows.append(row); print(json.dumps(row))
    if out:
        with open(out, 'w') as f:
            for r in rows: f.write(json.dumps(r) + '\n')


if __name__ == '__main__':
    main(sys.argv[1:])
