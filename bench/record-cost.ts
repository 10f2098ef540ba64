/**
 * Host cost of recording GPU work (issue 15): microseconds of JavaScript + Dawn time per recorded
 * dispatch in the real solver steps — refined CG, refined GMRES(30), device Lanczos — separated
 * from the GPU's execution and from the waits for readbacks. On the H100 a Lanczos step's wall
 * time was 2.5× its GPU time: when the host records slower than the GPU runs, the GPU idles and
 * drops to a low clock. Device-independent enough to measure on lavapipe (small problems: the
 * GPU work is small, and only the host's recording calls are timed).
 *
 * What is timed: every synchronous call into the vector space and the operator (the recording:
 * our kernels' argument set-up, the recorder, Dawn's encoding and submits) at nesting depth 0;
 * every call that returns a promise (readbacks, finish) until it resolves ("wait"); the rest of
 * the wall time is the solver's own host logic. Counts per dispatch: bind groups created,
 * pipeline-cache lookups, queue writes, submits. Plus the floors, in process CPU time with no
 * GPU work running meanwhile (on lavapipe the "GPU" is CPU threads that compete with the
 * recording, so the solver cases' wall figures there mostly measure that contention): `floor`
 * records combine dispatches through the space (ours) against the same pipeline with one
 * prebuilt bind group (Dawn's setPipeline / setBindGroup / dispatch only), `floor-cg-step` and
 * `floor-lanczos-step-14` whole solver steps.
 *
 *   node .gpukit/app/record-cost.mjs [--cases cg,gmres,lanczos,floor] [--grid 64] [--rows 8192]
 *     [--hubbard 8] [--reps 3] [--out $OUT/record-cost.json] [--prof-dir $OUT/prof]
 *
 * `--prof-dir` writes a V8 CPU profile (`<case>.cpuprofile`, 50 µs sampling) of each case's
 * measured repetitions, without the warm-up's compiles.
 *
 * Prints one JSON line per case (also appended to --out).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Session } from 'node:inspector/promises';
import { csrSpmv, generators } from '../packages/formats/src/index';
import { assembleHamiltonian, buildCiSpace, parseFcidump } from '../packages/chem/src/index';
import { createGpuContext, type GpuContext, type GpuOperator, GpuVectorSpace, gpuOperatorFromCsr } from '../packages/gpu/src/index';
import { lanczos, refinedSolve } from '../packages/solvers/src/index';
import { powerLawDominant } from './df64-matrices';
import { type Split, timeMethods, writeRecord } from './gpu-calls';
import { hubbardFcidump } from './hubbard';

const argv = process.argv.slice(2);
const opt = (n: string) => (argv.includes(n) ? argv[argv.indexOf(n) + 1] : undefined);
const out = opt('--out') ?? 'bench/out/record-cost.json';
const cases = new Set((opt('--cases') ?? 'floor,cg,gmres,lanczos').split(','));
const grid = Number(opt('--grid') ?? 64);
const plRows = Number(opt('--rows') ?? 8192);
const sites = Number(opt('--hubbard') ?? 8);
const reps = Number(opt('--reps') ?? 3);
/** Directory for one V8 CPU profile per case, of its measured repetitions only (not the warm-up). */
const profDir = opt('--prof-dir');

/** Bind groups created per kernel label (reset by each measured repetition). */
const bindGroupsByKernel = new Map<string, number>();

/** Counters of the calls that cost host time per dispatch. */
function counters(ctx: GpuContext): () => Record<string, number> {
  const c = { bindGroups: 0, pipelineLookups: 0, writeBuffer: 0, submits: 0 };
  const d = ctx.device as unknown as Record<string, (...a: unknown[]) => unknown>;
  const cbg = d.createBindGroup!.bind(d);
  d.createBindGroup = (...a: unknown[]) => {
    c.bindGroups++;
    const label = (a[0] as { label?: string }).label ?? '?';
    bindGroupsByKernel.set(label, (bindGroupsByKernel.get(label) ?? 0) + 1);
    return cbg(...a);
  };
  const q = ctx.device.queue as unknown as Record<string, (...a: unknown[]) => unknown>;
  const wb = q.writeBuffer!.bind(q);
  q.writeBuffer = (...a: unknown[]) => {
    c.writeBuffer++;
    return wb(...a);
  };
  const sub = q.submit!.bind(q);
  q.submit = (...a: unknown[]) => {
    c.submits++;
    return sub(...a);
  };
  const pl = ctx.pipelines as unknown as Record<string, (...a: unknown[]) => unknown>;
  const get = pl.get!.bind(pl);
  pl.get = (...a: unknown[]) => {
    c.pipelineLookups++;
    return get(...a);
  };
  return () => ({ ...c, dispatches: ctx.recorder.dispatches });
}

const ctx = await createGpuContext();
const count = counters(ctx);
const device = ctx.describeText().split('\n')[0];
const split: Split = { recordMs: 0, waitMs: 0, calls: 0 };
const space = new GpuVectorSpace(ctx);
timeMethods(space, split);

/** Measure `body` (after one warm-up call) and write the record of case `name`. */
async function measure(name: string, extra: Record<string, unknown>, body: () => Promise<Record<string, unknown>>): Promise<void> {
  const w0 = count();
  const warm = await body(); // warm-up: pipelines and bind groups
  await ctx.finish();
  const w1 = count();
  const warmup = { bindGroupsCreated: w1.bindGroups! - w0.bindGroups!, dispatches: w1.dispatches! - w0.dispatches!, ...warm };
  const rows: { wallMs: number; recordMs: number; waitMs: number; c: Record<string, number>; info: Record<string, unknown> }[] = [];
  const prof = profDir ? new Session() : undefined;
  if (prof) {
    prof.connect();
    await prof.post('Profiler.enable');
    await prof.post('Profiler.setSamplingInterval', { interval: 50 });
    await prof.post('Profiler.start');
  }
  for (let r = 0; r < reps; r++) {
    const c0 = count();
    bindGroupsByKernel.clear();
    split.recordMs = split.waitMs = split.calls = 0;
    const t0 = performance.now();
    const info = await body();
    await ctx.finish();
    const wallMs = performance.now() - t0;
    const c1 = count();
    const created = Object.fromEntries([...bindGroupsByKernel].sort((x, y) => y[1] - x[1]));
    rows.push({ wallMs, recordMs: split.recordMs, waitMs: split.waitMs, c: Object.fromEntries(Object.keys(c1).map((k) => [k, c1[k]! - c0[k]!])), info: { ...info, bindGroupsByKernel: created } });
  }
  if (prof) {
    const { profile } = await prof.post('Profiler.stop');
    mkdirSync(profDir!, { recursive: true });
    writeFileSync(join(profDir!, `${name}.cpuprofile`), JSON.stringify(profile));
    prof.disconnect();
  }
  // the median rep by recording time
  rows.sort((a, b) => a.recordMs / a.c.dispatches! - b.recordMs / b.c.dispatches!);
  const m = rows[Math.floor(rows.length / 2)]!;
  const n = Math.max(1, m.c.dispatches!);
  const per = (x: number) => Number((x / n).toFixed(3));
  writeRecord(out, {
    case: name,
    device,
    ...extra,
    ...m.info,
    warmup,
    dispatches: m.c.dispatches,
    usPerDispatch: Number(((1000 * m.recordMs) / n).toFixed(2)),
    usPerDispatchAllReps: rows.map((r) => Number(((1000 * r.recordMs) / Math.max(1, r.c.dispatches!)).toFixed(2))),
    wallMs: Number(m.wallMs.toFixed(2)),
    recordMs: Number(m.recordMs.toFixed(2)),
    waitMs: Number(m.waitMs.toFixed(2)),
    solverHostMs: Number((m.wallMs - m.recordMs - m.waitMs).toFixed(2)),
    perDispatch: { bindGroups: per(m.c.bindGroups!), pipelineLookups: per(m.c.pipelineLookups!), writeBuffer: per(m.c.writeBuffer!), submits: per(m.c.submits!) },
  });
}

/** The operator with apply() timed as recording (a product is one or a few dispatches). */
function timedOp(op: GpuOperator): GpuOperator {
  timeMethods(op, split, ['dispose', 'extendedPrecision']);
  return op;
}

if (cases.has('floor')) await floors();

/**
 * The two floors, interleaved round by round (the machine's load moves between rounds): our whole
 * path (space.combine of 8 vectors, one dispatch each) against Dawn's calls alone for the same
 * pipeline and one prebuilt bind group, both submitting every 96 dispatches. Min and median of
 * the rounds; the difference of the minima is our JavaScript per dispatch.
 */
async function floors(): Promise<void> {
  const n = 4096;
  const xs = Array.from({ length: 8 }, () => space.create(n));
  const y = space.create(n);
  const coeffs = xs.map((_, i) => 1 / (i + 1));
  const loops = 1000;
  const rec = ctx.recorder;
  const dispatch = rec.dispatch;
  let seen: { pipe: GPUComputePipeline; bg: GPUBindGroup } | undefined;
  rec.dispatch = (pipe, refs, uni, groupCount) => {
    const arena = (rec as unknown as { arena: { buffer: GPUBuffer; id: number } }).arena;
    seen = { pipe: pipe.pipeline, bg: ctx.pipelines.bindGroup(pipe, arena.buffer, arena.id, refs) };
    dispatch.call(rec, pipe, refs, uni, groupCount);
  };
  space.combine(coeffs, xs, 0.5, y);
  rec.dispatch = dispatch;
  await ctx.finish();
  if (!seen) throw new Error('floor-dawn: expected one dispatch');
  const { pipe, bg } = seen;
  // CPU time of the process (robust to the machine's load, unlike the wall clock); no GPU work
  // runs while recording (no submit until the end: one batch of `loops` ≤ 1024 dispatches)
  const cpu = cpuMs;
  const rounds: Record<string, number[]> = { oursRecord: [], oursSubmit: [], dawnRecord: [], dawnSubmit: [] };
  const autoFlush = rec.autoFlush;
  rec.autoFlush = 0;
  for (let r = 0; r <= Math.max(3, 2 * reps); r++) {
    let t0 = cpu();
    for (let i = 0; i < loops; i++) space.combine(coeffs, xs, 0.5, y);
    let t1 = cpu();
    rec.flush();
    let t2 = cpu();
    await ctx.finish();
    const [or, os] = [t1 - t0, t2 - t1];
    t0 = cpu();
    const enc = ctx.device.createCommandEncoder();
    const pass = enc.beginComputePass();
    for (let i = 0; i < loops; i++) {
      pass.setPipeline(pipe);
      pass.setBindGroup(0, bg, [0]);
      pass.dispatchWorkgroups(16);
    }
    pass.end();
    t1 = cpu();
    ctx.device.queue.submit([enc.finish()]);
    t2 = cpu();
    await ctx.finish();
    if (r === 0) continue; // warm-up round
    rounds.oursRecord!.push((1000 * or) / loops);
    rounds.oursSubmit!.push((1000 * os) / loops);
    rounds.dawnRecord!.push((1000 * (t1 - t0)) / loops);
    rounds.dawnSubmit!.push((1000 * (t2 - t1)) / loops);
  }
  rec.autoFlush = autoFlush;
  const stat = (v: number[]) => {
    const s = [...v].sort((x, z) => x - z);
    return { min: Number(s[0]!.toFixed(2)), median: Number(s[Math.floor(s.length / 2)]!.toFixed(2)) };
  };
  const st = Object.fromEntries(Object.entries(rounds).map(([k, v]) => [k, stat(v)]));
  writeRecord(out, {
    case: 'floor',
    device,
    what: 'process CPU µs per dispatch: space.combine of 8 vectors (ours) vs setPipeline + setBindGroup + dispatchWorkgroups alone (dawn); record = the calls, submit = finish + submit of the 1000-dispatch batch',
    rounds: rounds.oursRecord!.length,
    ...st,
    oursMinusDawnRecordMedian: Number((st.oursRecord!.median - st.dawnRecord!.median).toFixed(2)),
  });
  for (const v of [...xs, y]) space.release(v);
  await stepFloors();
}

/** Process CPU milliseconds (user + system). */
function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/**
 * The recording of whole solver steps with no GPU work running meanwhile (one submit per round
 * of at most ~1000 dispatches, after the timed part): process CPU µs per dispatch, min and
 * median of the rounds. A CG step (product + cgStep: 4 dispatches) and a Lanczos step on a
 * 14-vector basis (product, multiDot, combineDots, combineNormalize: the fused CGS2 step).
 */
async function stepFloors(): Promise<void> {
  const a = generators.poisson2d(64);
  const op = gpuOperatorFromCsr(ctx, a, { kernel: 'csr-vector', params: { lanes: 4 } });
  const vec = () => space.fromArray(new Float32Array(a.rows).fill(1));
  const [p, q, x, r, w] = [vec(), vec(), vec(), vec(), vec()];
  const basis = Array.from({ length: 14 }, vec);
  const rho = space.dot(r, r);
  const steps: Record<string, () => void> = {
    'cg-step': () => {
      op.apply(p, q);
      const { pq, rr } = space.cgStep(rho, p, q, x, r);
      space.release(pq);
      space.release(rr);
    },
    'lanczos-step-14': () => {
      op.apply(basis[13]!, w);
      const next = space.createUninitialized(a.rows);
      const h1 = space.multiDot(basis, w);
      const h2 = space.combineDots(h1, basis, -1, w);
      const hn = space.combineNormalize(h2, basis, -1, w, next, 1);
      for (const s of [...h1, ...h2, hn]) space.release(s);
      space.release(next);
    },
  };
  const rec = ctx.recorder;
  const autoFlush = rec.autoFlush;
  rec.autoFlush = 0;
  for (const [name, step] of Object.entries(steps)) {
    const us: number[] = [];
    for (let round = 0; round <= Math.max(3, 2 * reps); round++) {
      const d0 = rec.dispatches;
      const t0 = cpuMs();
      while (rec.dispatches - d0 < 900) step();
      const ms = cpuMs() - t0;
      const n = rec.dispatches - d0;
      rec.flush();
      await ctx.finish();
      if (round > 0) us.push((1000 * ms) / n);
    }
    us.sort((u, v) => u - v);
    writeRecord(out, { case: `floor-${name}`, device, what: 'process CPU µs per dispatch of recording whole steps, no GPU work meanwhile', rounds: us.length, min: Number(us[0]!.toFixed(2)), median: Number(us[Math.floor(us.length / 2)]!.toFixed(2)) });
  }
  rec.autoFlush = autoFlush;
  space.release(rho);
  for (const v of [p, q, x, r, w, ...basis]) space.release(v);
  op.dispose();
}

if (cases.has('cg') || cases.has('gmres')) {
  for (const method of ['cg', 'gmres'] as const) {
    if (!cases.has(method)) continue;
    const a = method === 'cg' ? generators.poisson2d(grid) : powerLawDominant(plRows);
    const b = csrSpmv(a, new Float64Array(a.cols).fill(1));
    const op = timedOp(gpuOperatorFromCsr(ctx, a, { kernel: 'csr-vector', params: { lanes: 4 } }));
    const inner = method === 'cg' ? { method: 'cg' as const } : { method: 'gmres' as const, rtol: 1e-4, restart: 30 };
    await measure(method === 'cg' ? 'refined-cg' : 'refined-gmres30', { matrix: method === 'cg' ? `poisson2d ${grid}²` : `powerlaw ${plRows}`, rows: a.rows, nnz: a.values.length }, async () => {
      const res = await refinedSolve({ innerOperator: op, innerSpace: space, b, rtol: 1e-8, inner });
      return { innerIterations: res.innerIterations, outerIterations: res.outerIterations, readbacks: res.stats.readbacks, reason: res.reason };
    });
    op.dispose();
  }
}

if (cases.has('lanczos')) {
  const fd = parseFcidump(hubbardFcidump(sites), { file: `hubbard-L${sites}` });
  const { fcidump, space: ci } = buildCiSpace(fd, 'fci');
  const a = (await assembleHamiltonian(fcidump, ci, { workers: 'auto' })).matrix;
  const op = timedOp(gpuOperatorFromCsr(ctx, a, { kernel: 'csr-vector', params: { lanes: 2 } }));
  await measure('lanczos', { matrix: `hubbard-L${sites}`, rows: a.rows, nnz: a.values.length }, async () => {
    const res = await lanczos(op, space, { k: 4, tol: 1e-5 });
    for (const v of res.vectors) space.release(v);
    return { products: res.stats.matvecs, readbacks: res.stats.readbacks, reason: res.reason };
  });
  op.dispose();
}
ctx.dispose();
