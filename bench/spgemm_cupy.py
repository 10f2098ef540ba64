#!/usr/bin/env python3
"""cuSPARSE side of bench/spgemm.ts: C = A @ B with cupyx.scipy.sparse CSR operands (cuSPARSE
SpGEMM) on the same matrices as the TypeScript benchmark (seed 002's shapes).

  python3 bench/spgemm_cupy.py [--quick] [--only table|banded|structured|hm|cdm] [--max-n N] [--reps N]
                               [--passes P] [--out FILE] [--dry]

Matrices (identical to bench/spgemm.ts, same LCG):
- hm: structured sparse, n x n, dg whole diagonals at distinct random offsets in [-n/4, n/4]
  (Tables 1 and 2 of seed 002: n = 1000 ... 10 000, 5 ... 600 diagonals);
- cdm: banded, n = 1024 ... 10 240, bandwidths 5, 10, 15, 20 (offsets -floor((w-1)/2) ...);
- banded: n = 10^5, 10^6, 10^7, bandwidths 5, 10, 20; structured: n = 10^5 (10 and 30
  diagonals), 10^6 (10 and 20 diagonals) — the issue-22 sizes (reps capped at 5 for n >= 10^6).
Values 1 + ((7i + 13j) mod 17)/16 (never zero). Per case and dtype (float32, float64): median ms of
A @ B over `reps` runs after 2 warm-ups, timed with CUDA events (the product includes cuSPARSE's
symbolic and numeric phases and C's allocation, as a user calling A @ B sees: CuPy's A @ B is
cupyx.cusparse.spgemm, which runs cuSPARSE's work estimation, compute and copy — the symbolic
phase included — on every call, with no reuse of an earlier product's structure), and nnz(C) to
cross-check nzC of the TypeScript run. --passes P (default 1) times every case P times, the CSR
operands built again each time; each row carries its pass (float64 is timed in pass 1 only);
passes after the first are skipped once --budget-s seconds (default 200) have gone (listed in
the JSON's `skipped`; bench/spgemm.ts then compares with pass 1's time). --dry builds the matrices on the host only (numpy) and prints
nzA, nzB, to check the two generators agree without a GPU. Prints one JSON line per case and the
whole list as JSON at the end (or to --out).
"""
import json
import sys
import time

import numpy as np


def lcg(seed):
    s = seed & 0xFFFFFFFF

    def nxt():
        nonlocal s
        s = (1664525 * s + 1013904223) & 0xFFFFFFFF
        return s / 2**32

    return nxt


def random_offsets(n, dg, seed):
    h = n // 4
    r = lcg(seed)
    seen = set()
    while len(seen) < min(dg, 2 * h + 1):
        seen.add(int(r() * (2 * h + 1)) - h)
    return sorted(seen)


def band_offsets(w):
    return [t - (w - 1) // 2 for t in range(w)]


def triplets(n, offsets):
    rows, cols = [], []
    for k in offsets:
        i = np.arange(max(0, -k), min(n, n - k), dtype=np.int64)
        rows.append(i)
        cols.append(i + k)
    i = np.concatenate(rows)
    j = np.concatenate(cols)
    v = 1.0 + ((7 * i + 13 * j) % 17) / 16.0
    return i, j, v


def cases(quick, only):
    """The cases of bench/spgemm.ts, in the same order (family: table, banded, structured)."""
    out = []

    def hm(family, n, da, db):
        out.append(dict(kind='hm', family=family, n=n, dgA=da, dgB=db, offA=random_offsets(n, da, n + da), offB=random_offsets(n, db, 7 * n + db)))

    def band(family, n, w):
        out.append(dict(kind='cdm', family=family, n=n, dgA=w, dgB=w, offA=band_offsets(w), offB=band_offsets(w), bandwidth=w))

    t1 = [(1000, 9, 5), (2000, 9, 15), (3000, 29, 15), (4000, 29, 35), (5000, 59, 35),
          (6000, 89, 75), (7000, 99, 75), (8000, 109, 35), (9000, 59, 75), (10000, 109, 35)]
    t2 = [(200, 200), (300, 300), (400, 200), (500, 500), (600, 600)]
    if quick:
        for n, a, b in t1[:3]:
            hm('table', n // 4, a, b)
        for n in (256, 1024):
            for w in (5, 20):
                band('table', n, w)
        band('banded', 20000, 10)
        hm('structured', 20000, 10, 10)
    else:
        for n, a, b in t1:
            hm('table', n, a, b)
        for a, b in t2:
            hm('table', 10000, a, b)
        for n in range(1024, 10241, 1024):
            for w in (5, 10, 15, 20):
                band('table', n, w)
        for n in (10**5, 10**6, 10**7):
            for w in (5, 10, 20):
                band('banded', n, w)
        for n, a, b in ((10**5, 10, 10), (10**5, 30, 30), (10**6, 10, 10), (10**6, 20, 20)):
            hm('structured', n, a, b)
    return [c for c in out if only is None or c['family'] == only or c['kind'] == only]


def time_product(cp, csp, n, ta, tb, dt, reps):
    """Sorted CUDA-event times (ms) of `reps` products A @ B after 2 warm-ups, and nnz(C)."""
    mk = lambda i, j, v: csp.coo_matrix((cp.asarray(v, dtype=dt), (cp.asarray(i), cp.asarray(j))), shape=(n, n)).tocsr()  # noqa: E731
    a, b = mk(*ta), mk(*tb)
    for _ in range(2):
        c = a @ b
    cp.cuda.Device().synchronize()
    s, e, ts = cp.cuda.Event(), cp.cuda.Event(), []
    for _ in range(reps):
        s.record()
        c = a @ b
        e.record()
        e.synchronize()
        ts.append(cp.cuda.get_elapsed_time(s, e))
    return sorted(ts), int(c.nnz)


def time_dtype(cp, csp, row, ta, tb, dt, reps):
    """Time A @ B in dtype dt into row (median, min, nnz(C)), or the error cuSPARSE gave."""
    name = 'f32' if dt == np.float32 else 'f64'
    try:
        ms, nzc = time_product(cp, csp, row['n'], ta, tb, dt, reps)
        row[f'cusparse_{name}_median_ms'], row[f'cusparse_{name}_min_ms'] = ms[len(ms) // 2], ms[0]
        row['nzC'] = nzc
        if nzc == 0:  # positive operands whose diagonals meet: C cannot be empty
            row[f'cusparse_{name}_error'] = 'wrong result: empty C from non-empty positive operands (index overflow?)'
    except Exception as err:  # e.g. CUSPARSE_STATUS_INSUFFICIENT_RESOURCES: reported, not fatal
        row[f'cusparse_{name}_error'] = f'{type(err).__name__}: {err}'
    cp.get_default_memory_pool().free_all_blocks()


def main(argv):
    opt = lambda name, d=None: argv[argv.index(name) + 1] if name in argv else d  # noqa: E731
    quick, dry = '--quick' in argv, '--dry' in argv
    reps = int(opt('--reps', '3' if quick else '10'))
    out = opt('--out')
    rows = []
    if not dry:
        import cupy as cp
        import cupyx.scipy.sparse as csp
        dev = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)['name'].decode()
    max_n = float(opt('--max-n', 'inf'))
    passes = int(opt('--passes', '1'))
    budget_s = float(opt('--budget-s', '200'))
    t_start, skipped = time.perf_counter(), []
    for c in cases(quick, opt('--only')):
        n = c['n']
        if n > max_n:
            continue
        ia, ja, va = triplets(n, c['offA'])
        # a band times itself: B's triplets are A's (building them is most of the time at n = 10^7)
        ib, jb, vb = (ia, ja, va) if c['offB'] == c['offA'] else triplets(n, c['offB'])
        for p in range(1, passes + 1):
            if p > 1 and time.perf_counter() - t_start > budget_s:
                skipped.append(f"pass {p} {c['family']} {c['kind']} n={n} {c['dgA']}x{c['dgB']}")
                continue
            row = dict(kind=c['kind'], family=c['family'], n=n, bandwidth=c.get('bandwidth'), dgA=c['dgA'], nzA=int(len(va)), dgB=c['dgB'], nzB=int(len(vb)), **{'pass': p})
            if not dry:
                row['device'] = dev
                for dt in (np.float32, np.float64) if p == 1 else (np.float32,):
                    time_dtype(cp, csp, row, (ia, ja, va), (ib, jb, vb), dt, reps if n < 10**6 else min(reps, 5))
            print(json.dumps(row), flush=True)
            rows.append(row)
            if dry:
                break
    wall_s = time.perf_counter() - t_start
    print(f'cuSPARSE side: {len(rows)} rows in {wall_s:.0f} s; skipped past --budget-s {budget_s:.0f}: {len(skipped)}', file=sys.stderr)
    text = json.dumps({'reps': reps, 'passes': passes, 'wall_s': wall_s, 'skipped': skipped, 'rows': rows}, indent=1)
    if out:
        with open(out, 'w') as f:
            f.write(text)
    else:
        print(text)


if __name__ == '__main__':
    main(sys.argv[1:])
