/**
 * GMRES(30) and Lanczos on WebGPU (float32, scalars on the device) and their float64-accurate
 * variants, on the problems `bench/solvers_cupy.py` solves with CuPy in the same call:
 *
 * - GMRES(m): the 2-D convection–diffusion matrix (nonsymmetric, `generators.convectionDiffusion2d`)
 *   with b = A·1; ms per iteration over a fixed number of iterations (rtol far below reach) and
 *   time to a float64 answer with rtol 1e-10 (mixed-precision refinement, inner GMRES in float32).
 * - Lanczos: the k lowest eigenpairs of the FCI Hamiltonian of the open Hubbard chain (a model
 *   Hamiltonian: L sites, U/t = 2; bench/hubbard.ts), float32 to tol 1e-5 (time, matvecs), and
 *   float64-accurate eigenvalues (1e-10 relative) with `eigsMixed` (Lanczos in float32 on the
 *   tuned operator, then the df64 polish on the device: eigenvalues accepted by the certified
 *   bound of eigen/bounds.ts, or by the session-4 residual rule, for comparison).
 *
 * - SPD eigen target (issue 15): `--spd NAME[,NAME]` runs the same float32 Lanczos and eigsMixed on
 *   an SPD matrix of the bench set (bench/spd-matrices.ts: `poisson3d-AxBxC`, `poisson2d-AxB`,
 *   `stencil27-N`, `banded-N-bB`), dumped as `spd-NAME` for the CuPy eigsh comparison.
 *   `--mixed cold,values,…` picks the eigsMixed variants (default all; see mixedOnDevice).
 *
 * `--block on,off` (default `on`): the float32 Lanczos runs with the Lanczos basis block
 * (GpuVectorSpace.lanczosBlock, one buffer for the basis: six dispatches per CGS2 step) and/or
 * without it (the per-vector path), in the same call; eigsMixed runs with the block.
 *
 * `--dump DIR` writes each matrix as NAME.rowptr/.cols/.vals (int32, int32, float32 — exact for
 * these matrices) for the CuPy script.
 *
 *   node .gpukit/app/solvers.mjs --out $OUT/solvers.json [--cd 1000,2000] [--hubbard 12] [--k 4]
 *     [--gmres-iters 300] [--restart 30] [--kernel csr-scalar] [--dump DIR] [--refine-max-rows N]
 *     [--blas 1000000,4000000] [--ortho cgs2,cgs] [--eig-kernel tuned|csr-scalar|…] [--host-polish] [--unsafe]
 *     [--spd poisson3d-100x110x120] [--mixed cold,bound-nocheck,values,bound,residual] [--block on,off] [--rounds 2]
 *     [--ahead on,off] [--lanczos-basis 40]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { buildCiSpace } from '../packages/chem/src/determinants/build';
import { assembleHamiltonian, parseFcidump } from '../packages/chem/src/index';
import { type CsrMatrix, csrSpmv, generators, HostOperator } from '../packages/formats/src/index';
import { createGpuContext, Df64CsrOperator, Df64VectorSpace, type GpuOperator, type GpuVector, GpuVectorSpace, gpuOperatorFromCsr, timeGpu, tunedOperator } from '../packages/gpu/src/index';
import { eigsMixed, gmres, lanczos, type MixedEigenOptions, type MixedEigenResult, refinedSolve } from '../packages/solvers/src/index';
import { dumpCsr } from './dump';
import { hubbardFcidump } from './hubbard';
import { spdMatrix } from './spd-matrices';

const argv = process.argv.slice(2);
const opt = (n: string) => (argv.includes(n) ? argv[argv.indexOf(n) + 1] : undefined);
const out = opt('--out') ?? 'bench/out/solvers.json';
const cdGrids = (opt('--cd') ?? '1000,2000').split(',').filter(Boolean).map(Number);
const hubbard = (opt('--hubbard') ?? '12').split(',').filter(Boolean).map(Number);
/** SPD matrices of the bench set for the eigen target (bench/spd-matrices.ts names). */
const spdNames = (opt('--spd') ?? '').split(',').filter(Boolean);
/** eigsMixed variants of mixedOnDevice (keys of MIXED_VARIANTS; default all). */
const mixedKeys = opt('--mixed')?.split(',').filter(Boolean);
/** Lanczos basis block modes of the float32 Lanczos runs ('on': GpuVectorSpace.lanczosBlock, 'off': per vector). */
const blockModes = (opt('--block') ?? 'on').split(',').filter((m) => m === 'on' || m === 'off');
/** Lanczos's record-ahead (the next batch recorded while a readback is in flight) in the float32 Lanczos runs: 'on' (default), 'off'. */
/** `--lanczos-basis M`: the float32 Lanczos runs' maxBasis (default Lanczos's own, 20 for k = 4; eigsMixed's fast phase takes 40). */
const lanczosBasis = opt('--lanczos-basis') ? Number(opt('--lanczos-basis')) : undefined;
const aheadModes = (opt('--ahead') ?? 'on').split(',').filter((m) => m === 'on' || m === 'off');

/**
 * The eigsMixed variants of {@link mixedOnDevice} by `--mixed` key. The float32 Lanczos to 1e-6
 * relative is capped at 1000 steps in case float32 cannot get there (the polish then starts from
 * what it has, and its corrections make up the difference).
 */
const MIXED_VARIANTS: Record<string, { label: string; o: Partial<MixedEigenOptions<GpuVector, unknown>> }> = {
  cold: { label: 'bound, no multiplicity check (cold)', o: { accept: 'bound', fastCheckMultiplicity: false, fastMaxIterations: 1000 } },
  'bound-nocheck': { label: 'bound, no multiplicity check', o: { accept: 'bound', fastCheckMultiplicity: false, fastMaxIterations: 1000 } },
  // basis 20 given: session 7's / the first wave's 'values' (the eigsMixed default basis is 40 since s8b)
  values: { label: 'bound, no multiplicity check, values only (vectors stay on the device, as CuPy), fast basis 20', o: { accept: 'bound', fastCheckMultiplicity: false, fastMaxIterations: 1000, maxBasis: 20, returnVectors: false } },
  // eigsMixed's own fast-phase defaults: basis fastLanczosBasis (40 here), Lanczos's 5000-step cap
  'values-default': { label: 'bound, no multiplicity check, values only, fast phase defaults (basis 40, up to 5000 steps)', o: { accept: 'bound', fastCheckMultiplicity: false, returnVectors: false } },
  // the fast phase let run longer / with a larger basis: fewer polish iterations for more float32 steps (issue 15's product split)
  'values-3000': { label: 'bound, no multiplicity check, values only, fast basis 20, up to 3000 steps', o: { accept: 'bound', fastCheckMultiplicity: false, fastMaxIterations: 3000, maxBasis: 20, returnVectors: false } },
  'values-basis40': { label: 'bound, no multiplicity check, values only, fast basis 40, up to 1000 steps', o: { accept: 'bound', fastCheckMultiplicity: false, fastMaxIterations: 1000, maxBasis: 40, returnVectors: false } },
  // the user-facing default: the multiplicity check ON and no step cap. ('bound' caps the fast phase at 1000 steps, which
  // cut its check off on poisson3d 100×110×120 after 8 steps, fast reason 'max-iterations': s8-dev/6 eig18b, 1 548 ms)
  'values-check': { label: 'bound, WITH the multiplicity check, values only, fast phase defaults (basis 40, up to 5000 steps)', o: { accept: 'bound', returnVectors: false } },
  // the polish's correction solves given more GMRES steps (issue 15 item 3: fewer outer df64 iterations for longer float32 solves)
  'values-inner50': { label: 'bound, no multiplicity check, values only, fast phase defaults, 50 inner GMRES steps', o: { accept: 'bound', fastCheckMultiplicity: false, returnVectors: false, innerIterations: 50 } },
  // (s10-eig15) 12 inner GMRES steps per correction instead of 25, with and without the check (host poisson3d 20×22×24:
  // the same 2 polish iterations, 84 → 52 float32 correction products)
  'values-inner12': { label: 'bound, no multiplicity check, values only, fast phase defaults, 12 inner GMRES steps', o: { accept: 'bound', fastCheckMultiplicity: false, returnVectors: false, innerIterations: 12 } },
  'values-check-inner12': { label: 'bound, WITH the multiplicity check, values only, fast phase defaults, 12 inner GMRES steps', o: { accept: 'bound', returnVectors: false, innerIterations: 12 } },
  // (s11-eig15) the polish's inner GMRES with one Gram–Schmidt pass in the device basis block (a step = product + 4 dispatches),
  // and the session-10 checks (every 4 inner steps in every solve) to measure what the adaptive checks save
  'values-check-cgs': { label: 'bound, WITH the multiplicity check, values only, fast phase defaults, inner GMRES cgs', o: { accept: 'bound', returnVectors: false, innerOrthogonalization: 'cgs' } },
  'values-cgs': { label: 'bound, no multiplicity check, values only, fast phase defaults, inner GMRES cgs', o: { accept: 'bound', fastCheckMultiplicity: false, returnVectors: false, innerOrthogonalization: 'cgs' } },
  'values-check-cgs2': { label: 'bound, WITH the multiplicity check, values only, fast phase defaults, inner GMRES cgs2', o: { accept: 'bound', returnVectors: false, innerOrthogonalization: 'cgs2' } },
  'values-cgs2': { label: 'bound, no multiplicity check, values only, fast phase defaults, inner GMRES cgs2', o: { accept: 'bound', fastCheckMultiplicity: false, returnVectors: false, innerOrthogonalization: 'cgs2' } },
  // (s11-eig15) the polish's Davidson subspace 48 instead of 28: no restart in the H100's 8 polish iterations
  'values-check-sub48': { label: 'bound, WITH the multiplicity check, values only, fast phase defaults, polish subspace 48', o: { accept: 'bound', returnVectors: false, polishMaxSubspace: 48 } },
  // (s11-eig15) 50 inner steps with the cheaper correction products: fewer outer iterations (each a df64 Rayleigh–Ritz and readbacks)?
  'values-check-inner50': { label: 'bound, WITH the multiplicity check, values only, fast phase defaults, 50 inner GMRES steps', o: { accept: 'bound', returnVectors: false, innerIterations: 50 } },
  bound: { label: 'bound', o: { accept: 'bound', fastMaxIterations: 1000 } },
  residual: { label: 'residual rule (session 4)', o: {} },
};
const k = Number(opt('--k') ?? 4);
const gmresIters = Number(opt('--gmres-iters') ?? 300);
const restart = Number(opt('--restart') ?? 30);
/** Gram–Schmidt variants of the timed GMRES runs ('cgs2' is the default; 'cgs' is CuPy's). */
const orthos = (opt('--ortho') ?? 'cgs2,cgs').split(',') as ('cgs2' | 'cgs' | 'mgs')[];
const kernel = opt('--kernel') ?? 'csr-scalar';
/** Float32 operator of the eigen part: 'tuned' (default: the autotuner, as the CLI) or a kernel id. */
const eigKernel = opt('--eig-kernel') ?? 'tuned';
/** Also run eigsMixed with the float64 host polish (slow: 3.7 s at L = 12). */
const hostPolish = argv.includes('--host-polish');
const dumpDir = opt('--dump');
/** Vector lengths of the BLAS-1 breakdown (GPU time by timestamps and wall time per call). */
const blasSizes = (opt('--blas') ?? '').split(',').filter(Boolean).map(Number);
/** Refined (float64-answer) GMRES only up to this many rows: unpreconditioned GMRES(30) on a 4·10^6-row grid needs ~10^5 iterations. */
const refineMaxRows = Number(opt('--refine-max-rows') ?? 1.1e6);

function dump(name: string, a: CsrMatrix): void {
  if (dumpDir) dumpCsr(dumpDir, name, a, true);
}

const ctx = await createGpuContext({ unsafe: argv.includes('--unsafe') });
console.log(ctx.describeText().split('\n')[0]);
const space = new GpuVectorSpace(ctx);
/** The same space without the basis block (the per-vector Lanczos path). */
const plainSpace = new GpuVectorSpace(ctx);
(plainSpace as unknown as { lanczosBlock?: unknown }).lanczosBlock = undefined;
const rows: Record<string, unknown>[] = [];
const save = () => {
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify({ date: new Date().toISOString(), device: ctx.describe(), rows }, null, 1));
};

// BLAS-1 breakdown of one Krylov step: GPU time (timestamps) and wall time per call (dispatch
// and host recording included), and the bytes each moves, for the kernels GMRES and Lanczos use
for (const n of blasSizes) {
  const vs = Array.from({ length: 16 }, (_, j) => space.fromArray(Float32Array.from({ length: n }, (_, i) => Math.sin(i * 0.001 + j))));
  const y = space.create(n);
  space.copy(vs[0]!, y);
  const m = 15;
  const xs = vs.slice(1, 1 + m);
  const coeffs = xs.map((_, j) => space.scalar(1e-3 * (j + 1)));
  const ops: [string, () => void, number][] = [
    ['dot', () => space.release(space.dot(vs[0]!, y)), 8 * n],
    ['norm2', () => space.release(space.norm2(y)), 4 * n],
    ['axpby', () => space.axpby(0.5, vs[0]!, 0.5, y), 12 * n],
    [`multiDot(${m})`, () => { for (const d of space.multiDot(xs, y)) space.release(d); }, 4 * n * (m + Math.ceil(m / 6))],
    [`combine(${m})`, () => space.combine(coeffs, xs, 1, y), 4 * n * (m + 2 * Math.ceil(m / 6))],
  ];
  for (const [name, encode, bytes] of ops) {
    const t = await timeGpu(ctx, encode, { reps: 30 });
    const w = await timeGpu(ctx, encode, { reps: 60, forceWall: true, batches: 3 });
    const dispatches0 = ctx.recorder.dispatches;
    encode();
    const dispatches = ctx.recorder.dispatches - dispatches0;
    await ctx.finish();
    const row = { kind: 'blas1', op: name, n, dispatches, gpuMs: t.medianMs, wallMs: w.medianMs, bytes, gpuGBs: bytes / t.medianMs / 1e6, wallGBs: bytes / w.medianMs / 1e6, method: t.method };
    rows.push(row);
    console.log(`blas1 n=${n} ${name}: ${dispatches} dispatches, GPU ${t.medianMs.toFixed(4)} ms (${row.gpuGBs.toFixed(0)} GB/s, ${t.method}), wall ${w.medianMs.toFixed(4)} ms (${row.wallGBs.toFixed(0)} GB/s)`);
  }
  for (const v of [...vs, y]) space.release(v);
  for (const c of coeffs) space.release(c);
  save();
}

for (const n of cdGrids) {
  const name = `cd2d-${n}`;
  const a = generators.convectionDiffusion2d(n);
  dump(name, a);
  const op = gpuOperatorFromCsr(ctx, a, { kernel });
  const bHost = csrSpmv(a, new Float64Array(a.rows).fill(1));
  const b = space.fromArray(bHost);
  for (const orthogonalization of orthos) {
    const warm = await gmres(space, op, b, { restart, rtol: 1e-30, maxIterations: restart, orthogonalization }); // pipelines
    space.release(warm.x);
    await ctx.finish();
    const t0 = performance.now();
    const r = await gmres(space, op, b, { restart, rtol: 1e-30, maxIterations: gmresIters, orthogonalization });
    await ctx.finish();
    const ms = performance.now() - t0;
    space.release(r.x);
    const row = { problem: name, solver: `gmres(${restart}) ${orthogonalization}`, precision: 'f32', rows: a.rows, nnz: a.rowPtr[a.rows], kernel: op.label, iterations: r.iterations, matvecs: r.stats.matvecs, readbacks: r.stats.readbacks, ms, msPerIter: ms / Math.max(1, r.iterations) };
    rows.push(row);
    console.log(`${name} gmres(${restart}) ${orthogonalization} f32: ${r.iterations} iterations (${r.reason}), ${row.msPerIter.toFixed(4)} ms/iter, ${r.stats.readbacks} readbacks`);
  }
  if (a.rows > refineMaxRows) {
    op.dispose();
    space.release(b);
    save();
    continue;
  }
  const t1 = performance.now();
  const rf = await refinedSolve({ hostOperator: HostOperator.fromCsr(a), innerOperator: op, innerSpace: space, b: bHost, rtol: 1e-10, inner: { method: 'gmres', restart, rtol: 1e-4, maxIterations: 20000 } });
  const msRef = performance.now() - t1;
  rows.push({ problem: name, solver: `refined gmres(${restart})`, precision: 'f64 answer', rows: a.rows, ms: msRef, outer: rf.outerIterations, inner: rf.innerIterations, relativeResidual: rf.trueResidual / rf.bNorm, converged: rf.converged });
  console.log(`${name} refined gmres(${restart}) to 1e-10: ${rf.converged ? 'converged' : rf.reason}, ${rf.outerIterations} outer / ${rf.innerIterations} inner, rel.res ${(rf.trueResidual / rf.bNorm).toExponential(2)}, ${msRef.toFixed(0)} ms`);
  op.dispose();
  space.release(b);
  save();
}

for (const l of hubbard) {
  const name = `hubbard-L${l}`;
  const fd = parseFcidump(hubbardFcidump(l), { file: name });
  const { fcidump, space: dets } = buildCiSpace(fd, 'fci');
  const h = await assembleHamiltonian(fcidump, dets, { workers: 'auto' });
  console.log(`${name}: ${h.matrix.rows} determinants, ${h.matrix.rowPtr[h.matrix.rows]} non-zeros, assembled in ${h.stats.ms.toFixed(0)} ms`);
  await eigenCase(name, h.matrix, fd.ecore);
}

for (const spec of spdNames) {
  const t0 = performance.now();
  const a = spdMatrix(spec);
  const name = `spd-${spec}`;
  console.log(`${name}: ${a.rows} rows, ${a.rowPtr[a.rows]} non-zeros, generated in ${(performance.now() - t0).toFixed(0)} ms`);
  await eigenCase(name, a, 0);
}

/**
 * The eigen part on one symmetric matrix: the float32 Lanczos (with and without the
 * multiplicity check) on the tuned operator, the optional host polish, and eigsMixed with the
 * df64 polish on the device. `shift` is added to the printed values (the Hubbard core energy).
 */
async function eigenCase(name: string, a: CsrMatrix, shift: number): Promise<void> {
  dump(name, a);
  // the project's tuned operator (the CLI's path) unless --eig-kernel names a fixed kernel
  const tb = performance.now();
  const op: GpuOperator = eigKernel === 'tuned' ? await tunedOperator(ctx, a, { expectedProducts: 300 }) : gpuOperatorFromCsr(ctx, a, { kernel: eigKernel });
  await ctx.finish();
  const buildMs = performance.now() - tb;
  console.log(`${name}: float32 operator ${op.label} (${eigKernel === 'tuned' ? 'tuned' : 'fixed'}), built in ${buildMs.toFixed(0)} ms`);
  rows.push({ problem: name, kind: 'eig-operator', kernel: op.label, tuned: eigKernel === 'tuned', buildMs });
  const warm = await lanczos(op, space, { k, tol: 1e-3, maxIterations: 40 });
  warm.vectors.forEach((v) => { space.release(v); });
  await ctx.finish();
  // with the multiplicity check (our default) and without it (CuPy's / ARPACK's algorithm), with and without the basis block
  for (const block of blockModes) {
    const sp = block === 'on' ? space : plainSpace;
    if (block === 'off') for (const v of (await lanczos(op, sp, { k, tol: 1e-3, maxIterations: 40 })).vectors) sp.release(v); // its pipelines
    for (const [checkMultiplicity, ahead] of [true, false].flatMap((cm) => aheadModes.map((m) => [cm, m] as const))) {
      const d0 = ctx.recorder.dispatches;
      const t0 = performance.now();
      const r = await lanczos(op, sp, { k, tol: 1e-5, checkMultiplicity, recordAhead: ahead === 'on', ...(lanczosBasis ? { maxBasis: lanczosBasis } : {}) });
      await ctx.finish();
      const ms = performance.now() - t0;
      const dispatchesPerMatvec = (ctx.recorder.dispatches - d0) / Math.max(1, r.stats.matvecs);
      r.vectors.forEach((v) => { sp.release(v); });
      const solver = `${checkMultiplicity ? 'lanczos' : 'lanczos (no multiplicity check)'}${block === 'on' ? '' : ' per-vector basis'}${ahead === 'on' ? '' : ' no record-ahead'}${lanczosBasis ? ` basis ${lanczosBasis}` : ''}`;
      rows.push({ problem: name, solver, block, precision: 'f32', tol: 1e-5, k, rows: a.rows, nnz: a.rowPtr[a.rows], kernel: op.label, iterations: r.iterations, matvecs: r.stats.matvecs, readbacks: r.stats.readbacks, ms, msPerMatvec: ms / Math.max(1, r.stats.matvecs), dispatchesPerMatvec, values: r.values.map((x) => x + shift), residualNorms: r.residualNorms, reason: r.reason });
      console.log(`${name} ${solver} k=${k} f32 tol 1e-5: ${r.reason}, ${r.stats.matvecs} matvecs, ${ms.toFixed(0)} ms (${(ms / Math.max(1, r.stats.matvecs)).toFixed(3)} ms/matvec, ${dispatchesPerMatvec.toFixed(2)} dispatches/matvec); ${r.values.map((v) => v.toFixed(7)).join(' ')}`);
    }
  }
  if (hostPolish) {
    const t1 = performance.now();
    const m = await eigsMixed({ method: 'lanczos', k, fastOperator: op, fastSpace: space, hostOperator: HostOperator.fromCsr(a) });
    const msMixed = performance.now() - t1;
    rows.push({ problem: name, solver: 'eigsMixed(lanczos → jd)', precision: 'f64 answer', k, rows: a.rows, kernel: op.label, ms: msMixed, converged: m.converged, reason: m.reason, values: m.values, residualNorms: m.residualNorms, phases: m.phases });
    console.log(`${name} eigsMixed(lanczos → jd, host polish) k=${k}: ${m.reason}, ${msMixed.toFixed(0)} ms; ${m.values.map((v) => v.toFixed(12)).join(' ')}; ${phaseText(m)}`);
  }
  await mixedOnDevice(name, a, op);
  op.dispose();
  save();
}

/** The phases of an eigsMixed result in one line (products per space, readbacks, ms). */
function phaseText(m: MixedEigenResult): string {
  return `phases ${m.phases.map((p) => `${p.phase} ${p.method} ${p.reason} after ${p.iterations} iterations, ${p.matvecs} products${p.innerMatvecs !== undefined ? ` + ${p.innerMatvecs} f32 correction products` : ''}, ${p.readbacks} readbacks${p.innerReadbacks !== undefined ? ` + ${p.innerReadbacks} correction readbacks` : ''}, ${p.ms.toFixed(0)} ms`).join('; ')}`;
}

/**
 * eigsMixed with the polish in df64 on the device over the float32 operator's own CSR arrays
 * (Df64CsrOperator.fromGpuOperator: + lo arrays only where values are not exact in f32; 0 bytes
 * per non-zero on Hubbard), in three settings: the residual rule of session 4, and the bound
 * acceptance (eigen/bounds.ts) with and without Lanczos's multiplicity check. The first bound
 * run is reported as 'cold' (df64 pipelines compiled in it); every timed run after a warm one.
 */
async function mixedOnDevice(name: string, a: CsrMatrix, op: GpuOperator): Promise<void> {
  const df = await Df64VectorSpace.of(ctx);
  if (!df) {
    console.log(`${name} eigsMixed df64 polish: skipped (the device fails the df64 self-test)`);
    return;
  }
  const tb = performance.now();
  const shared = Df64CsrOperator.fromGpuOperator(df.d, op, a);
  const dop = shared ?? Df64CsrOperator.fromCsr(df.d, a);
  await ctx.finish();
  console.log(`${name} df64 operator: ${shared ? 'shares the float32 upload' : 'own copy'}, ${dop.deviceBytes} device bytes added (${(dop.deviceBytes / a.rowPtr[a.rows]!).toFixed(2)} B/nnz), ${(performance.now() - tb).toFixed(0)} ms`);
  const variants = mixedKeys ? mixedKeys.map((key) => {
    const v = MIXED_VARIANTS[key];
    if (!v) throw new Error(`--mixed ${key}: expected one of ${Object.keys(MIXED_VARIANTS).join(', ')}`);
    return v;
  }) : Object.values(MIXED_VARIANTS);
  let ref: number[] | undefined;
  // `--rounds N`: the variant list N times over, interleaved (round 1: a, b; round 2: a, b), against drift of the machine
  const rounds = Number(opt('--rounds') ?? 1);
  for (const v of Array.from({ length: rounds }, () => variants).flat()) {
    await ctx.finish();
    const t = performance.now();
    const m = await eigsMixed({ method: 'lanczos', k, fastOperator: op, fastSpace: space, devicePolish: df.polish(dop), ...v.o });
    const ms = performance.now() - t;
    ref ??= m.values;
    const agree = Math.max(...m.values.map((x, j) => Math.abs(x - ref![j]!) / Math.abs(ref![j]!)));
    const b = m.bounds;
    rows.push({ problem: name, solver: `eigsMixed(lanczos → jd, df64 polish on the device; ${v.label})`, precision: 'f64 answer (df64)', k, rows: a.rows, kernel: op.label, df64Operator: shared ? 'shared' : 'own', ms, converged: m.converged, reason: m.reason, values: m.values, residualNorms: m.residualNorms, bounds: b, phases: m.phases, readbacks: m.stats.readbacks, relDiffToFirst: agree });
    console.log(`${name} eigsMixed df64 (${v.label}) k=${k}: ${m.reason}, ${ms.toFixed(0)} ms; ${m.values.map((x) => x.toFixed(12)).join(' ')}; bounds ${b ? b.bound.map((x) => x.toExponential(1)).join(' ') : '-'} (accepted by ${b ? b.acceptedBy.join(',') : '-'}); max residual ${Math.max(...m.residualNorms).toExponential(2)}; vs first ${agree.toExponential(1)}; ${phaseText(m)}`);
  }
  dop.dispose();
}

console.log(`wrote ${out}`);
ctx.dispose();
