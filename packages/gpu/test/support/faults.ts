/**
 * Fault-injection fixtures shared by the hostile tests of in-solve tuning and by
 * bench/hostile-s9.ts / hostile-s10.ts: an in-solve tuned operator, its decision forced onto
 * candidate 1, and that candidate's products made wrong after the switch. They reach into
 * InSolveOperator's private fields on purpose — the fault must sit exactly where a real kernel
 * would fail. No vitest import: the benches use this file too; the tests keep their own
 * `expect`s on what these return.
 */
import type { CsrMatrix } from '@gpusparse/formats';
import { type GpuContext, type GpuOperator, GpuVectorSpace, InSolveOperator, type TuneStore, type TunedOperatorOptions, type TuningReport, tunedOperator } from '../../src/index';

/** A tuned operator whose tuning runs inside the solve. */
export type Tuned = InSolveOperator & { readonly tuning: TuningReport };

/** The private fields of InSolveOperator a fault test reaches. */
export interface InSolveInternals {
  total: number;
  candidates: unknown[];
  others: GpuOperator[];
  decide(t: BigUint64Array, w: Uint32Array | undefined): void;
}

/** `op` seen through its private fields. */
export const internals = (op: GpuOperator): InSolveInternals => op as unknown as InSolveInternals;

/** Tuning options of the fault tests: every candidate timed, a budget that never cuts, nothing printed. */
export function faultTuning(candidates: readonly string[], cache: TuneStore | false = false): TunedOperatorOptions {
  return { warn: () => {}, cache, candidates, maxTimed: candidates.length, budgetMs: 1e6, expectedProducts: 1e4 };
}

/** In-solve tuning of `a` over `candidates` (the result is an InSolveOperator when it worked: the caller checks). */
export function tunedInSolve(ctx: GpuContext, a: CsrMatrix, candidates: readonly string[], cache: TuneStore | false = false): Promise<GpuOperator & { readonly tuning: TuningReport }> {
  return tunedOperator(ctx, a, { ...faultTuning(candidates, cache), inSolve: true });
}

/** Timestamps (ns) of `total` tuning products, `ms(k)` each (only the durations count in the decision). */
export function stamps(total: number, ms: (k: number) => number): BigUint64Array {
  const t = new BigUint64Array(2 * total);
  for (let k = 0; k < total; k++) {
    t[2 * k] = 1_000_000_000n * BigInt(k + 1);
    t[2 * k + 1] = t[2 * k]! + BigInt(Math.round(ms(k) * 1e6));
  }
  return t;
}

/** Makes the in-solve decision see candidate 1 as the fastest (its products 1 ms, the others' 2 ms). */
export function preferCandidate1(op: Tuned): void {
  const inner = internals(op);
  const n = inner.candidates.length;
  const decide = inner.decide.bind(op);
  inner.decide = (_t, w) => decide(stamps(inner.total, (k) => (k % n === 1 ? 1 : 2)), w);
}

/**
 * Candidate 1's products × `factor` (or × factor(k) for the k-th wrong one) from the `after`-th
 * product after the switch to it on. Returns the candidate and a count of its wrong products.
 */
export function wrongAfterSwitch(op: Tuned, factor: number | ((k: number) => number), after: number): { cand: GpuOperator; wrong: () => number } {
  const cand = internals(op).others[0]!;
  const orig = cand.applyScaled.bind(cand);
  let afterSwitch = 0;
  let wrongProducts = 0;
  cand.applyScaled = (alpha, x, beta, y) => {
    const switched = op.activeLabel === cand.label;
    if (switched && ++afterSwitch >= after) {
      wrongProducts++;
      orig(alpha * (typeof factor === 'number' ? factor : factor(wrongProducts)), x, beta, y);
    } else orig(alpha, x, beta, y);
  };
  return { cand, wrong: () => wrongProducts };
}

/** Runs the `total` tuning products (on x = 1; they are checked against the verified kernel) and waits for the decision. */
export async function runTuningProducts(op: Tuned): Promise<void> {
  const space = new GpuVectorSpace(op.ctx);
  const x = space.fromArray(new Float64Array(op.cols).fill(1));
  const y = space.create(op.rows);
  for (let k = 0; k < internals(op).total; k++) op.apply(x, y);
  await op.decided;
  space.release(x);
  space.release(y);
}

/**
 * An in-solve operator on `a` whose tuning (real, checked tuning products) chose candidate 1,
 * whose products are then × `factor` from the `after`-th product after the switch on (factor 1:
 * a chosen kernel that stays right). Throws when the tuning gave no InSolveOperator.
 */
export async function switchedThenWrong(ctx: GpuContext, a: CsrMatrix, candidates: readonly string[], factor: number | ((k: number) => number), after: number): Promise<{ op: Tuned; cand: GpuOperator; wrong: () => number }> {
  const op = (await tunedInSolve(ctx, a, candidates)) as Tuned;
  if (!(op instanceof InSolveOperator)) throw new Error(`expected an InSolveOperator, got ${(op as GpuOperator).label}`);
  preferCandidate1(op);
  const { cand, wrong } = wrongAfterSwitch(op, factor, after);
  await runTuningProducts(op);
  return { op, cand, wrong };
}

/**
 * Make the next createBuffer whose label matches `label` report out-of-memory from its error scope
 * (WebGPU reports it asynchronously: the buffer exists, only the scope says it failed). Used by the
 * session-11 out-of-memory-at-the-call test and bench/hostile-s11.ts.
 */
export function injectOom(ctx: GpuContext, label: RegExp): { fired: () => boolean } {
  const dev = ctx.device;
  const createBuffer = dev.createBuffer.bind(dev);
  const pop = dev.popErrorScope.bind(dev);
  let pops = -1;
  let fired = false;
  dev.createBuffer = (d: GPUBufferDescriptor) => {
    if (!fired && pops < 0 && label.test(d.label ?? '')) pops = 0;
    return createBuffer(d);
  };
  dev.popErrorScope = () => {
    const p = pop();
    if (pops < 0 || ++pops !== 2) return p;
    pops = -1;
    fired = true;
    // the allocation's 'out-of-memory' scope is popped second (ctx.scoped pushes it first)
    return p.then(() => ({ message: `Out of memory (injected): ${label.source}` }) as GPUError);
  };
  return { fired: () => fired };
}

/** WGSL: x, or 0 where x is a float32 subnormal (exponent bits 0), as NVIDIA's flush-to-zero does. */
const FTZ_WGSL = `fn df_ftz(x: f32) -> f32 { if ((bitcast<u32>(x) & 0x7f800000u) == 0u) { return 0.0; } return x; }
fn df_ftz2(v: vec2<f32>) -> vec2<f32> { return vec2<f32>(df_ftz(v.x), df_ftz(v.y)); }`;

/**
 * The df64 WGSL `code` as a device that flushes float32 subnormals runs it: every pinned
 * intermediate (`df_pin`, through which every df64 operation's result passes) and every argument
 * of a df64 function (A's lo parts, x's lo parts as loaded) is flushed to 0 below 2^-126.
 */
export function flushSubnormalsWgsl(code: string): string {
  const pinned = code.replace(/fn df_pin\(x: f32\) -> f32 \{ return (.*?); \}/, 'fn df_pin(x: f32) -> f32 { return df_ftz($1); }');
  const args = pinned.replace(/fn (df_(?!pin|ftz)\w+)\(([^)]*)\) -> ([^{]+)\{/g, (_m, name: string, params: string, ret: string) => {
    const ps = params.split(',').map((p) => p.trim()).filter(Boolean).map((p) => p.split(':').map((t) => t.trim()) as [string, string]);
    const renamed = ps.map(([n, t]) => `${n}_raw: ${t}`).join(', ');
    const lets = ps.map(([n, t]) => (t === 'f32' ? `let ${n} = df_ftz(${n}_raw);` : t === 'vec2<f32>' ? `let ${n} = df_ftz2(${n}_raw);` : `let ${n} = ${n}_raw;`)).join(' ');
    return `fn ${name}(${renamed}) -> ${ret}{ ${lets}`;
  });
  if (args === code || !args.includes('df_ftz(')) return code; // no df64 function in this kernel
  return `${FTZ_WGSL}\n${args}`;
}

/**
 * From now on, every df64 pipeline `ctx` compiles flushes float32 subnormals
 * ({@link flushSubnormalsWgsl}): lavapipe keeps subnormals, NVIDIA flushes them, and the df64
 * lo parts of a matrix like A·1e-30 (≈ 1e-38) are subnormals. Install before the context's first
 * df64 use (Df64Blas.of runs its self-test under the flush too). Returns how many df64 kernels were
 * compiled flushed.
 */
export function simulateSubnormalFlush(ctx: GpuContext): { flushed: () => number } {
  const pipes = ctx.pipelines;
  const get = pipes.get.bind(pipes);
  const prewarm = pipes.prewarm.bind(pipes);
  let flushed = 0;
  const wrap = <T extends { key: string; wgsl: () => string }>(spec: T): T => {
    if (!spec.key.startsWith('df64:')) return spec;
    return {
      ...spec,
      key: `${spec.key}:ftz`,
      wgsl: () => {
        const code = flushSubnormalsWgsl(spec.wgsl());
        if (code.includes('fn df_ftz(')) flushed++;
        return code;
      },
    };
  };
  pipes.get = (spec) => get(wrap(spec));
  pipes.prewarm = (specs) => prewarm(specs.map(wrap));
  return { flushed: () => flushed };
}

/**
 * `a` with `count` symmetric off-diagonal pairs (rows spread over the matrix) set to `value`
 * (default −1.2345678901e-33: its df64 lo part is a float32 subnormal, which NVIDIA flushes).
 * The matrix of session 12's "a few tiny entries" cases (tests and bench/df64-few-tiny.ts).
 */
export function withTinyPairs(a: CsrMatrix, count: number, value = -1.2345678901e-33): CsrMatrix {
  const v = Float64Array.from(a.values);
  for (let t = 0; t < count; t++) {
    const i = Math.floor(((t + 0.5) * a.rows) / count);
    const k = Array.from({ length: a.rowPtr[i + 1]! - a.rowPtr[i]! }, (_, q) => a.rowPtr[i]! + q).find((q) => a.colIdx[q]! > i);
    if (k === undefined) continue;
    const j = a.colIdx[k]!;
    v[k] = value;
    for (let q = a.rowPtr[j]!; q < a.rowPtr[j + 1]!; q++) if (a.colIdx[q] === i) v[q] = value;
  }
  return { ...a, values: v };
}
