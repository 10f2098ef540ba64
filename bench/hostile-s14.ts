/**
 * Session 14 hardening on a real device (branch s14-harden-e):
 *   1. csr-vi and csr-vi-slice on the matrices of packages/gpu/test/hostile-s14a-vi-cases.ts (NaN,
 *      ±Inf, −0, float32 subnormals beside normal values — NVIDIA flushes them —, ±3e38, values
 *      that round to one float32, an empty table, the table at and past its capacity, 0×0, 1×1,
 *      3×0, 0×3, rectangular, rows over several windows, row blocks over 512-byte / 1 KiB
 *      bindings): each product against the float64 reference of the float32-rounded matrix;
 *   2. values float32 cannot hold (1e39 in the table, −1e39 raw, all below normals) refused at
 *      the upload and by gpuOperatorFromFormat, naming the entry;
 *   3. csrViFromCsrParallel with the host's hardware threads (16 on the H100 host), 1, 3 and 32
 *      workers (minEntries 0: the worker path), against the serial conversion array for array, on
 *      a CI-like matrix of ≈ 1.7·10^7 entries (wall times of both, one run each: not a speed claim);
 *   4. the symmetry probe on the device (float32): lanczos, lobpcg and cg on a non-symmetric A name
 *      it in `detail`; on a symmetric A stopped by maxIterations they do not;
 *   5. lanczos in float32 from v0 = ones on poisson2d (a start without weight on some eigenvectors).
 * Usage: node hostile-s14.mjs [--small] [--only REGEX] [--out FILE]
 */
import { csrFromTriplets, csrViFromCsr, csrViFromCsrParallel, type CsrViMatrix, generators } from '../packages/formats/src/index';
import { gpuOperatorFromCsr, gpuOperatorFromFormat } from '../packages/gpu/src/index';
import { cg, lanczos, lobpcg } from '../packages/solvers/src/index';
import { VI_KERNELS, VI_OUT_OF_RANGE, viCases, viProduct } from '../packages/gpu/test/hostile-s14a-vi-cases';
import { errText, hostileHarness } from './lib/hostile-faults';

const { small, ctx, space, run, finish } = await hostileHarness('hostile-s14');

// 1. products on hostile matrices
for (const kernel of VI_KERNELS) for (const c of viCases()) await run(`${kernel.id}: ${c.name}`, () => viProduct(ctx, kernel, c));

// 2. values float32 cannot hold
for (const kernel of VI_KERNELS) {
  for (const c of VI_OUT_OF_RANGE) {
    await run(`${kernel.id}: ${c.name} refused at the upload and by gpuOperatorFromFormat`, async () => {
      const m = csrViFromCsr(c.a);
      const said: string[] = [];
      for (const f of [() => kernel.upload(ctx, m), () => gpuOperatorFromFormat(ctx, kernel, m)]) {
        try {
          f().dispose();
          said.push('accepted');
        } catch (e) {
          said.push(errText(e));
        }
      }
      return { pass: said.every((s) => c.where.test(s)), detail: said[0]!.slice(0, 200) };
    });
  }
}

// 3. the parallel conversion against the serial one
const keys = ['packPtr', 'packed', 'segPtr', 'segEnd', 'segBase', 'rawPtr', 'rawCols', 'table', 'rawValues'] as const;
const same = (p: CsrViMatrix, s: CsrViMatrix) => p.valueBits === s.valueBits && keys.every((k) => p[k].length === s[k].length && p[k].every((x, i) => Object.is(x, s[k][i])));
{
  const rows = small ? 3_000 : 80_000;
  const a = generators.repeatedValues(rows, 2_400_000, small ? 60 : 300, 2_000, 0.03, 14);
  const nnz = a.rowPtr[a.rows]!;
  let t0 = performance.now();
  const s = csrViFromCsr(a);
  const serialMs = performance.now() - t0;
  for (const workers of [undefined, 1, 3, 32]) {
    await run(`csrViFromCsrParallel, ${workers ?? 'hardware'} workers, ${nnz} entries: the serial arrays bit for bit`, async () => {
      t0 = performance.now();
      // minEntries 0: the worker path whatever the size (the first H100 call's 1.29·10^7 entries fell under the
      // default 2^24 threshold, so every worker count ran the serial conversion)
      const p = await csrViFromCsrParallel(a, {}, { workers, minEntries: 0 });
      const ms = performance.now() - t0;
      return { pass: same(p, s), detail: `${ms.toFixed(0)} ms (serial ${serialMs.toFixed(0)} ms), v = ${p.valueBits}, table ${p.table.length}, raw ${p.rawCols.length}` };
    });
  }
}

// 4. the symmetry probe on the device
{
  const [ri, ci, v] = [[], [], []] as number[][];
  for (let i = 0; i < 40; i++) {
    [ri.push(i), ci.push(i), v.push(i + 1)];
    if (i + 1 < 40) [ri.push(i), ci.push(i + 1), v.push(3)];
  }
  const upper = csrFromTriplets(40, 40, ri, ci, v);
  const poisson = generators.poisson2d(small ? 12 : 512); // n = 262 144 on the device: float32 rounding against the 32·√n·u limit
  for (const [name, a, named] of [['non-symmetric 40×40 upper bidiagonal', upper, true], [`symmetric poisson2d, stopped by maxIterations`, poisson, false]] as const) {
    const op = gpuOperatorFromCsr(ctx, a, { kernel: 'csr-vector' });
    const b = () => space.fromArray(new Float64Array(a.rows).fill(1));
    const runs: [string, () => Promise<{ converged: boolean; reason: string; detail?: string }>][] = [
      ['lanczos', () => lanczos(space, op, { k: 2, maxIterations: named ? 200 : 3 })],
      ['lobpcg', () => lobpcg(space, op, { k: 2, maxIterations: named ? 200 : 2 })],
      ['cg', () => cg(space, op, b(), { maxIterations: named ? 200 : 3 })],
    ];
    for (const [method, go] of runs) {
      await run(`${method} on a ${name}: ${named ? 'the detail names A as non-symmetric' : 'no symmetry claim'}`, async () => {
        const r = await go();
        const said = /A does not look symmetric/.test(r.detail ?? '');
        return { pass: !r.converged && said === named, detail: `${r.reason}; ${(r.detail ?? '').slice(-160)}` };
      });
    }
    op.dispose();
  }
}

// 5. lanczos from v0 = ones (no weight on the modes odd about the centre): converged (was 'breakdown' on the host)
for (const [m, k] of [[5, 2], [20, 2], [20, 4]] as const) {
  await run(`lanczos float32 on the device, poisson2d ${m}², k = ${k}, v0 = ones: converged, the values of a random start`, async () => {
    const a = generators.poisson2d(m);
    const op = gpuOperatorFromCsr(ctx, a, { kernel: 'csr-vector' });
    const r = await lanczos(space, op, { k, v0: space.fromArray(new Float64Array(a.rows).fill(1)) });
    const want = await lanczos(space, op, { k });
    op.dispose();
    const diff = Math.max(...r.values.map((x, i) => Math.abs(x - want.values[i]!)));
    return { pass: r.reason === 'converged' && diff < 1e-4, detail: `${r.reason} in ${r.iterations} iterations, values ${r.values.map((x) => x.toFixed(6)).join(', ')}, max difference ${diff.toExponential(1)}${r.detail ? `; ${r.detail.slice(0, 120)}` : ''}` };
  });
}

await finish();
