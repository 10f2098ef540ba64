#!/usr/bin/env python3
"""CUDA twins of our WGSL SpMV kernels (issue 20, session 11): the same layout, the same loads in the
same order, the same arithmetic, compiled by NVRTC instead of Dawn/Tint -> SPIR-V -> the driver, timed
next to cuSPARSE (CuPy) on the same raw CSR files that `bench/spmv.ts --dump` writes.

Question: session 10 found our kernels move 29-48 % of copy bandwidth on CI rows where cuSPARSE moves
72-75 %, and concluded that the loss is in what the WGSL path generates per load. If a twin of our
layout reaches cuSPARSE here, the WGSL code generation is the limit; if the twin is as slow as the WGSL
kernel, the layout / pattern is. Each twin is compiled in four load forms:
  plain  - `const T*` loads, unsigned 32-bit indices (what SPIR-V gives the driver, robustness off)
  clamp  - plain, every index clamped to its array's last element (Dawn's robustness on:
           min(i, arrayLength - 1), the lengths passed in as arguments like Tint's length buffer)
  ldg    - `const T* __restrict__` + __ldg (the read-only data cache path cuSPARSE uses)
  int    - plain, signed 32-bit indices (the compiler may assume no wrap: address strength reduction)

Twins (the WGSL kernel and parameters they mirror):
  stream  csr-stream pack 0: LANES lanes per row, lane l reads entries l, l+LANES, ..., UNROLL of them
          loaded before their gathers, separate accumulators, a single-entry tail; the CSR arrays.
  split   sliced-ell-split pack 0 interleave 0 (twin spec split:PARTS:UNROLL): slices of 32 rows stored
          column-major, PARTS invocations per row on slots part, part+PARTS, ..., UNROLL in flight,
          the parts' sums combined in shared memory in a fixed order.
  long    csr-long pack 1 interleave 1: quad-padded rows (vec4 values, two u32 words of four 16-bit
          column offsets from the row's smallest column), LANES lanes per row, UNROLL quads in flight,
          the last quad masked by its pad count (top two bits of the quad pointer).
Every twin's y is checked against the float64 product (bound 2*len*2^-24*sum|a_ij x_j|, as the bench).

  python3 bench/spmv_cuda_twin.py NAME.csr [...] [--rounds 2] [--reps 20] [--warm-ms 1000]
      [--clock-log clocks.csv] [--json out.jsonl] [--twins stream:32:4,long:32:2] [--forms plain,clamp,ldg,int]
Prints one `TWIN` line per (matrix, twin, form): median ms of the rounds, each round, GB/s over the
twin's own bytes (its arrays + x + y once), % of copy, cuSPARSE float32 ms in the same process and the
ratio cuSPARSE / twin, the SM clock range sampled during its timings (`CLOCK-LOW` below 1 500 MHz),
and `WRONG` if the check failed. `--layout-selftest` checks the quad layout builder on the host (numpy).
"""
import json, os, sys, time
import numpy as np

MASK = 0x3FFFFFFF

KERNELS = r'''
#if FORM_INT
typedef int IX;
#else
typedef unsigned int IX;
#endif
#if FORM_LDG
#define RO __restrict__
#define LD(p, i, n) __ldg((p) + (i))
#elif FORM_CLAMP
#define RO
#define LD(p, i, n) (p)[min((unsigned int)(i), (unsigned int)(n) - 1u)]
#else
#define RO
#define LD(p, i, n) (p)[i]
#endif

__device__ __forceinline__ float lane_sum(float s) {
#pragma unroll
  for (int o = LANES / 2; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o, LANES);
  return s;
}

extern "C" __global__ void __launch_bounds__(WG) stream_kernel(
    const unsigned int *RO rp, const unsigned int *RO col, const float *RO val, const float *RO x, float *y,
    unsigned int rows, unsigned int nrp, unsigned int nnz, unsigned int nx) {
  IX lane = (IX)(threadIdx.x % LANES);
  IX row = (IX)(blockIdx.x * (WG / LANES) + threadIdx.x / LANES);
  float s = 0.0f;
  if ((unsigned int)row < rows) {
    IX end = (IX)LD(rp, row + 1, nrp);
    IX k = (IX)LD(rp, row, nrp) + lane;
    float a[UNROLL];
#pragma unroll
    for (int i = 0; i < UNROLL; i++) a[i] = 0.0f;
    for (; k + (UNROLL - 1) * LANES < end; k += UNROLL * LANES) {
      unsigned int c[UNROLL]; float v[UNROLL], xv[UNROLL];
#pragma unroll
      for (int i = 0; i < UNROLL; i++) c[i] = LD(col, k + i * LANES, nnz);
#pragma unroll
      for (int i = 0; i < UNROLL; i++) v[i] = LD(val, k + i * LANES, nnz);
#pragma unroll
      for (int i = 0; i < UNROLL; i++) xv[i] = LD(x, (IX)c[i], nx);
#pragma unroll
      for (int i = 0; i < UNROLL; i++) a[i] = fmaf(v[i], xv[i], a[i]);
    }
    for (; k < end; k += LANES) a[0] = a[0] + LD(val, k, nnz) * LD(x, (IX)LD(col, k, nnz), nx);
#pragma unroll
    for (int w = 1; w < UNROLL; w <<= 1)
#pragma unroll
      for (int i = 0; i + w < UNROLL; i += 2 * w) a[i] = a[i] + a[i + w];
    s = a[0];
  }
  float t = lane_sum(s);
  if ((unsigned int)row < rows && lane == 0) y[row] = t;
}

__device__ __forceinline__ float4 gather4(const float *RO x, IX b, uint2 c, unsigned int nx) {
  return make_float4(LD(x, b + (IX)(c.x & 0xffffu), nx), LD(x, b + (IX)(c.x >> 16), nx),
                     LD(x, b + (IX)(c.y & 0xffffu), nx), LD(x, b + (IX)(c.y >> 16), nx));
}

__device__ __forceinline__ float4 fma4(float4 v, float4 x, float4 a) {
  return make_float4(fmaf(v.x, x.x, a.x), fmaf(v.y, x.y, a.y), fmaf(v.z, x.z, a.z), fmaf(v.w, x.w, a.w));
}

extern "C" __global__ void __launch_bounds__(WG) long_kernel(
    const unsigned int *RO rowq, const unsigned int *RO rbase, const uint2 *RO cols, const float4 *RO vals,
    const float *RO x, float *y, unsigned int rows, unsigned int nq, unsigned int nx) {
  IX lane = (IX)(threadIdx.x % LANES);
  IX row = (IX)(blockIdx.x * (WG / LANES) + threadIdx.x / LANES);
  float s = 0.0f;
  if ((unsigned int)row < rows) {
    IX q0 = (IX)(LD(rowq, row, rows + 1) & 0x3fffffffu);
    unsigned int e = LD(rowq, row + 1, rows + 1);
    IX q1 = (IX)(e & 0x3fffffffu);
    IX b = (IX)LD(rbase, row, rows);
    bool has = q1 > q0;
    IX qe = has ? q1 - 1 : q0;
    float4 a[UNROLL];
#pragma unroll
    for (int i = 0; i < UNROLL; i++) a[i] = make_float4(0.f, 0.f, 0.f, 0.f);
    IX q = q0 + lane;
    for (; q + (UNROLL - 1) * LANES < qe; q += UNROLL * LANES) {
      uint2 c[UNROLL]; float4 v[UNROLL], xv[UNROLL];
#pragma unroll
      for (int i = 0; i < UNROLL; i++) c[i] = LD(cols, q + i * LANES, nq);
#pragma unroll
      for (int i = 0; i < UNROLL; i++) v[i] = LD(vals, q + i * LANES, nq);
#pragma unroll
      for (int i = 0; i < UNROLL; i++) xv[i] = gather4(x, b, c[i], nx);
#pragma unroll
      for (int i = 0; i < UNROLL; i++) a[i] = fma4(v[i], xv[i], a[i]);
    }
    for (; q < qe; q += LANES) a[0] = fma4(LD(vals, q, nq), gather4(x, b, LD(cols, q, nq), nx), a[0]);
    if (has && q == qe) {
      unsigned int keep = 4u - (e >> 30);
      float4 v = LD(vals, q, nq), xv = gather4(x, b, LD(cols, q, nq), nx);
      a[0].x += 0u < keep ? v.x * xv.x : 0.f;
      a[0].y += 1u < keep ? v.y * xv.y : 0.f;
      a[0].z += 2u < keep ? v.z * xv.z : 0.f;
      a[0].w += 3u < keep ? v.w * xv.w : 0.f;
    }
#pragma unroll
    for (int w = 1; w < UNROLL; w <<= 1)
#pragma unroll
      for (int i = 0; i + w < UNROLL; i += 2 * w) a[i] = make_float4(a[i].x + a[i + w].x, a[i].y + a[i + w].y, a[i].z + a[i + w].z, a[i].w + a[i + w].w);
    s = (a[0].x + a[0].y) + (a[0].z + a[0].w);
  }
  float t = lane_sum(s);
  if ((unsigned int)row < rows && lane == 0) y[row] = t;
}

// sliced-ell-split pack 0, interleave 0: slices of SLICE rows stored column-major (slot k of row r of
// slice c at off[c] + k * stride + r), PARTS invocations per row walking slots part, part + PARTS, ...,
// UNROLL slots loaded before their gathers; the parts' sums meet in shared memory in a fixed order.
extern "C" __global__ void __launch_bounds__(WG) split_kernel(
    const unsigned int *RO soff, const unsigned int *RO rl, const unsigned int *RO col, const float *RO val,
    const float *RO x, float *y, unsigned int rows, unsigned int nslot, unsigned int nx) {
  __shared__ float part_s[WG];
  const unsigned int R = WG / PARTS;
  IX p = (IX)(blockIdx.x * R + threadIdx.x % R);
  IX part = (IX)(threadIdx.x / R);
  float s = 0.0f;
  if ((unsigned int)p < rows) {
    IX c = p / SLICE;
    IX r = p - c * SLICE;
    IX off = (IX)LD(soff, c, rows / SLICE + 1);
    IX stride = (IX)min((unsigned int)SLICE, rows - (unsigned int)c * SLICE);
    IX end = (IX)LD(rl, p, rows);
    float a[UNROLL];
#pragma unroll
    for (int i = 0; i < UNROLL; i++) a[i] = 0.0f;
    IX k = part;
    for (; k + (UNROLL - 1) * PARTS < end; k += UNROLL * PARTS) {
      IX q = off + k * stride + r;
      unsigned int cc[UNROLL]; float v[UNROLL];
#pragma unroll
      for (int i = 0; i < UNROLL; i++) cc[i] = LD(col, q + i * PARTS * stride, nslot);
#pragma unroll
      for (int i = 0; i < UNROLL; i++) v[i] = LD(val, q + i * PARTS * stride, nslot);
#pragma unroll
      for (int i = 0; i < UNROLL; i++) a[i] = a[i] + v[i] * LD(x, (IX)cc[i], nx);
    }
    for (; k < end; k += PARTS) {
      IX q = off + k * stride + r;
      a[0] = a[0] + LD(val, q, nslot) * LD(x, (IX)LD(col, q, nslot), nx);
    }
#pragma unroll
    for (int w = 1; w < UNROLL; w <<= 1)
#pragma unroll
      for (int i = 0; i + w < UNROLL; i += 2 * w) a[i] = a[i] + a[i + w];
    s = a[0];
  }
  part_s[threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.x < R && (unsigned int)p < rows) {
    float t = 0.0f;
    for (int l = 0; l < PARTS; l++) t += part_s[threadIdx.x + R * l];
    y[p] = t;
  }
}

extern "C" __global__ void busy(float *p, unsigned int n, int iters) {
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = p[i];
  for (int k = 0; k < iters; k++) v = fmaf(v, 0.9999f, 1e-7f);
  p[i] = v;
}
'''

FORMS = {'plain': {}, 'clamp': {'FORM_CLAMP': 1}, 'ldg': {'FORM_LDG': 1}, 'int': {'FORM_INT': 1}}


def interleaved_source(j, ln, lanes, xp):
    """Row position of the entry stored at padded position j (quad-device.ts interleavedSource)."""
    block = 4 * lanes
    w = j % block
    inter = j - w + (w % 4) * lanes + (w >> 2)
    keep = (lanes <= 1) | (j >= ln - (ln % block))
    return xp.where(keep, j, inter)


def row_of(starts, n, xp):
    """The segment of each of positions 0 .. n-1 given the segments' starts (a sorted prefix sum)."""
    return xp.searchsorted(starts[1:], xp.arange(n, dtype=xp.int64), side='right')


def seg_extreme(values, seg, nseg, xp, kind):
    """Per-segment min or max of `values` (segments with no value: 0 for max, left at int64 max for min)."""
    if xp is np:
        out = np.full(nseg, np.iinfo(np.int64).max if kind == 'min' else 0, np.int64)
        (np.minimum if kind == 'min' else np.maximum).at(out, seg, values)
        return out
    import cupyx
    out = xp.full(nseg, np.iinfo(np.int64).max if kind == 'min' else 0, xp.int64)
    (cupyx.scatter_min if kind == 'min' else cupyx.scatter_max)(out, seg, values)
    return out


def on_device(build, rp, ci, v, arg, cp):
    """Build a layout with CuPy (seconds at 6e7 entries), or on the host with numpy if that fails."""
    try:
        return build(cp.asarray(rp), cp.asarray(ci), cp.asarray(v), arg, cp)
    except ValueError:  # the layout does not apply to this matrix: no point in building it again
        raise
    except Exception as e:  # e.g. a CuPy without cupyx.scatter_min: the host path (minutes at 6e7 entries)
        print(f'{build.__name__} on the device failed ({type(e).__name__}: {e}); building on the host')
        return tuple(cp.asarray(a) for a in build(rp, ci, v, arg, np))


def quad_layout(rp, ci, v, lanes, xp=np):
    """csr-long pack 1 arrays (one binding block): rowq with pad bits, rbase, cols (u32 pairs of 16-bit
    offsets, 2 words per quad), vals (4 floats per quad). rp/ci int64, v float32, rows sorted or not."""
    rows = len(rp) - 1
    ln = rp[1:] - rp[:-1]
    nq = (ln + 3) // 4
    q = xp.zeros(rows + 1, dtype=xp.int64)
    q[1:] = xp.cumsum(nq)
    total = 4 * int(q[-1])
    erow = row_of(4 * q, total, xp)
    j = xp.arange(total, dtype=xp.int64) - 4 * q[:-1][erow]
    lnE = ln[erow]
    src = interleaved_source(j, lnE, lanes, xp)
    real = src < lnE
    last = xp.where(ln > 0, ci[xp.maximum(rp[1:] - 1, 0)], 0)  # the pad column: a column of the row
    pos = xp.where(real, rp[:-1][erow] + src, 0)
    colE = xp.where(real, ci[pos], last[erow])
    # per-row smallest column (segment min); rows of length 0 get 0
    nz = ln > 0
    lo = xp.where(nz, seg_extreme(ci, row_of(rp, len(ci), xp), rows, xp, 'min'), 0)
    off = (colE - lo[erow]).astype(xp.uint32)
    if total and int(off.max()) >= 65536:
        raise ValueError('a row spans >= 65 536 columns: pack 1 does not apply')
    cols = (off[0::2] | (off[1::2] << 16)).astype(xp.uint32)
    vals = xp.where(real, v[pos], xp.float32(0)).astype(xp.float32)
    pads = xp.where(nz, (4 - ln % 4) % 4, 0)
    rowq = (q.astype(xp.uint64) | xp.concatenate([xp.zeros(1, xp.int64), pads]).astype(xp.uint64) << 30).astype(xp.uint32)
    rowq[0] = 0
    return rowq, lo.astype(xp.uint32), cols, vals


def sliced_layout(rp, ci, v, height, xp=np):
    """sliced-ell-split pack 0 / interleave 0 arrays: slice offsets (one per slice, plus the end), row
    lengths, and the column-major slots (padding never read: each row stops at its length)."""
    rows = len(rp) - 1
    ln = rp[1:] - rp[:-1]
    nsl = (rows + height - 1) // height
    width = seg_extreme(ln, xp.arange(rows, dtype=xp.int64) // height, nsl, xp, 'max')
    stride = xp.minimum(height, rows - xp.arange(nsl, dtype=xp.int64) * height)
    off = xp.zeros(nsl + 1, xp.int64)
    off[1:] = xp.cumsum(width * stride)
    erow = row_of(rp, len(ci), xp)
    k = xp.arange(len(ci), dtype=xp.int64) - rp[:-1][erow]
    sl = erow // height
    dest = off[sl] + k * stride[sl] + (erow - sl * height)
    col = xp.zeros(int(off[-1]), xp.uint32)
    val = xp.zeros(int(off[-1]), xp.float32)
    col[dest] = ci.astype(xp.uint32)
    val[dest] = v
    return off.astype(xp.uint32), ln.astype(xp.uint32), col, val


def split_reference(off, rl, col, val, x, height):
    rows = len(rl)
    y = np.zeros(rows)
    for p in range(rows):
        c, r = divmod(p, height)
        stride = min(height, rows - c * height)
        q = int(off[c]) + np.arange(int(rl[p])) * stride + r
        y[p] = np.dot(val[q].astype(np.float64), x[col[q]])
    return y


def long_reference(rowq, rbase, cols, vals, x):
    """What the long kernel computes, in float64 on the host (the layout self-test)."""
    rows = len(rowq) - 1
    y = np.zeros(rows)
    off = np.empty(2 * len(cols), dtype=np.int64)
    off[0::2], off[1::2] = cols & 0xFFFF, cols >> 16
    for r in range(rows):
        q0, e = int(rowq[r]) & MASK, int(rowq[r + 1])
        q1 = e & MASK
        n = 4 * (q1 - q0) - (e >> 30 if q1 > q0 else 0)
        idx = np.arange(4 * q0, 4 * q0 + n)
        y[r] = np.dot(vals[idx].astype(np.float64), x[int(rbase[r]) + off[idx]])
    return y


def layout_selftest():
    rng = np.random.default_rng(5)
    rows, ncols = 300, 5000
    lens = rng.integers(0, 700, rows)
    lens[3], lens[4] = 0, 1
    rp = np.zeros(rows + 1, np.int64)
    rp[1:] = np.cumsum(lens)
    ci = np.concatenate([np.sort(rng.choice(ncols, l, replace=False)) for l in lens]).astype(np.int64)
    v = rng.standard_normal(len(ci)).astype(np.float32)
    x = rng.standard_normal(ncols)
    ref = np.array([np.dot(v[rp[r]:rp[r + 1]].astype(np.float64), x[ci[rp[r]:rp[r + 1]]]) for r in range(rows)])
    for lanes in (1, 16, 32):
        got = long_reference(*quad_layout(rp, ci, v, lanes), x)
        err = np.max(np.abs(got - ref))
        print(f'layout self-test lanes {lanes}: max |y - ref| = {err:.3g}')
        if err > 1e-9:
            raise SystemExit('layout self-test FAILED')
    for height in (32, 64):
        err = np.max(np.abs(split_reference(*sliced_layout(rp, ci, v, height), x, height) - ref))
        print(f'sliced layout self-test height {height}: max |y - ref| = {err:.3g}')
        if err > 1e-9:
            raise SystemExit('sliced layout self-test FAILED')
    print('layout self-test passed')


def main(argv):
    if '--layout-selftest' in argv:
        return layout_selftest()
    import cupy as cp
    import cupyx.scipy.sparse as csp
    from cupyx import cusparse

    def opt(name, default):
        return argv[argv.index(name) + 1] if name in argv else default
    rounds, reps = int(opt('--rounds', 2)), int(opt('--reps', 20))
    warm_ms, clock_log, out = float(opt('--warm-ms', 1000)), opt('--clock-log', None), opt('--json', None)
    twins = [t.split(':') for t in opt('--twins', 'stream:32:4,long:32:2,long:16:2').split(',')]
    forms = opt('--forms', 'plain,clamp,ldg,int').split(',')
    values = {opt(f, None) for f in ('--rounds', '--reps', '--warm-ms', '--clock-log', '--json', '--twins', '--forms')}
    paths = [a for a in argv if not a.startswith('--') and a not in values]
    dev = cp.cuda.Device()
    print(f'device {cp.cuda.runtime.getDeviceProperties(0)["name"].decode()}, CuPy {cp.__version__}, CUDA runtime {cp.cuda.runtime.runtimeGetVersion()}')
    mods = {}

    def module(lanes, unroll, form, wg=256):
        key = (lanes, unroll, form, wg)
        if key not in mods:  # `lanes` is also the split kernel's PARTS (its slices: 32 rows)
            defs = {'LANES': lanes, 'PARTS': lanes, 'SLICE': 32, 'UNROLL': unroll, 'WG': wg, **FORMS[form]}
            mods[key] = cp.RawModule(code=KERNELS, options=('-std=c++17',) + tuple(f'-D{k}={v}' for k, v in defs.items()))
        return mods[key]

    def function(name, lanes, unroll, form):
        try:  # a twin that does not compile is reported and skipped, the others still run
            return module(lanes, unroll, form).get_function(name)
        except Exception as e:
            print(f'{name} lanes={lanes} unroll={unroll} {form}: FAILED to compile: {type(e).__name__}: {e}')
            return None

    def events_ms(fn, n):
        s, e, ts = cp.cuda.Event(), cp.cuda.Event(), []
        for _ in range(n):
            s.record(); fn(); e.record(); e.synchronize(); ts.append(cp.cuda.get_elapsed_time(s, e))
        ts.sort()
        return ts[len(ts) // 2]

    def heat(fn, ms):
        t0 = time.perf_counter()
        while (time.perf_counter() - t0) * 1e3 < ms:
            for _ in range(8): fn()
            dev.synchronize()

    # warm: a busy kernel for ~warm_ms so that the SM clock leaves its idle state before any timing
    buf = cp.ones(1 << 24, dtype=cp.float32)
    busy = module(32, 1, 'plain').get_function('busy')
    t0 = time.perf_counter()
    while (time.perf_counter() - t0) * 1e3 < warm_ms:
        busy(((1 << 24) // 256,), (256,), (buf, np.uint32(1 << 24), np.int32(2000))); dev.synchronize()
    print(f'warm: {1e3 * (time.perf_counter() - t0):.0f} ms of a busy kernel')
    a, b = cp.random.rand(1 << 28, dtype=cp.float32), cp.empty((1 << 28,), dtype=cp.float32)
    heat(lambda: cp.copyto(b, a), 60)
    copy_gbs = 2 * 4 * (1 << 28) / events_ms(lambda: cp.copyto(b, a), 10) / 1e6
    del a, b
    print(f'copy {copy_gbs:.0f} GB/s')
    lines = []
    for p in paths:
        base, name = p[:-4] if p.endswith('.csr') else p, os.path.basename(p[:-4] if p.endswith('.csr') else p)
        rp_h = np.fromfile(base + '.rowptr', dtype=np.uint32).astype(np.int64)
        ci_h = np.fromfile(base + '.cols', dtype=np.uint32).astype(np.int64)
        v_h = np.fromfile(base + '.vals', dtype=np.float32)
        rows, nnz = len(rp_h) - 1, len(ci_h)
        ncols = max(rows, int(ci_h.max()) + 1 if nnz else 0)  # as bench/spmv-raw.ts: square matrices
        xs = np.sin(np.arange(1, ncols + 1, dtype=np.float64)).astype(np.float32)  # the bench's x
        x = cp.asarray(xs)
        A64 = csp.csr_matrix((cp.asarray(v_h.astype(np.float64)), cp.asarray(ci_h), cp.asarray(rp_h)), shape=(rows, ncols))
        ref = A64 @ x.astype(cp.float64)
        lens = cp.asarray((rp_h[1:] - rp_h[:-1]).astype(np.float64))
        absA = csp.csr_matrix((cp.abs(A64.data), A64.indices, A64.indptr), shape=A64.shape)
        bound = 2 * lens * 2.0 ** -24 * (absA @ cp.abs(x.astype(cp.float64)))
        del absA
        G = csp.csr_matrix((cp.asarray(v_h), cp.asarray(ci_h.astype(np.int32)), cp.asarray(rp_h.astype(np.int32))), shape=(rows, ncols))
        y = cp.zeros(rows, dtype=cp.float32)
        arrays = {'rp': cp.asarray(rp_h.astype(np.uint32)), 'col': cp.asarray(ci_h.astype(np.uint32)), 'val': cp.asarray(v_h)}
        csr_bytes = 8 * nnz + 4 * (rows + 1) + 4 * ncols + 4 * rows
        try:
            cusparse.spmv(G, x, y=y)
            vendor_fn = lambda: cusparse.spmv(G, x, y=y)  # noqa: E731 (no output allocation per call)
        except Exception as e:  # an older CuPy without the generic API: the anchor's form
            print(f'cusparse.spmv unavailable ({e}); timing G @ x')
            vendor_fn = lambda: G @ x  # noqa: E731
        cases = [('cusparse', None, None, None, vendor_fn, csr_bytes)]
        layouts = {}
        for kind, lanes, unroll in twins:
            lanes, unroll = int(lanes), int(unroll)
            if kind == 'stream':
                for f in forms:
                    fn = function('stream_kernel', lanes, unroll, f)
                    if fn is None:
                        continue
                    grid = ((rows + 256 // lanes - 1) // (256 // lanes),)
                    args = (arrays['rp'], arrays['col'], arrays['val'], x, y, np.uint32(rows), np.uint32(rows + 1), np.uint32(nnz), np.uint32(ncols))
                    cases.append((f'stream lanes={lanes},unroll={unroll}', f, lanes, unroll, (lambda fn=fn, grid=grid, args=args: fn(grid, (256,), args)), csr_bytes))
            elif kind == 'split':
                if 'split' not in layouts:
                    layouts['split'] = on_device(sliced_layout, rp_h, ci_h, v_h, 32, cp)
                soff, rl, scol, sval = layouts['split']
                own = 8 * len(scol) + 4 * len(soff) + 4 * rows + 4 * ncols + 4 * rows
                for f in forms:
                    fn = function('split_kernel', lanes, unroll, f)
                    if fn is None:
                        continue
                    grid = ((rows + 256 // lanes - 1) // (256 // lanes),)
                    args = (soff, rl, scol, sval, x, y, np.uint32(rows), np.uint32(len(scol)), np.uint32(ncols))
                    cases.append((f'split sliceHeight=32,parts={lanes},unroll={unroll},pack=0,interleave=0', f, lanes, unroll, (lambda fn=fn, grid=grid, args=args: fn(grid, (256,), args)), own))
            elif kind == 'long':
                if lanes not in layouts:
                    try:
                        layouts[lanes] = on_device(quad_layout, rp_h, ci_h, v_h, lanes, cp)
                    except ValueError as err:
                        print(f'{name}: long lanes {lanes}: {err}'); continue
                rowq, rbase, cols, vals = layouts[lanes]
                nq = len(vals) // 4
                own = 24 * nq + 8 * rows + 4 + 4 * ncols + 4 * rows
                for f in forms:
                    fn = function('long_kernel', lanes, unroll, f)
                    if fn is None:
                        continue
                    grid = ((rows + 256 // lanes - 1) // (256 // lanes),)
                    args = (rowq, rbase, cols, vals, x, y, np.uint32(rows), np.uint32(nq), np.uint32(ncols))
                    cases.append((f'long pack=1,interleave=1,lanes={lanes},unroll={unroll}', f, lanes, unroll, (lambda fn=fn, grid=grid, args=args: fn(grid, (256,), args)), own))
        res = {c[0] + (f' {c[1]}' if c[1] else ''): {'ms': [], 'windows': []} for c in cases}
        for rnd in range(rounds):
            for label, f, lanes, unroll, fn, byts in cases:
                key = label + (f' {f}' if f else '')
                r = res[key]
                try:
                    if rnd == 0:
                        y.fill(cp.nan); fn(); dev.synchronize()
                        err = cp.abs(y.astype(cp.float64) - ref)
                        worst = float(cp.max(cp.where(bound > 0, err / cp.maximum(bound, 1e-300), cp.where(err > 0, cp.inf, 0))))
                        r['worst'] = worst
                    w0 = time.time()
                    heat(fn, 60)
                    r['ms'].append(events_ms(fn, reps))
                    r['windows'].append([w0, time.time()])
                    r['bytes'] = byts
                except Exception as e:  # one failing twin does not stop the others
                    r['error'] = f'{type(e).__name__}: {e}'
                    print(f'{name} {key}: FAILED {r["error"]}')
        vendor = res['cusparse']['ms']
        vms = float(np.median(vendor)) if vendor else None
        for key, r in res.items():
            if not r['ms']:
                continue
            med = float(np.median(r['ms']))
            gbs = r['bytes'] / med / 1e6
            row = dict(matrix=name, rows=rows, nnz=nnz, case=key, median_ms=med, rounds_ms=r['ms'], bytes=r['bytes'], gbs=gbs,
                       copy_fraction=gbs / copy_gbs, cusparse_ms=vms, vs_cusparse=vms / med if vms else None,
                       worst_err_over_bound=r.get('worst'), windows=r['windows'])
            lines.append(row)
        for row in lines:
            if row['matrix'] == name:
                print(twin_line(row))
        if out:
            with open(out, 'w') as fh:
                for row in lines: fh.write(json.dumps(row) + '\n')
        del layouts, A64, G, ref, bound
        cp.get_default_memory_pool().free_all_blocks()
    if clock_log:
        annotate_clocks(lines, clock_log)
        print('clock-annotated:')
        for row in lines: print(twin_line(row))
        if out:
            with open(out, 'w') as fh:
                for row in lines: fh.write(json.dumps(row) + '\n')


def twin_line(r):
    ok = r['worst_err_over_bound'] is not None and r['worst_err_over_bound'] <= 1
    clk = f" | SM {r['sm_min']}-{r['sm_max']} MHz ({r['sm_n']} samples){' CLOCK-LOW' if r['sm_min'] < 1500 else ''}" if r.get('sm_n') else ''
    vs = f" | cuSPARSE {r['cusparse_ms']:.4f} ms -> {r['vs_cusparse']:.2f}x" if r['vs_cusparse'] else ''
    return (f"TWIN {r['matrix']} {r['case']} | {r['median_ms']:.4f} ms ({'/'.join(f'{t:.4f}' for t in r['rounds_ms'])}) | "
            f"{r['gbs']:.0f} GB/s = {100 * r['copy_fraction']:.0f} % copy ({r['bytes'] / r['nnz']:.2f} B/nnz){vs}{clk}{'' if ok else ' | WRONG'}")


def annotate_clocks(rows, path):
    """SM clock samples (nvidia-smi --query-gpu=timestamp,clocks.sm,... csv) within each timing window
    (padded by 150 ms: the sampler runs every 100 ms and a timing takes 10-100 ms)."""
    samples = []
    try:
        with open(path) as fh:
            for line in fh:
                parts = [p.strip() for p in line.split(',')]
                try:
                    t = time.mktime(time.strptime(parts[0].split('.')[0], '%Y/%m/%d %H:%M:%S')) + float('0.' + parts[0].split('.')[1])
                    samples.append((t, int(parts[1].split()[0])))
                except (ValueError, IndexError):
                    continue
    except OSError as e:
        print(f'clock log {path}: {e}')
        return
    for r in rows:
        got = [mhz for t, mhz in samples for w0, w1 in r['windows'] if w0 - 0.15 <= t <= w1 + 0.15]
        if got:
            r.update(sm_min=min(got), sm_max=max(got), sm_n=len(got))


if __name__ == '__main__':
    main(sys.argv[1:])
