/**
 * The spin step alone: ⟨S²⟩ of K vectors on the device (the direct σ's tables, one pass, one
 * readback) against the host float64 ⟨S²⟩ (`spinSquaredExpectations`, one thread: what the CI
 * driver ran before session 10), on random vectors of one FCIDUMP's space.
 *
 *   pnpm -s tsx bench/ci-spin-square.ts FCIDUMP [--irrep 1] [--ms2 n] [--roots 6] [--reps 3]
 *
 * Prints one JSON line: determinants, device ms (median over reps; the first call, with the
 * pipeline compile and the occupation upload, apart), host ms, max |Δ⟨S²⟩|.
 */
import { buildCiSpace, spinSquaredExpectations } from '../packages/chem/src/index';
import { readFcidump } from '../packages/chem/src/node';
import { gpuDirectSigmaOperator } from '../packages/chem/src/direct/gpu/index';
import { createGpuContext, GpuVectorSpace } from '../packages/gpu/src/index';

const argv = process.argv.slice(2);
const opt = (n: string) => (argv.includes(n) ? argv[argv.indexOf(n) + 1] : undefined);
const file = argv[0];
if (!file || file.startsWith('--')) {
  process.stderr.write('usage: ci-spin-square.ts FCIDUMP [--irrep I] [--ms2 n] [--roots 6] [--reps 3]\n');
  process.exit(2);
}
const roots = Number(opt('--roots') ?? 6);
const reps = Number(opt('--reps') ?? 3);
const irrep = opt('--irrep') === undefined ? undefined : Number(opt('--irrep'));
const ms2 = opt('--ms2') === undefined ? undefined : Number(opt('--ms2'));
const fd = await readFcidump(file);
const { fcidump, space } = buildCiSpace(fd, 'fci', { ...(irrep === undefined ? {} : { irrep }), ...(ms2 === undefined ? {} : { ms2 }) });
const n = space.size;
const vectors = Array.from({ length: roots }, (_, r) => Float64Array.from({ length: n }, (_, i) => Math.sin(0.37 * i + r + 1)));
const ctx = await createGpuContext();
const vs = new GpuVectorSpace(ctx);
const op = gpuDirectSigmaOperator(ctx, fcidump, space);
const xs = vectors.map((v) => vs.fromArray(v));
await ctx.finish();
let t = performance.now();
const first = await op.spinSquared(xs);
const firstMs = performance.now() - t;
const times: number[] = [];
for (let k = 0; k < reps; k++) {
  t = performance.now();
  await op.spinSquared(xs);
  times.push(performance.now() - t);
}
t = performance.now();
const host = spinSquaredExpectations(space, vectors);
const hostMs = performance.now() - t;
const maxDiff = Math.max(...host.map((h, i) => Math.abs(h - first[i]!)));
process.stdout.write(`${JSON.stringify({ file, space: space.label, determinants: n, roots, device: ctx.describeText().split('\n')[0], deviceFirstMs: firstMs, deviceMs: [...times].sort((a, b) => a - b)[times.length >> 1], hostMs, maxDiff, s2: first })}\n`);
op.dispose();
for (const x of xs) vs.release(x);
ctx.dispose();
