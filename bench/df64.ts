/**
 * Time to a float64-accurate answer with df64 refinement on the device (issue 15), against CuPy's
 * float64 solvers in the same call: CG on a 27-point stencil (120³ = 1 728 000 rows; built here,
 * the generators have only the 7-point poisson3d), GMRES(30) on a 10^6-row power-law matrix
 * (made diagonally dominant so that GMRES converges; values rounded to float32 so that CuPy
 * reads the same numbers), and any Matrix Market files given with --mtx (float64 values: ours
 * keeps the lo parts in df64, CuPy reads the same file), b = A·1, rtol 1e-8. Timed: the
 * refinedSolve call only (operator tuning, the df64 matrix upload, the self-test and one
 * warm-up solve are setup); CuPy: its solver call only. The true relative residual is
 * recomputed in float64 on the host (ours) and on the GPU (CuPy).
 *
 * Variants (--variants, default all): CG 'reliable' (one recurrence, df64 residual replacements
 * each time the recursive residual fell 1e-3: the default), 'reliable4' (the same at 1e-4: one
 * df64 residual fewer to 1e-8) and 'restart' (one CG solve per outer step, inner rtol 1e-5: the code before);
 * GMRES 'default' (cgs through the device basis block, one Hessenberg read per cycle, inner rtol
 * 1e-4), 'noblock' (the same with the per-vector passes of session 9) and 'cgs2' (the earlier
 * inner defaults); 'gm3' / 'gm5' / 'gm6' are 'default' with inner rtol 1e-3 / 1e-5 / 1e-6,
 * 'gm5noblock' is 'gm5' with the per-vector passes.
 * With --cupy PATH the CuPy anchor runs after each matrix (generated matrices
 * are dumped to --dump DIR, default $TMPDIR/df64-bench) and a ratio table is printed at the end.
 * CG 'lag0' / 'lag2' / 'lag4' / 'lag8' / 'lag12' / 'lag16' are 'reliable' with that inner.checkLag
 * (0: the synchronous check before session 8; 'reliable' takes the default); 'reliable2' is
 * 'reliable' at δ = 1e-2; 'ce8' / 'ce32' are 'reliable' with at most 8 / 32 iterations between
 * checks (default 16). --only poisson7 runs CG on the 7-point
 * poisson3d of --grid instead. --repeat N times each variant N times after its warm-up, and CuPy
 * N times (the table takes CuPy's fastest). --io device,host (default both): 'device' times the
 * solve with b already on the GPU (a df64 vector uploaded before the timer, as CuPy's b = A·1 is
 * made on the GPU before its timer) and x left there (`output: 'device'`, read after the timer
 * for the true residual) — the CuPy-comparable number; 'host' times host b in, host x out
 * (upload of the float64 words, device split, read of x and join inside the timer). Prints one
 * JSON line per run and a `SUMMARY` line per run (ours and CuPy's):
 *
 *   node .gpukit/app/df64.mjs --out $OUT/df64.json --cupy .gpukit/cupy_solvers_anchor.py
 *     [--mtx .gpukit/data/bcsstk09.mtx:cg,.gpukit/data/ExaSP2_poly_chain.512.mtx:gmres]
 *     [--grid 120] [--rows 1000000] [--variants reliable,reliable4,restart,lag0,lag2,lag8,default,cgs2] [--kernel csr-vector [--params lanes=4]]
 *     [--host-too] [--only stencil|poisson7|powerlaw|mtx] [--repeat 2]
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { type CsrMatrix, csrSpmv, generators, HostOperator, readMatrixMarket } from '../packages/formats/src/index';
import { createGpuContext, Df64Residual, type GpuOperator, gpuOperatorFromCsr, GpuVectorSpace, tunedOperator } from '../packages/gpu/src/index';
import { type RefinedSolveDeviceResult, type RefinedSolveResult, refinedSolve } from '../packages/solvers/src/index';
import { powerLawDominant, stencil27 } from './df64-matrices';
import { dumpCsr } from './dump';

const argv = process.argv.slice(2);
const opt = (n: string) => (argv.includes(n) ? argv[argv.indexOf(n) + 1] : undefined);
const out = opt('--out') ?? 'bench/out/df64.json';
const grid = Number(opt('--grid') ?? 120);
const plRows = Number(opt('--rows') ?? 1_000_000);
const ioModes = (opt('--io') ?? 'device,host').split(',') as ('device' | 'host')[];
for (const m of ioModes) if (m !== 'device' && m !== 'host') throw new Error(`--io ${m}: expected device or host`);
const variants = new Set((opt('--variants') ?? 'reliable,reliable4,restart,default,cgs2').split(','));
/** Timed solves per variant (after the warm-up), each printed. */
const repeat = Number(opt('--repeat') ?? 1);
const kernel = opt('--kernel');
/** Kernel parameters for --kernel, e.g. lanes=4 (the tuner's choice on the stencil). */
const kernelParams = Object.fromEntries((opt('--params') ?? '').split(',').filter(Boolean).map((kv) => [kv.split('=')[0]!, Number(kv.split('=')[1])]));
const cupy = opt('--cupy');
const dumpDir = opt('--dump') ?? (cupy ? join(tmpdir(), 'df64-bench') : undefined);
const only = opt('--only');
const mtx = (opt('--mtx') ?? '').split(',').filter(Boolean).map((spec) => {
  const [path, method] = spec.split(':');
  if (method !== 'cg' && method !== 'gmres') throw new Error(`--mtx ${spec}: expected PATH:cg or PATH:gmres`);
  return { path: path!, method: method as 'cg' | 'gmres' };
});

/** The refinedSolve inner options of each variant (CG: reliable / restart; GMRES(30): default / cgs2). */
const VARIANTS: Record<string, { method: 'cg' | 'gmres'; inner: Record<string, unknown> }> = {
  reliable: { method: 'cg', inner: { method: 'cg' } },
  reliable4: { method: 'cg', inner: { method: 'cg', rtol: 1e-4 } },
  // the check lag (readback awaited k iterations after it starts; default 4 on the device):
  // lag0 is the synchronous check of session 7 (5 dispatches per iteration), the others the
  // fused iteration (4 dispatches with the product)
  lag0: { method: 'cg', inner: { method: 'cg', checkLag: 0 } },
  lag2: { method: 'cg', inner: { method: 'cg', checkLag: 2 } },
  lag4: { method: 'cg', inner: { method: 'cg', checkLag: 4 } },
  lag8: { method: 'cg', inner: { method: 'cg', checkLag: 8 } },
  lag12: { method: 'cg', inner: { method: 'cg', checkLag: 12 } },
  lag16: { method: 'cg', inner: { method: 'cg', checkLag: 16 } },
  // the most iterations between two checks (default 16 since session 9; 32 before)
  ce8: { method: 'cg', inner: { method: 'cg', checkEvery: 8 } },
  ce32: { method: 'cg', inner: { method: 'cg', checkEvery: 32 } },
  // δ = 1e-2: one more df64 replacement to 1e-8, shorter float32 segments (less drift)
  reliable2: { method: 'cg', inner: { method: 'cg', rtol: 1e-2 } },
  restart: { method: 'cg', inner: { method: 'cg', rtol: 1e-5, reliable: false } },
  default: { method: 'gmres', inner: { method: 'gmres', rtol: 1e-4, restart: 30 } },
  // the inner GMRES(30) tolerance per correction (the default variant: 1e-4, two corrections on
  // the power law; restarted GMRES slows in the second one)
  gm3: { method: 'gmres', inner: { method: 'gmres', rtol: 1e-3, restart: 30 } },
  gm5: { method: 'gmres', inner: { method: 'gmres', rtol: 1e-5, restart: 30 } },
  gm6: { method: 'gmres', inner: { method: 'gmres', rtol: 1e-6, restart: 30 } },
  cgs2: { method: 'gmres', inner: { method: 'gmres', rtol: 1e-4, restart: 30, orthogonalization: 'cgs2', checkEvery: 32 } },
  // the per-vector Gram–Schmidt passes of session 9 (the default now keeps the cycle's basis in a
  // device block: product + 4 dispatches per step for any basis size)
  noblock: { method: 'gmres', inner: { method: 'gmres', rtol: 1e-4, restart: 30, basisBlock: false } },
  gm5noblock: { method: 'gmres', inner: { method: 'gmres', rtol: 1e-5, restart: 30, basisBlock: false } },
};

const ctx = await createGpuContext();
const device = ctx.describeText().split('\n')[0];
const space = new GpuVectorSpace(ctx);
mkdirSync(dirname(out), { recursive: true });

function trueRelative(a: CsrMatrix, x: Float64Array, b: Float64Array): number {
  const ax = csrSpmv(a, x);
  let r = 0;
  let bb = 0;
  for (let i = 0; i < b.length; i++) {
    r += (b[i]! - ax[i]!) ** 2;
    bb += b[i]! ** 2;
  }
  return Math.sqrt(r / bb);
}

/**
 * Mean ms (20 each, wall clock, after a warm-up) of one df64 residual product, one df64 dot
 * (‖r‖²), both together (what a replacement records), and one float32 product.
 */
async function kernelTimes(ext: Df64Residual, op: GpuOperator, a: CsrMatrix): Promise<Record<string, number>> {
  const d = ext.d;
  const [x, b, r] = [d.fromFloat64(new Float64Array(a.cols).fill(1)), d.create(a.rows), d.create(a.rows)];
  const [xf, yf] = [space.fromArray(new Float64Array(a.cols).fill(1)), space.create(a.rows)];
  const time = async (f: () => void): Promise<number> => {
    f();
    await ctx.finish();
    const t = performance.now();
    for (let i = 0; i < 20; i++) f();
    await ctx.finish();
    return Number(((performance.now() - t) / 20).toFixed(3));
  };
  const df64ResidualOnlyMs = await time(() => ext.matrix.residual(x, b, r));
  const df64DotMs = await time(() => d.dot(r, r, 2));
  const df64ResidualMs = await time(() => {
    ext.matrix.residual(x, b, r);
    d.dot(r, r, 2);
  });
  const f32SpmvMs = await time(() => op.apply(xf, yf));
  for (const v of [x, b, r]) v.buf.dispose();
  space.release(xf);
  space.release(yf);
  return { df64ResidualMs, df64ResidualOnlyMs, df64DotMs, df64Lanes: ext.matrix.lanes, f32SpmvMs };
}

interface Row {
  matrix: string;
  method: string;
  variant: string;
  ms: number;
  iters: string;
  rel: number;
}
const table: Row[] = [];
const cupyRows: Record<string, { ms: number; rel: number; iterations: number }> = {};

async function run(name: string, a: CsrMatrix, method: 'cg' | 'gmres', cupySource?: string): Promise<void> {
  let source = cupySource;
  if (dumpDir && !source) {
    dumpCsr(dumpDir, name, a, true);
    source = join(dumpDir, `${name}.csr`);
  }
  const b = csrSpmv(a, new Float64Array(a.cols).fill(1));
  const t0 = performance.now();
  const op: GpuOperator = kernel ? gpuOperatorFromCsr(ctx, a, { kernel, params: kernelParams }) : await tunedOperator(ctx, a, { expectedProducts: 1000 });
  const ext = await op.extendedPrecision();
  const setupMs = performance.now() - t0;
  const kernelMs = ext instanceof Df64Residual ? await kernelTimes(ext, op, a) : undefined;
  const host = argv.includes('--host-too') ? HostOperator.fromCsr(a) : undefined;
  // variants in the order of --variants, warmed up first, then round-robin: the first H100
  // call ran each variant's repeats back to back and times fell with the run order (stencil
  // 218 → 147 ms over five variants, poisson7 'reliable' 358 then 250 ms), so a later variant
  // looked faster; interleaved, a drift of the clocks or of the JIT hits every variant alike
  const picked = [...variants].filter((k) => VARIANTS[k]?.method === method);
  // b on the device for --io device (made before any timer, like CuPy's b = A·1)
  const bDev = ext instanceof Df64Residual ? ext.d.fromFloat64(b) : undefined;
  const runs = picked.flatMap((variant) => [
    ...ioModes.filter((io) => io === 'host' || bDev).map((io) => ({ variant, extended: undefined, io })),
    ...(host ? [{ variant, extended: false as const, io: 'host' as const }] : []),
  ]);
  const optsOf = (r: (typeof runs)[number]) => ({ hostOperator: host, innerOperator: op, innerSpace: space, b: r.io === 'device' ? bDev! : b, extended: r.extended, inner: VARIANTS[r.variant]!.inner });
  for (const r of runs) await refinedSolve({ ...optsOf(r), rtol: 1e-8, maxOuterIterations: 1 }); // warm-up: pipelines compiled
  for (let rep = 0; rep < repeat; rep++) {
    for (const r of runs) await timedSolve(name, a, b, method, op, ext, kernelMs, setupMs, r, optsOf(r));
  }
  bDev?.buf.dispose();
  op.dispose();
  if (cupy && source) runCupy(name, source, method);
}

/** One timed refinedSolve of a variant: its JSON record, SUMMARY line and table row. */
async function timedSolve(
  name: string,
  a: CsrMatrix,
  b: Float64Array,
  method: 'cg' | 'gmres',
  op: GpuOperator,
  ext: unknown,
  kernelMs: Record<string, number> | undefined,
  setupMs: number,
  r: { variant: string; extended: false | undefined; io: 'device' | 'host' },
  opts: Parameters<typeof refinedSolve>[0],
): Promise<void> {
  const { variant, extended, io } = r;
  const d0 = ctx.recorder.dispatches;
  const t1 = performance.now();
  let res: RefinedSolveResult | RefinedSolveDeviceResult;
  let x: Float64Array;
  let ms: number;
  let dispatches: number;
  if (io === 'device') {
    const dres = await refinedSolve({ ...opts, rtol: 1e-8, output: 'device' });
    await ctx.finish(); // x complete on the device: the CuPy-comparable end point
    ms = performance.now() - t1;
    dispatches = ctx.recorder.dispatches - d0;
    x = await dres.x.read();
    dres.x.dispose();
    res = dres;
  } else {
    const hres = await refinedSolve({ ...opts, rtol: 1e-8 });
    ms = performance.now() - t1;
    dispatches = ctx.recorder.dispatches - d0;
    x = hres.x;
    res = hres;
  }
  const rec = {
    device,
    matrix: name,
    rows: a.rows,
    nnz: a.values.length,
    method: method === 'gmres' ? 'gmres(30)' : 'cg',
    variant,
    io,
    operator: op.label,
    outer: extended === false ? 'host f64' : res.outerPrecision,
    ...kernelMs,
    df64ExtraBytesPerNnz: ext instanceof Df64Residual ? Number((ext.matrix.bytes / a.values.length).toFixed(2)) : null,
    inner: VARIANTS[variant]!.inner,
    ms: Number(ms.toFixed(1)),
    setupMs: Number(setupMs.toFixed(0)),
    reason: res.reason,
    outerIterations: res.outerIterations,
    innerIterations: res.innerIterations,
    /** Iterations of each correction solve (the last one aims only at what 1e-8 needs). */
    innerSteps: res.inner.map((i) => i.iterations),
    readbacks: res.stats.readbacks,
    /** Dispatches recorded by the solve (machine-independent; the final read of x excluded). */
    dispatches,
    hostMatvecs: res.hostMatvecs,
    trueRelativeResidual: trueRelative(a, x, b),
  };
  console.log(JSON.stringify(rec));
  console.log(
    `SUMMARY ours ${name} ${rec.method} ${variant} io-${io} ${rec.ms.toFixed(1)} ms (outer ${res.outerIterations} / inner ${res.innerIterations} / readbacks ${res.stats.readbacks} / dispatches ${dispatches} / products ${res.stats.matvecs}) rel ${rec.trueRelativeResidual.toExponential(2)} ${res.reason}`,
  );
  appendFileSync(out, `${JSON.stringify(rec)}\n`);
  if (extended !== false) {
    const iters = `${res.outerIterations} / ${res.innerIterations} / ${res.stats.readbacks}`;
    table.push({ matrix: name, method: rec.method, variant: `${variant} (${io} b, x)`, ms: rec.ms, iters, rel: rec.trueRelativeResidual });
  }
}

/** CuPy float64 on the same matrix (the anchor script prints one JSON line per dtype). */
function runCupy(name: string, source: string, method: 'cg' | 'gmres'): void {
  // the path `repeat` times: one timed solve each (after the anchor's own warm-up)
  const args = [cupy!, ...Array.from({ length: Math.max(1, repeat) }, () => source), '--method', method, '--rtol', '1e-8', '--restart', '30', '--dtypes', 'float64'];
  const p = spawnSync('python3', args, { encoding: 'utf8' });
  const lines = (p.stdout ?? '').split('\n').filter((l) => l.startsWith('{'));
  if (p.status !== 0 || !lines.length) {
    console.log(`CuPy on ${name} failed (status ${p.status}): ${(p.stderr ?? '').slice(-400)}`);
    return;
  }
  for (const line of lines) {
    const r = JSON.parse(line) as { ms: number; relResidualFloat64: number; callbacks: number };
    const best = cupyRows[name];
    if (!best || r.ms < best.ms) cupyRows[name] = { ms: r.ms, rel: r.relResidualFloat64, iterations: r.callbacks };
    appendFileSync(out, `${JSON.stringify({ cupy: true, matrix: name, ...r })}\n`);
    console.log(JSON.stringify({ cupy: true, matrix: name, ...r }));
    console.log(`SUMMARY cupy-f64 ${name} ${method} ${r.ms.toFixed(1)} ms (${r.callbacks} callbacks) rel ${r.relResidualFloat64.toExponential(2)}`);
  }
}

/** The ratio table (CuPy float64 ms / ours: > 1 means ours is faster). */
function printTable(): void {
  const lines = [
    '| matrix | method | variant | ours ms (outer / inner / readbacks) | CuPy f64 ms (callbacks¹) | CuPy / ours | true rel. residual ours / CuPy |',
    '|---|---|---|---:|---:|---:|---|',
  ];
  for (const r of table) {
    const c = cupyRows[r.matrix]; // the faster of CuPy's timed solves
    const ratio = c ? (c.ms / r.ms).toFixed(2) : '—';
    const cupyCell = c ? `${c.ms.toFixed(1)} (${c.iterations})` : '—';
    const rel = `${r.rel.toExponential(1)} / ${c ? c.rel.toExponential(1) : '—'}`;
    lines.push(`| ${r.matrix} | ${r.method} | ${r.variant} | ${r.ms.toFixed(1)} (${r.iters}) | ${cupyCell} | ${ratio} | ${rel} |`);
  }
  lines.push('', '¹ CuPy calls the callback once per iteration for cg and once per restart cycle for gmres.');
  console.log(lines.join('\n'));
}

if (!only || only === 'stencil') await run(`stencil27-${grid}`, stencil27(grid), 'cg');
if (only === 'poisson7') await run(`poisson7-${grid}`, generators.poisson3d(grid), 'cg');
if (!only || only === 'powerlaw') await run(`powerlaw-${plRows}`, powerLawDominant(plRows), 'gmres');
if (!only || only === 'mtx') {
  for (const m of mtx) await run(basename(m.path).replace(/\.mtx(\.gz)?$/, ''), (await readMatrixMarket(m.path)).matrix, m.method, m.path);
}
printTable();
ctx.dispose();
