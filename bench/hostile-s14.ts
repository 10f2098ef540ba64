/**
 * Session 14 hardening on a real device (branch s14-harden-e):
 *   1. csr-vi and csr-vi-slice on the matrices of packages/gpu/test/hostile-s14a-vi-cases.ts (NaN,
 *      ±Inf, −0, float32 subnormals beside normal values — NVIDIA flushes them —, ±3e38, values
 *      that round to one float32, an empty table, the table at and past its capacity, 0×0, 1×1,
 *      3×0, 0×3, rectangular, rows over several windows, row blocks over 512-byte / 1 KiB
 *      bindings): each product against the float64 reference of the float32-rounded matrix;
 *   2. values float32 cannot hold (1e39 in the table, −1e39 raw, all below normals) refused at
 *      the upload and by gpuOperatorFromFormat, naming the entry;
 *   3. csrViFromCsrParallel with the host's hardware threads (16 on the H100 host), 1 worker and
 *      more workers than rows, against the serial conversion array for array, on a CI-like matrix
 *      past the 2^24-entry threshold (wall times of both, one run each: not a speed claim).
 * Usage: node hostile-s14.mjs [--small] [--only REGEX] [--out FILE]
 */
import { csrViFromCsr, csrViFromCsrParallel, type CsrViMatrix, generators } from '../packages/formats/src/index';
import { gpuOperatorFromFormat } from '../packages/gpu/src/index';
import { VI_KERNELS, VI_OUT_OF_RANGE, viCases, viProduct } from '../packages/gpu/test/hostile-s14a-vi-cases';
import { errText, hostileHarness } from './lib/hostile-faults';

const { small, ctx, run, finish } = await hostileHarness('hostile-s14');

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
  const rows = small ? 3_000 : 60_000;
  const a = generators.repeatedValues(rows, 2_400_000, small ? 60 : 300, 2_000, 0.03, 14);
  const nnz = a.rowPtr[a.rows]!;
  let t0 = performance.now();
  const s = csrViFromCsr(a);
  const serialMs = performance.now() - t0;
  for (const workers of [undefined, 1, 3, 32]) {
    await run(`csrViFromCsrParallel, ${workers ?? 'hardware'} workers, ${nnz} entries: the serial arrays bit for bit`, async () => {
      t0 = performance.now();
      const p = await csrViFromCsrParallel(a, {}, { workers, minEntries: small ? 0 : undefined });
      const ms = performance.now() - t0;
      return { pass: same(p, s), detail: `${ms.toFixed(0)} ms (serial ${serialMs.toFixed(0)} ms), v = ${p.valueBits}, table ${p.table.length}, raw ${p.rawCols.length}` };
    });
  }
}

await finish();
