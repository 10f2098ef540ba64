/**
 * What the session-13 near-breakdown watch adds to a BiCGStab iteration, measured in one run:
 * BiCGStab's time per iteration on poisson2d m² (b = A·1, rtol 1e-6) against the time of the work
 * the watch adds per iteration — ⟨t, s⟩ and ⟨s, s⟩ by one multiDot in place of the dot ⟨t, s⟩, two
 * divisions and a product of device scalars, the queued alias read at the check — recorded
 * iterations times and finished once, minus the same loop with the dot alone.
 * Medians of `reps` interleaved repetitions. Usage: node bicgstab-near-cost.mjs [--m 512] [--reps 5]
 * [--cpu] [--out FILE]
 */
import { writeFileSync } from 'node:fs';
import { generators, HostOperator, HostVectorSpace, type LinearOperator, type VectorSpace } from '../packages/formats/src/index';
import { createGpuContext, GpuVectorSpace, gpuOperatorFromCsr } from '../packages/gpu/src/index';
import { bicgstab } from '../packages/solvers/src/index';

const argv = process.argv.slice(2);
const opt = (name: string, d: number) => (argv.includes(name) ? Number(argv[argv.indexOf(name) + 1]) : d);
const m = opt('--m', 512);
const reps = opt('--reps', 5);
const cpu = argv.includes('--cpu');
const out = argv.includes('--out') ? argv[argv.indexOf('--out') + 1] : undefined;
const a = generators.poisson2d(m);
const n = a.rows;
const ctx = cpu ? undefined : await createGpuContext();
const space: VectorSpace<unknown, unknown> = (cpu ? new HostVectorSpace() : new GpuVectorSpace(ctx!)) as never;
const op: LinearOperator<unknown> = (cpu ? HostOperator.fromCsr(a) : gpuOperatorFromCsr(ctx!, a)) as never;
const rhs = new Float64Array(n);
HostOperator.fromCsr(a).apply(new Float64Array(n).fill(1), rhs);
const finish = async () => ctx?.finish();
const med = (v: number[]) => [...v].sort((x, y) => x - y)[v.length >> 1]!;

const perIteration: number[] = [];
const added: number[] = [];
let iterations = 0;
for (let rep = 0; rep < reps + 1; rep++) {
  const b = space.fromArray(rhs);
  await finish();
  const t0 = performance.now();
  const r = await bicgstab(space, op, b, { rtol: 1e-6 });
  await finish();
  const solve = performance.now() - t0;
  iterations = r.iterations;
  space.release(r.x);
  space.release(b);
  // the watch's work, once per iteration: multiDot([t, s], s) in place of dot(t, s), (ts/tt)·(ts/ss), its alias
  const [s, t] = [space.fromArray(rhs), space.fromArray(rhs.map((x, i) => x + (i % 3)))];
  const tt = space.dot(t, t);
  const timed = async (withWatch: boolean) => {
    await finish();
    const t1 = performance.now();
    const pending: unknown[] = [];
    for (let i = 0; i < iterations; i++) {
      if (!withWatch) {
        pending.push(space.dot(t, s));
        continue;
      }
      const [ts, ss] = space.multiDot([t, s], s);
      const q1 = space.div(ts!, tt);
      const q2 = space.div(ts!, ss!);
      const c2 = space.mul(q1, q2);
      pending.push(ts, space.mul(c2, 1));
      for (const x of [ss, q1, q2, c2]) space.release(x as never);
    }
    await space.readMany(pending as never);
    const ms = performance.now() - t1;
    for (const x of pending) space.release(x as never);
    return ms;
  };
  const watch = (await timed(true)) - (await timed(false));
  for (const x of [tt, s, t]) space.release(x as never);
  if (rep > 0) {
    perIteration.push(solve / iterations);
    added.push(watch / iterations);
  }
}
const result = { bench: 'bicgstab-near-cost', device: ctx ? ctx.describeText().split('\n')[0] : 'host float64', m, n, iterations, reps, msPerIteration: med(perIteration), watchMsPerIteration: med(added), share: med(added) / med(perIteration) };
console.log(`bicgstab poisson2d ${m}² (n = ${n}) on ${result.device}: ${iterations} iterations, ${result.msPerIteration.toFixed(4)} ms per iteration; the near-breakdown watch's work ${result.watchMsPerIteration.toFixed(4)} ms per iteration (${(100 * result.share).toFixed(1)} %), medians of ${reps}`);
if (out) writeFileSync(out, `${JSON.stringify(result, null, 1)}\n`);
ctx?.dispose();
process.exit(0);
