/**
 * What a few tiny entries cost refinedSolve (session 12, harden-a item 2). Session 11 declined
 * the df64 device residual for any matrix with a df64 lo part below float32's normal range, so
 * poisson2d with 3 symmetric pairs of 1.2345678901e-33 refined with its outer residual on the
 * host in float64 (x read back, a host SpMV and an upload per outer step). Session 12 keeps the df64
 * residual when the flushed parts stay below df64's own rounding (df64/flush.ts). Both are run
 * here in the same process, interleaved: 'df64' (the default now) against 'host' (extended:
 * false, what this matrix got before), plus the matrix without the tiny entries ('df64, plain').
 * Reported: median and min ms of `reps` solves each, outer steps, host products, the true float64
 * relative residual, and the load average.
 * Usage: node df64-few-tiny.mjs [--n 1024] [--reps 5] [--out FILE]
 */
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { csrSpmv, generators, HostOperator } from '../packages/formats/src/index';
import { createGpuContext, gpuOperatorFromCsr, GpuVectorSpace } from '../packages/gpu/src/index';
import { refinedSolve } from '../packages/solvers/src/index';
import { withTinyPairs } from '../packages/gpu/test/support/faults';
import { hostResidual } from './lib/hostile-faults';

const argv = process.argv.slice(2);
const arg = (k: string, d: number) => (argv.includes(k) ? Number(argv[argv.indexOf(k) + 1]) : d);
const m = arg('--n', 256);
const reps = arg('--reps', 5);
const out = argv.includes('--out') ? argv[argv.indexOf('--out') + 1] : undefined;

const a0 = generators.poisson2d(m);
const ctx = await createGpuContext();
const device = ctx.describeText().split('\n')[0];
const space = new GpuVectorSpace(ctx);
const tiny = withTinyPairs(a0, 3);
const x = Float64Array.from({ length: a0.rows }, (_, i) => 1 + Math.sin(i));
const runs = [
  { name: 'df64 (few tiny; session 12 default)', a: tiny, extended: undefined },
  { name: 'host (few tiny; session 11, extended: false)', a: tiny, extended: false as const },
  { name: 'df64, plain (no tiny entries)', a: a0, extended: undefined },
].map((r) => ({ ...r, op: gpuOperatorFromCsr(ctx, r.a), host: HostOperator.fromCsr(r.a), b: csrSpmv(r.a, x), ms: [] as number[], last: undefined as undefined | Record<string, unknown> }));
const load0 = loadavg()[0]!;
for (let rep = -1; rep < reps; rep++) {
  for (const r of runs) {
    const t0 = performance.now();
    const res = await refinedSolve({ hostOperator: r.host, innerOperator: r.op, innerSpace: space, b: r.b, rtol: 1e-10, inner: { method: 'cg', rtol: 1e-4 }, ...(r.extended === false ? { extended: false } : {}) });
    const ms = performance.now() - t0;
    if (rep < 0) continue; // warm-up: compiles, the df64 matrix's first build
    r.ms.push(ms);
    r.last = { reason: res.reason, outer: res.outerIterations, inner: res.innerIterations, hostMatvecs: res.hostMatvecs, precision: res.outerPrecision, trueRel: hostResidual(r.a, res.x as Float64Array, r.b).rel };
  }
}
const med = (v: number[]) => [...v].sort((p, q) => p - q)[Math.floor(v.length / 2)]!;
const rows = runs.map((r) => ({ name: r.name, medianMs: med(r.ms), minMs: Math.min(...r.ms), ms: r.ms, ...r.last }));
const base = rows[1]!.medianMs;
for (const r of rows) console.log(`${r.name}: median ${r.medianMs.toFixed(1)} ms (min ${r.minMs.toFixed(1)}), ${(base / r.medianMs).toFixed(2)}× the host-residual run; ${JSON.stringify({ ...r, ms: undefined, name: undefined })}`);
const result = { bench: 'df64-few-tiny', device, n: a0.rows, nnz: a0.rowPtr[a0.rows], reps, load: [load0, loadavg()[0]], rows };
console.log(`df64-few-tiny on ${device}: n = ${a0.rows}, load ${load0.toFixed(1)} → ${loadavg()[0]!.toFixed(1)}`);
if (out) writeFileSync(out, `${JSON.stringify(result, null, 1)}\n`);
for (const r of runs) r.op.dispose();
ctx.dispose();
process.exit(0);
