/**
 * Where the time of a float32 Lanczos on the device goes (issue 15, eigen target): the WebGPU
 * calls per product, the wall time per product against one bare product of the same operator,
 * and, with `timestamp-query`, the GPU time of every kernel (each dispatch in its own
 * timestamped pass, in a second run). Session 5 measured 8 ms per Lanczos step on the Hubbard
 * L = 13 Hamiltonian where the product alone takes 0.5 ms; this says which kernel or which wait
 * takes the rest.
 *
 *   node .gpukit/app/eig-profile.mjs [--hubbard 13] [--mtx FILE] [--k 4] [--tol 1e-5]
 *     [--kernel csr-adaptive --params nnzPerGroup=1024] [--no-timestamps] [--toggles "T1;T2"]
 *     [--first-batch 16,4] [--out $OUT/eig-profile.json] [--poisson3d 100x110x120] [--check on|off]
 *
 * `--first-batch` repeats the measured run with each value of the recorder's first batch after
 * a readback (Recorder.firstBatch; 16 is the default): fewer dispatches restart the GPU sooner
 * after each wait. Every measured run also splits its wall time into recording (the vector
 * space's and the operator's calls), waits (readbacks) and the solver's own host work.
 *
 * `--toggles` passes Dawn toggles (e.g. enable-dawn-features=skip_validation) to the context, to
 * measure what the host's per-dispatch validation costs.
 *
 * `--block on,off` (default both, in that order) runs every measurement with the Lanczos basis
 * block (GpuVectorSpace.lanczosBlock: six dispatches per CGS2 step for any basis size, restarts
 * in one pass over Q) and without it (the per-vector path), in the same call; the counts, the
 * kernel times and `byBlock` are per mode. The block's own calls count as recording.
 */
import { assembleHamiltonian, buildCiSpace, parseFcidump } from '../packages/chem/src/index';
import { type CsrMatrix, generators, readMatrixMarket } from '../packages/formats/src/index';
import { createGpuContext, type GpuOperator, GpuVectorSpace, gpuOperatorFromCsr, timeGpu, tunedOperator } from '../packages/gpu/src/index';
import { lanczos } from '../packages/solvers/src/index';
import { COUNTERS, diff, instrument, KernelClock, kernelRows, snapshot, type Split, timeMethods, writeRecord } from './gpu-calls';
import { hubbardFcidump } from './hubbard';

const argv = process.argv.slice(2);
const opt = (n: string) => (argv.includes(n) ? argv[argv.indexOf(n) + 1] : undefined);
const out = opt('--out') ?? 'bench/out/eig-profile.json';
const mtx = opt('--mtx');
/** `--poisson3d AxBxC`: the 7-point Laplacian of eigsMixed's H100 benchmark instead of a Hubbard Hamiltonian. */
const poisson = opt('--poisson3d')?.split('x').map(Number);
/** `--check off`: Lanczos without the multiplicity check (the fast phase's first run alone). */
const checkMultiplicity = opt('--check') !== 'off';
const sites = Number(opt('--hubbard') ?? 13);
const k = Number(opt('--k') ?? 4);
const tol = Number(opt('--tol') ?? 1e-5);
const kernel = opt('--kernel');
const kernelParams = Object.fromEntries((opt('--params') ?? '').split(',').filter(Boolean).map((kv) => [kv.split('=')[0]!, Number(kv.split('=')[1])]));
const wantTimestamps = !argv.includes('--no-timestamps');
const toggles = opt('--toggles')?.split(';').filter(Boolean) ?? [];
const firstBatches = (opt('--first-batch') ?? '16').split(',').filter(Boolean).map(Number);
// 'on-noahead': the block without Lanczos's record-ahead (host and GPU taking turns, the s8 behaviour)
const blockModes = (opt('--block') ?? 'on,off').split(',').filter((m) => m === 'on' || m === 'off' || m === 'on-noahead');
/** `--basis M`: Lanczos maxBasis (default Lanczos's own: 20 for k = 4; eigsMixed's fast phase takes 40). */
const basis = opt('--basis') ? Number(opt('--basis')) : undefined;
let recordAhead = true;

async function loadMatrix(): Promise<{ name: string; a: CsrMatrix }> {
  if (mtx) return { name: mtx.split('/').pop()!, a: (await readMatrixMarket(mtx)).matrix };
  if (poisson) return { name: `poisson3d-${poisson.join('x')}`, a: generators.poisson3d(poisson[0]!, poisson[1]!, poisson[2]!) };
  const fd = parseFcidump(hubbardFcidump(sites), { file: `hubbard-L${sites}` });
  const { fcidump, space } = buildCiSpace(fd, 'fci');
  return { name: `hubbard-L${sites}`, a: (await assembleHamiltonian(fcidump, space, { workers: 'auto' })).matrix };
}

const ctx = await createGpuContext({ toggles });
instrument(ctx);
// dispatches per kernel label (device-independent: lavapipe gives the same counts as the H100)
const byKernel = new Map<string, number>();
{
  const rec = ctx.recorder;
  const dispatch = rec.dispatch.bind(rec);
  rec.dispatch = (pipe, refs, uni, groups) => {
    byKernel.set(pipe.label, (byKernel.get(pipe.label) ?? 0) + 1);
    dispatch(pipe, refs, uni, groups);
  };
}
const { name, a } = await loadMatrix();
const space = new GpuVectorSpace(ctx);
const op: GpuOperator = kernel ? gpuOperatorFromCsr(ctx, a, { kernel, params: kernelParams }) : await tunedOperator(ctx, a, { expectedProducts: 300 });
// host time split of the measured runs: recording calls, waits, the rest (the solver's own work)
const split: Split = { recordMs: 0, waitMs: 0, calls: 0 };
timeMethods(space, split, ['lanczosBlock']);
timeMethods(op, split, ['dispose', 'extendedPrecision']);
// the basis block's calls (step, read, combineColumns) are recording and waits too
const makeBlock = space.lanczosBlock.bind(space);
const useBlock = (on: boolean) => {
  (space as unknown as { lanczosBlock?: unknown }).lanczosBlock = on
    ? (n: number, capacity: number, rows: number) => {
        const b = makeBlock(n, capacity, rows);
        if (b) timeMethods(b, split, ['dispose']);
        return b;
      }
    : undefined;
};
const run = async () => {
  const r = await lanczos(op, space, { k, tol, recordAhead, checkMultiplicity, ...(basis ? { maxBasis: basis } : {}) });
  await ctx.finish();
  r.vectors.forEach((v) => { space.release(v); });
  return r;
};
for (const mode of blockModes) {
  useBlock(mode !== 'off');
  recordAhead = mode !== 'on-noahead';
  await run(); // warm-up: pipelines and bind groups created
}

/** One mode's measured runs (one per first-batch value), its counts and its kernel times. */
async function measure(mode: string) {
  useBlock(mode !== 'off');
  recordAhead = mode !== 'on-noahead';
  const byFirstBatch: Record<string, unknown>[] = [];
  let first: { res: Awaited<ReturnType<typeof run>>; wallMs: number; c: ReturnType<typeof diff>; k0: Map<string, number> } | undefined;
  for (const fb of firstBatches) {
    ctx.recorder.firstBatch = fb;
    const c0 = snapshot();
    const k0 = new Map(byKernel);
    split.recordMs = split.waitMs = split.calls = 0;
    const t0 = performance.now();
    const r = await run();
    const ms = performance.now() - t0;
    const products = Math.max(1, r.stats.matvecs);
    byFirstBatch.push({
      firstBatch: fb,
      products,
      wallMsPerProduct: Number((ms / products).toFixed(4)),
      recordMsPerProduct: Number((split.recordMs / products).toFixed(4)),
      waitMsPerProduct: Number((split.waitMs / products).toFixed(4)),
      solverHostMsPerProduct: Number(((ms - split.recordMs - split.waitMs) / products).toFixed(4)),
    });
    first ??= { res: r, wallMs: ms, c: diff(c0, snapshot()), k0 };
  }
  ctx.recorder.firstBatch = 16;
  const { res, wallMs, c, k0 } = first!;
  const products = Math.max(1, res.stats.matvecs);
  const dispatchesPerProduct = Object.fromEntries(
    [...byKernel].map(([label, n]) => [label, Number(((n - (k0.get(label) ?? 0)) / products).toFixed(2))] as const).filter(([, v]) => v > 0).sort((x, y) => y[1] - x[1]),
  );
  const perProduct = Object.fromEntries(COUNTERS.map((key) => [key, Number((c[key] / products).toFixed(2))]));
  let kernels: ReturnType<typeof kernelRows> | undefined;
  if (wantTimestamps && ctx.caps.timestampQuery) {
    const clock = new KernelClock(ctx);
    clock.start();
    await run();
    await clock.stop();
    kernels = kernelRows(clock, products);
  }
  const gpuMs = kernels?.reduce((acc, row) => acc + row.gpuMs, 0);
  const row = {
    block: mode,
    reason: res.reason,
    products,
    readbacks: res.stats.readbacks,
    values: res.values,
    wallMs: Number(wallMs.toFixed(2)),
    wallMsPerProduct: Number((wallMs / products).toFixed(4)),
    byFirstBatch,
    counts: c,
    perProduct,
    dispatchesPerProduct,
    gpuMsAllKernels: gpuMs === undefined ? undefined : Number(gpuMs.toFixed(3)),
    kernels,
  };
  const fb0 = byFirstBatch[0] as Record<string, number>;
  console.log(`eig-profile ${name} block=${mode}: ${res.reason}, ${products} products, ${row.wallMsPerProduct} ms/product (every run: ${byFirstBatch.map((b) => b.wallMsPerProduct).join(' / ')}; record ${fb0.recordMsPerProduct}, wait ${fb0.waitMsPerProduct}, solver host ${fb0.solverHostMsPerProduct}), ${perProduct.dispatch} dispatches/product, GPU ${gpuMs === undefined ? '-' : (gpuMs / products).toFixed(3)} ms/product; ${res.values.map((v) => v.toFixed(9)).join(' ')}`);
  // the six costliest kernels, greppable (issue 15: the block's combine was 289 µs a dispatch on the H100)
  if (kernels) console.log(`eig-profile ${name} block=${mode} kernels: ${kernels.slice(0, 6).map((kr) => `${kr.label} ${kr.meanUs} µs × ${kr.perIteration}/product`).join(', ')}`);
  return row;
}

const byBlock: Record<string, unknown>[] = [];
for (const mode of blockModes) byBlock.push(await measure(mode));
useBlock(true);

const x = space.fromArray(new Float64Array(a.cols).fill(1));
const y = space.create(a.rows);
const spmv = await timeGpu(ctx, () => op.apply(x, y), { reps: 20 });
space.release(x);
space.release(y);

const rec = {
  device: ctx.describeText().split('\n')[0],
  toggles,
  matrix: name,
  rows: a.rows,
  nnz: a.rowPtr[a.rows],
  operator: op.label,
  k,
  tol,
  spmvMs: Number(spmv.medianMs.toFixed(4)),
  ...byBlock[0],
  byBlock,
};
writeRecord(out, rec);
op.dispose();
ctx.dispose();
