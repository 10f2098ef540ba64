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
 * Where the recording's µs go (session 9): every WebGPU call the recording makes (pass
 * setPipeline / setBindGroup / dispatchWorkgroups / end, beginComputePass, encoder finish and
 * copies, queue submit / writeBuffer, error-scope push / pop, createCommandEncoder) is timed, so
 * each record splits `usPerDispatch` into `dawnUsPerDispatch` (inside Dawn, by call in
 * `dawnUsByCall`) and `oursUsPerDispatch` (our JavaScript: argument set-up, checks, caches);
 * `nativeCallsPerDispatch` counts those calls and `minorGcPer1kDispatches` the young-generation
 * collections (a machine-independent proxy for per-dispatch allocation). The timing wrappers
 * cost ~0.1 µs per call (two performance.now()).
 * The step floors (`floor-*`) also give these, and include the GMRES(30) Arnoldi step at
 * j = 29 (`floor-arnoldi-step-29`) and the Lanczos block's CGS2 step (`floor-lanczos-block-step-14`).
 *
 * Prints one JSON line per case (also appended to --out).
 */
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Session } from 'node:inspector/promises';
import { constants as perfConstants, PerformanceObserver } from 'node:perf_hooks';
import { csrSpmv, generators } from '../packages/formats/src/index';
import { assembleHamiltonian, buildCiSpace, parseFcidump } from '../packages/chem/src/index';
import { createGpuContext, type GpuContext, type GpuOperator, GpuVectorSpace, gpuOperatorFromCsr } from '../packages/gpu/src/index';
import { lanczos, refinedSolve } from '../packages/solvers/src/index';
import { powerLawDominant } from './df64-matrices';
import { type Split, timeMethods } from './gpu-calls';
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

/** The figures printed on a case's one summary line (the whole record goes to --out). */
const SUMMARY = ['usPerDispatch', 'min', 'median', 'oursRecord', 'dawnRecord', 'wallUsPerDispatch', 'dawnUsPerDispatch', 'webgpuUsPerDispatchAllCalls', 'oursUsPerDispatch', 'submitUsMedian', 'nativeCallsPerDispatch', 'heapBytesPerDispatch', 'minorGcPer1kDispatches', 'dispatches', 'wallMs', 'recordMs', 'waitMs', 'solverHostMs'];

/** Append `rec` to --out and print one summary line. */
function emit(rec: Record<string, unknown>): void {
  mkdirSync(dirname(out), { recursive: true });
  appendFileSync(out, `${JSON.stringify(rec)}\n`);
  const parts = SUMMARY.filter((k) => rec[k] !== undefined).map((k) => `${k} ${typeof rec[k] === 'object' ? JSON.stringify(rec[k]) : rec[k]}`);
  console.log(`record-cost ${rec.case}: ${parts.join(', ')}`);
}

/** Milliseconds and calls inside WebGPU, in total and by call ({@link timeDawn}). */
const dawn = { ms: 0, calls: 0, byCall: new Map<string, { ms: number; calls: number }>() };

/** Wrap `obj[name]` so that its time and calls add to {@link dawn} under `label`; `after` sees the result. */
function timeCall(obj: object, name: string, label = name, after?: (res: unknown) => void): void {
  const o = obj as Record<string, (...a: unknown[]) => unknown>;
  const f = o[name];
  if (typeof f !== 'function') return;
  let entry = dawn.byCall.get(label);
  if (!entry) dawn.byCall.set(label, (entry = { ms: 0, calls: 0 }));
  const e = entry;
  o[name] = function (this: unknown, ...a: unknown[]) {
    const t0 = performance.now();
    const res = f.apply(this, a);
    const dt = performance.now() - t0;
    e.ms += dt;
    e.calls++;
    dawn.ms += dt;
    dawn.calls++;
    after?.(res);
    return res;
  };
}

/** Time every WebGPU call that recording makes (encoders and passes created from now on). */
function timeDawn(c: GpuContext): void {
  const d = c.device;
  timeCall(d.queue, 'submit', 'queue.submit');
  timeCall(d.queue, 'writeBuffer', 'queue.writeBuffer');
  timeCall(d, 'pushErrorScope');
  timeCall(d, 'popErrorScope');
  timeCall(d, 'createBindGroup');
  timeCall(d, 'createCommandEncoder', 'createCommandEncoder', (enc) => {
    timeCall(enc as object, 'finish', 'encoder.finish');
    timeCall(enc as object, 'copyBufferToBuffer');
    timeCall(enc as object, 'beginComputePass', 'beginComputePass', (pass) => {
      for (const m of ['setPipeline', 'setBindGroup', 'dispatchWorkgroups', 'end']) timeCall(pass as object, m, m === 'end' ? 'pass.end' : m);
    });
  });
}

/** Young- and old-generation collections so far. */
const gcs = { minor: 0, major: 0 };
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    const kind = (e as unknown as { detail?: { kind?: number } }).detail?.kind;
    if (kind === perfConstants.NODE_PERFORMANCE_GC_MINOR) gcs.minor++;
    else gcs.major++;
  }
}).observe({ entryTypes: ['gc'] });

/** The Dawn and GC counters now (to difference around a measured region). */
function dawnSnap(): { ms: number; calls: number; by: Map<string, { ms: number; calls: number }>; minor: number; major: number } {
  return { ms: dawn.ms, calls: dawn.calls, by: new Map([...dawn.byCall].map(([k, v]) => [k, { ...v }])), minor: gcs.minor, major: gcs.major };
}

/** The split of a region of `dispatches` dispatches that took `totalMs` of recording: µs inside Dawn (by call), ours, calls and GCs. */
function dawnSplit(a: ReturnType<typeof dawnSnap>, b: ReturnType<typeof dawnSnap>, dispatches: number, totalMs: number): Record<string, unknown> {
  const n = Math.max(1, dispatches);
  const r2 = (x: number) => Number(x.toFixed(2));
  const byCall: Record<string, number> = {};
  const callsPer: Record<string, number> = {};
  for (const [k, v] of b.by) {
    const u = a.by.get(k) ?? { ms: 0, calls: 0 };
    if (v.calls === u.calls) continue;
    byCall[k] = r2((1000 * (v.ms - u.ms)) / n);
    callsPer[k] = Number(((v.calls - u.calls) / n).toFixed(3));
  }
  return {
    dawnUsPerDispatch: r2((1000 * (b.ms - a.ms)) / n),
    oursUsPerDispatch: r2((1000 * (totalMs - (b.ms - a.ms))) / n),
    nativeCallsPerDispatch: Number(((b.calls - a.calls) / n).toFixed(3)),
    dawnUsByCall: byCall,
    callsPerDispatch: callsPer,
    minorGcPer1kDispatches: Number(((1000 * (b.minor - a.minor)) / n).toFixed(2)),
  };
}

/**
 * A solve's split over all its WebGPU calls: the readbacks' submits and waits are not part of the
 * recording, so "ours" (recording − Dawn) has no meaning there; Dawn's µs are renamed.
 */
function allCalls(split: Record<string, unknown>): Record<string, unknown> {
  const { dawnUsPerDispatch, oursUsPerDispatch: _ours, dawnUsByCall, ...rest } = split;
  return { webgpuUsPerDispatchAllCalls: dawnUsPerDispatch, webgpuUsByCallAllCalls: dawnUsByCall, ...rest };
}

const ctx = await createGpuContext();
const count = counters(ctx);
/** `--no-dawn-split`: no timing wrappers (their argument arrays would count in heapBytesPerDispatch). */
if (!argv.includes('--no-dawn-split')) timeDawn(ctx);
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
  const rows: { wallMs: number; recordMs: number; waitMs: number; c: Record<string, number>; info: Record<string, unknown>; d0: ReturnType<typeof dawnSnap>; d1: ReturnType<typeof dawnSnap> }[] = [];
  const prof = profDir ? new Session() : undefined;
  if (prof) {
    prof.connect();
    await prof.post('Profiler.enable');
    await prof.post('Profiler.setSamplingInterval', { interval: 50 });
    await prof.post('Profiler.start');
  }
  for (let r = 0; r < reps; r++) {
    const c0 = count();
    const d0 = dawnSnap();
    bindGroupsByKernel.clear();
    split.recordMs = split.waitMs = split.calls = 0;
    const t0 = performance.now();
    const info = await body();
    await ctx.finish();
    const wallMs = performance.now() - t0;
    const c1 = count();
    const d1 = dawnSnap();
    const created = Object.fromEntries([...bindGroupsByKernel].sort((x, y) => y[1] - x[1]));
    rows.push({ wallMs, recordMs: split.recordMs, waitMs: split.waitMs, c: Object.fromEntries(Object.keys(c1).map((k) => [k, c1[k]! - c0[k]!])), info: { ...info, bindGroupsByKernel: created }, d0, d1 });
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
  emit({
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
    // every WebGPU call of the solve, also those of the readbacks and waits (not only the recording's)
    ...allCalls(dawnSplit(m.d0, m.d1, n, m.recordMs)),
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
  emit({
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

/**
 * JavaScript heap bytes allocated per dispatch by `step`: the heap's growth over windows of 20
 * steps without a collection (the median of up to 15 such windows; null when every window saw
 * one). Machine-independent; run with `--no-dawn-split` (the timing wrappers allocate too).
 */
async function heapPerDispatch(step: () => void): Promise<number | null> {
  const rec = ctx.recorder;
  const per: number[] = [];
  for (let w = 0; w < 30 && per.length < 15; w++) {
    rec.flush();
    await ctx.finish();
    await new Promise((res) => setTimeout(res, 1));
    const g0 = gcs.minor + gcs.major;
    const d0 = rec.dispatches;
    const h0 = process.memoryUsage().heapUsed;
    for (let i = 0; i < 20; i++) step();
    const bytes = process.memoryUsage().heapUsed - h0;
    const n = rec.dispatches - d0;
    rec.flush();
    await ctx.finish();
    await new Promise((res) => setTimeout(res, 1));
    if (gcs.minor + gcs.major === g0 && n > 0) per.push(bytes / n);
  }
  per.sort((u, v) => u - v);
  return per.length > 0 ? Math.round(per[Math.floor(per.length / 2)]!) : null;
}

/** Process CPU milliseconds (user + system). */
function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/**
 * The recording of whole solver steps with no GPU work running meanwhile (one submit per round
 * of at most ~1000 dispatches, after the timed part): process CPU µs per dispatch, min and
 * median of the rounds, split into Dawn's calls and ours (median round), and the submit of the
 * round's batch per dispatch (`submitUs`: Dawn's finish + submit, where it translates the
 * recorded dispatches for the driver). Steps: CG (product + cgStep: 4 dispatches; cg-iteration:
 * product + cgIteration, 4), a Lanczos step on a 14-vector basis (product, multiDot, combineDots,
 * combineNormalize: the fused CGS2 step, per vector), the GMRES(30) Arnoldi step at j = 29 (the
 * same calls on 29 vectors), and the Lanczos block's CGS2 step on 14 columns (its basis stays
 * put: no column copy).
 */
async function stepFloors(): Promise<void> {
  const a = generators.poisson2d(64);
  const op = gpuOperatorFromCsr(ctx, a, { kernel: 'csr-vector', params: { lanes: 4 } });
  const vec = () => space.fromArray(new Float32Array(a.rows).fill(1));
  const [p, q, x, r, w] = [vec(), vec(), vec(), vec(), vec()];
  const basis = Array.from({ length: 29 }, vec);
  const rho = space.dot(r, r);
  const block = space.lanczosBlock(a.rows, 16, 64);
  const blockNext = vec();
  let row = 0;
  /** One CGS2 step on the first k vectors (Lanczos / Arnoldi, per vector). */
  const cgs2 = (k: number) => {
    const vs = basis.slice(0, k);
    op.apply(vs[k - 1]!, w);
    const next = space.createUninitialized(a.rows);
    const h1 = space.multiDot(vs, w);
    const h2 = space.combineDots(h1, vs, -1, w);
    const hn = space.combineNormalize(h2, vs, -1, w, next, 1);
    for (const s of h1) space.release(s);
    for (const s of h2) space.release(s);
    space.release(hn);
    space.release(next);
  };
  const steps: Record<string, () => void> = {
    'cg-step': () => {
      op.apply(p, q);
      const { pq, rr } = space.cgStep(rho, p, q, x, r);
      space.release(pq);
      space.release(rr);
    },
    'cg-iteration': () => {
      op.apply(p, q);
      const { pq, rr } = space.cgIteration(rho, p, q, x, r);
      space.release(pq);
      space.release(rr);
    },
    'lanczos-step-14': () => cgs2(14),
    'arnoldi-step-29': () => cgs2(29),
  };
  if (block) {
    steps['lanczos-block-step-14'] = () => {
      op.apply(basis[13]!, w);
      block.step(basis.slice(0, 14), w, blockNext, row);
      row = (row + 1) % 64;
    };
  }
  const rec = ctx.recorder;
  const autoFlush = rec.autoFlush;
  rec.autoFlush = 0;
  for (const [name, step] of Object.entries(steps)) {
    const rounds: { us: number; wallUs: number; submitUs: number; split: Record<string, unknown> }[] = [];
    for (let round = 0; round <= Math.max(3, 2 * reps); round++) {
      rec.flush();
      await ctx.finish();
      const d0 = rec.dispatches;
      const s0 = dawnSnap();
      const t0 = cpuMs();
      const w0 = performance.now();
      while (rec.dispatches - d0 < 900) step();
      const wallMs = performance.now() - w0;
      const ms = cpuMs() - t0;
      const s1 = dawnSnap();
      const n = rec.dispatches - d0;
      const t1 = cpuMs();
      rec.flush();
      const submitMs = cpuMs() - t1;
      await ctx.finish();
      await new Promise((res) => setTimeout(res, 1)); // the GC entries arrive asynchronously
      s1.minor = gcs.minor;
      s1.major = gcs.major;
      if (round > 0) rounds.push({ us: (1000 * ms) / n, wallUs: (1000 * wallMs) / n, submitUs: (1000 * submitMs) / n, split: dawnSplit(s0, s1, n, wallMs) });
    }
    const alloc = await heapPerDispatch(step);
    const cpu = rounds.map((o) => o.us).sort((u, v) => u - v);
    const subs = rounds.map((o) => o.submitUs).sort((u, v) => u - v);
    // the split (wall clock, like the wrappers' timers) of the round least disturbed by the machine's load
    const best = [...rounds].sort((u, v) => u.wallUs - v.wallUs)[0]!;
    emit({
      case: `floor-${name}`,
      device,
      what: 'process CPU µs per dispatch of recording whole steps (min, median of the rounds), no GPU work meanwhile; wall µs and its split into Dawn calls and ours in the fastest round',
      rounds: rounds.length,
      min: Number(cpu[0]!.toFixed(2)),
      median: Number(cpu[Math.floor(cpu.length / 2)]!.toFixed(2)),
      submitUsMedian: Number(subs[Math.floor(subs.length / 2)]!.toFixed(2)),
      heapBytesPerDispatch: alloc,
      wallUsPerDispatch: Number(best.wallUs.toFixed(2)),
      ...best.split,
    });
  }
  rec.autoFlush = autoFlush;
  block?.dispose();
  space.release(rho);
  for (const v of [p, q, x, r, w, blockNext, ...basis]) space.release(v);
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
