/**
 * The library call behind `gpusparse spgemm`: C = A·B for CSR operands through diagonal storage
 * on the device. The format (HM or CDM) is chosen from the operands' diagonal structure
 * ({@link chooseSpgemmFormat}) unless given; A and B are converted on the host and uploaded
 * (float32), the product is planned and run ({@link planSpgemm}), and C comes back as CSR (the
 * non-zero slots of C's diagonals) and in the diagonal format. Each phase is timed.
 * @module
 */
import {
  type CdmMatrix,
  cdmAllocate,
  cdmFromCsr,
  cdmToCsr,
  chooseSpgemmFormat,
  type CsrMatrix,
  type HmMatrix,
  hmAllocate,
  hmFromCsr,
  hmToCsr,
  InvalidParameterError,
} from '@gpusparse/formats';
import type { GpuContext } from '../device/context';
import { nonZeroMask } from './common';
import { type DeviceDiagonalMatrix, readDiagonal, uploadDiagonal } from './device-diagonal';
import { planSpgemm, type SpgemmPlanOptions } from './plan';
import { spgemmScaling, timesPow2, unscaleValues } from './range';

/** `m` with every value times 2^e (exact for normal numbers); `m` itself when e = 0. */
function scaledCsr(m: CsrMatrix, e: number): CsrMatrix {
  return e === 0 ? m : { ...m, values: Float64Array.from(m.values, (v) => timesPow2(v, e)) };
}

/** Options of {@link spgemmCsr}. */
export interface SpgemmCsrOptions extends SpgemmPlanOptions {
  /** 'auto' (default) picks CDM for narrow square bands, HM otherwise. */
  readonly format?: 'auto' | 'hm' | 'cdm';
}

/** Result of {@link spgemmCsr}: C in CSR and in its diagonal format, and the phase times. */
export interface SpgemmCsrResult {
  readonly format: 'hm' | 'cdm';
  /** C's non-zero entries (float32 values widened); a slot that summed to exactly 0 is dropped. */
  readonly c: CsrMatrix;
  readonly diagonal: HmMatrix | CdmMatrix;
  readonly stats: {
    readonly convertMs: number;
    readonly uploadMs: number;
    readonly planMs: number;
    readonly executeMs: number;
    readonly readMs: number;
    readonly diagonalsA: number;
    readonly diagonalsB: number;
    readonly diagonalsC: number;
    readonly pairs: number;
    readonly multiplyAdds: number;
    readonly buffersC: number;
    readonly dispatches: number;
  };
}

/**
 * Read a device diagonal matrix back into a host HM or CDM matrix (present = non-zero).
 * O(slots) host work.
 * @example const h = await downloadDiagonal(ctx, plan.c) as HmMatrix;
 */
export async function downloadDiagonal(ctx: GpuContext, m: DeviceDiagonalMatrix): Promise<HmMatrix | CdmMatrix> {
  const parts = await readDiagonal(ctx, m);
  const host = m.format === 'hm' ? hmAllocate(m.rows, m.cols, m.offsets) : cdmAllocate(m.rows, m.offsets);
  for (let d = 0; d < m.offsets.length; d++) {
    const at = m.format === 'hm' ? (host as HmMatrix).starts[d]! : d * m.rows;
    host.values.set(parts[m.chunk[d]!]!.subarray(m.start[d]!, m.start[d]! + m.lengths[d]!), at);
  }
  return { ...host, ...nonZeroMask(host.values) };
}

/**
 * C = A·B on the device through HM or CDM storage, A and B scaled by powers of two into
 * float32's range when they are not in it (./range.ts). Throws DimensionMismatchError (inner
 * dimensions), InvalidMatrixError (a non-finite value; operands whose products float32 cannot
 * hold even scaled: dynamic range beyond 2^126), InvalidParameterError (bad format; an operand with more than maxDiagonals,
 * default 4096, occupied diagonals; too many C diagonals), InvalidMatrixError (CDM asked for a
 * non-square operand), ResourceLimitError (a diagonal longer than one binding, device memory).
 * Cost: O(nnz) host conversion and upload, O(dgA·dgB) planning, the kernel, O(slots of C) readback.
 * @example const { c, format } = await spgemmCsr(ctx, a, b); // c ≈ A·B
 */
export async function spgemmCsr(ctx: GpuContext, a: CsrMatrix, b: CsrMatrix, opts: SpgemmCsrOptions = {}): Promise<SpgemmCsrResult> {
  const want = opts.format ?? 'auto';
  if (!['auto', 'hm', 'cdm'].includes(want)) throw new InvalidParameterError('format', "one of 'auto', 'hm', 'cdm'", want);
  // auto picks the format; a forced one still refuses operands past maxDiagonals (default 4096)
  const chosen = chooseSpgemmFormat(a, b, opts.maxDiagonals);
  const format = want === 'auto' ? chosen : want;
  const limit = { maxDiagonals: Math.max(a.rows + a.cols, b.rows + b.cols) };
  let t = performance.now();
  // float32 on the device: operands scaled by powers of two (exact), C scaled back below
  const scaling = spgemmScaling(a, b);
  if (scaling.refusal) throw scaling.refusal;
  const [sa, sb] = [scaledCsr(a, scaling.expA), scaledCsr(b, scaling.expB)];
  const ha = format === 'hm' ? hmFromCsr(sa, limit) : cdmFromCsr(sa, limit);
  const hb = format === 'hm' ? hmFromCsr(sb, limit) : cdmFromCsr(sb, limit);
  const convertMs = performance.now() - t;
  t = performance.now();
  const da = uploadDiagonal(ctx, ha, opts);
  const db = uploadDiagonal(ctx, hb, opts);
  await ctx.finish();
  const uploadMs = performance.now() - t;
  try {
    t = performance.now();
    const plan = planSpgemm(ctx, da, db, opts);
    const planMs = performance.now() - t;
    try {
      t = performance.now();
      plan.execute(da, db);
      await ctx.finish();
      const executeMs = performance.now() - t;
      t = performance.now();
      const diagonal = await downloadDiagonal(ctx, plan.c);
      unscaleValues(diagonal.values, -(scaling.expA + scaling.expB));
      const c = diagonal.format === 'hm' ? hmToCsr(diagonal) : cdmToCsr(diagonal);
      const readMs = performance.now() - t;
      const s = plan.symbolic;
      const stats = { convertMs, uploadMs, planMs, executeMs, readMs, diagonalsA: da.offsets.length, diagonalsB: db.offsets.length, diagonalsC: s.offsets.length, pairs: s.pairA.length, multiplyAdds: s.multiplyAdds, buffersC: plan.c.buffers.length, dispatches: plan.dispatches };
      return { format, c, diagonal, stats };
    } finally {
      plan.dispose();
    }
  } finally {
    da.dispose();
    db.dispose();
  }
}
