/**
 * Session 12 hardening (branch s12-harden-b): a matrix whose CSR arrays pass one storage binding,
 * end to end through the public one-call API on the GPU. poisson3d(m) from the project's own
 * generator (m = 440: 85.2 M rows, 5.95·10^8 non-zeros; its columns and its float32 values are
 * 2.38 GB each, more than NVIDIA's 2 GiB − 4 B maxStorageBufferBindingSize, so every kernel the
 * tuner may pick must split them), with A(1,1) raised from 6 to 100 so that the largest eigenvalue
 * (≈ 100) is isolated and one Lanczos call converges in a few products. Then
 *   solve(A, b = A·1, { method: 'cg', rtol: 1e-8 })   (autotuned float32 CG in float64 refinement)
 *   eigsh(A, 1, { which: 'largest' })                  (Lanczos, float64 polish)
 * and the true float64 residuals recomputed here on the host (‖b − A·x‖/‖b‖, max |x − 1|,
 * ‖A·v − λ·v‖/‖A‖∞). Each phase prints a line at once and rewrites the JSON, so a run stopped by
 * its time limit keeps what it measured.
 *
 *   node .gpukit/app/scale-s12b.mjs --out $OUT/scale-s12b.json [--m 440] [--no-eigs] [--budget-s 300]
 *   lavapipe: GPUSPARSE_MAX_BINDING_BYTES=1500000 node --import tsx bench/scale-s12b.ts --m 40
 *   (the environment variable emulates a device with that binding limit: planning and checks)
 */
import { writeFileSync, writeSync } from 'node:fs';
import { loadavg, totalmem } from 'node:os';
import { csrSpmv, generators as g } from '../packages/formats/src/index';
import { createGpuContext } from '../packages/gpu/src/index';
import { eigsh, solve } from '../packages/cli/src/index';

const argv = process.argv.slice(2);
const arg = (name: string): string | undefined => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
const out = arg('--out');
const m = Number(arg('--m') ?? 440);
/** Skip the eigen call when this many seconds have passed before it (the device run's limit is 8 minutes). */
const budgetS = Number(arg('--budget-s') ?? 300);
const t0 = performance.now();
const report: Record<string, unknown> = { bench: 'scale-s12b', m, started: new Date().toISOString(), loadavg: loadavg(), hostMemoryGB: totalmem() / 1e9 };
const secs = (): number => Math.round(performance.now() - t0) / 1000;
/** Print one phase at once (writeSync) and rewrite the JSON file. */
function phase(name: string, data: Record<string, unknown>): void {
  report[name] = { ...data, atS: secs(), rssGB: Math.round(process.memoryUsage().rss / 1e7) / 100 };
  writeSync(1, `${JSON.stringify({ phase: name, ...(report[name] as object) })}\n`);
  if (out) writeFileSync(out, `${JSON.stringify(report, null, 1)}\n`);
}
const norm = (v: ArrayLike<number>): number => {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i]! * v[i]!;
  return Math.sqrt(s);
};

const ctx = await createGpuContext();
const d = ctx.describe();
phase('device', { adapter: d.adapter, limits: ctx.limits, deviceLimits: ctx.deviceLimits, envCap: process.env.GPUSPARSE_MAX_BINDING_BYTES ?? null });
ctx.dispose();

let t = performance.now();
const a = g.poisson3d(m);
const diag0 = a.rowPtr[0]!; // row 0's first entry is its diagonal (columns sorted, 0 first)
if (a.colIdx[diag0] !== 0) throw new Error('poisson3d row 0 does not start with its diagonal');
a.values[diag0] = 100;
const nnz = a.values.length;
const bindingBytes = 4 * nnz;
phase('generate', { rows: a.rows, nnz, f32ValuesBytes: bindingBytes, colIdxBytes: bindingBytes, overBinding: bindingBytes > d.limits.maxStorageBufferBindingSize, ms: performance.now() - t });

t = performance.now();
const ones = new Float64Array(a.rows).fill(1);
const b = csrSpmv(a, ones);
phase('rhs', { ms: performance.now() - t, bNorm: norm(b) });

try {
  t = performance.now();
  const r = await solve(a, b, { method: 'cg', rtol: 1e-8, backend: 'webgpu' });
  const ms = performance.now() - t;
  t = performance.now();
  const ax = csrSpmv(a, r.x);
  let rr = 0;
  let err = 0;
  for (let i = 0; i < a.rows; i++) {
    rr += (b[i]! - ax[i]!) ** 2;
    err = Math.max(err, Math.abs(r.x[i]! - 1));
  }
  const hostRel = Math.sqrt(rr) / norm(b);
  phase('solve', { ms, converged: r.converged, reason: r.reason, iterations: r.iterations, apiRelResidual: r.relativeResidual, hostRelResidual: hostRel, maxAbsErrorVsOnes: err, operator: r.operator, backend: r.backend, stats: r.stats, checkMs: performance.now() - t, pass: r.converged && hostRel <= 1e-8 * 1.01 && Math.abs(hostRel - r.relativeResidual) <= 1e-3 * Math.max(hostRel, 1e-16) });
} catch (e) {
  phase('solve', { error: `${(e as Error).name}: ${(e as Error).message}`, ms: performance.now() - t, pass: false });
}

if (argv.includes('--no-eigs') || secs() > budgetS) phase('eigsh', { skipped: argv.includes('--no-eigs') ? '--no-eigs' : `${secs()} s spent before it, over --budget-s ${budgetS}` });
else {
  try {
    t = performance.now();
    const r = await eigsh(a, 1, { which: 'largest', backend: 'webgpu' });
    const ms = performance.now() - t;
    t = performance.now();
    const v = r.vectors[0]!;
    const lam = r.values[0]!;
    const av = csrSpmv(a, v);
    for (let i = 0; i < a.rows; i++) av[i] = av[i]! - lam * v[i]!;
    let normInf = 0;
    for (let i = 0; i < a.rows; i++) {
      let s = 0;
      for (let k = a.rowPtr[i]!; k < a.rowPtr[i + 1]!; k++) s += Math.abs(a.values[k]!);
      normInf = Math.max(normInf, s);
    }
    const res = norm(av) / norm(v);
    phase('eigsh', { ms, converged: r.converged, reason: r.reason, iterations: r.iterations, value: lam, hostResidual: res, hostResidualOverNormInf: res / normInf, normInf, operator: r.operator, stats: r.stats, checkMs: performance.now() - t, pass: r.converged && res <= 1e-8 * normInf * 1.01 && lam > 100 && lam < 100.2 });
  } catch (e) {
    phase('eigsh', { error: `${(e as Error).name}: ${(e as Error).message}`, ms: performance.now() - t, pass: false });
  }
}
phase('done', { totalS: secs() });
