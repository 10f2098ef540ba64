/**
 * The cache path of a tuning run: a remembered choice is verified with one product on this
 * matrix (no timing) before it is used, and a new decision is remembered.
 * @module
 */
import type { CsrMatrix } from '@gpusparse/formats';
import type { GpuContext } from '../device/context';
import type { SharedCsrUpload } from '../kernels/csr/csr-device';
import { type AnySpmvKernel, supportsCsr, type UploadOptions } from '../kernels/types';
import type { CacheEntry, TuneStore } from './cache';
import type { Candidate } from './candidates';
import { ConversionCache, type TuneVectors } from './conversions';
import type { Trial, TuningReport } from './report';
import type { Held } from './types';
import { verifyProduct } from './verify';

/** Remember the accepted trial under the report's key (no store: nothing). */
export function remember(store: TuneStore | undefined, report: TuningReport, win: Trial): void {
  if (!store) return;
  const entry: CacheEntry = { kernel: win.kernel, params: win.params, productMs: win.ms!, conversionMs: win.conversionMs ?? 0, uploadMs: win.uploadMs ?? 0, method: report.method === 'timestamp' ? 'timestamp' : 'wall', date: new Date().toISOString() };
  store.set(report.key, entry);
}

/**
 * Drop the entry under the report's key (the in-solve winner went wrong after the decision and
 * the verified kernel was not timed). A store without `delete` keeps it: said in the report.
 */
export function forget(store: TuneStore | undefined, report: TuningReport): void {
  if (!store) return;
  if (store.delete) store.delete(report.key);
  else report.warnings.push(`in-solve tuning: the cache ${store.where} has no delete(): its entry for this matrix still names the dropped kernel (a later tuning verifies it with one product)`);
}

/** Verify a cached choice with one product (no timing); records it as the only trial. */
export async function verifyCached(ctx: GpuContext, a: CsrMatrix, hit: CacheEntry, ks: readonly AnySpmvKernel[], v: TuneVectors, shared: SharedCsrUpload, held: Held, report: TuningReport): Promise<boolean> {
  const k = ks.find((d) => d.id === hit.kernel)!;
  const c: Candidate = { kernel: k, params: { ...k.defaults, ...hit.params }, conversionKey: 'cached', estimatedBytes: 0, predicted: 0, work: 0, prepBytes: 0, slots: 0, factor: 1 };
  const t: Trial = { kernel: k.id, params: c.params, status: 'cached', reason: 'cache hit (not timed)', predicted: 0, estimatedBytes: 0, ms: hit.productMs, conversionMs: hit.conversionMs, uploadMs: hit.uploadMs };
  report.trials.push(t);
  report.source = 'cache';
  const conv = new ConversionCache(a, 0, { ctx, shared });
  try {
    const pre = supportsCsr(k, a, ctx.limits, c.params);
    if (pre !== true) throw new Error(`unsupported: ${pre}`);
    const { m } = await conv.get(c);
    const ok = k.supports(m, ctx.limits, c.params);
    if (ok !== true) throw new Error(`unsupported: ${ok}`);
    const handle = k.upload(ctx, m, c.params, csrUploadOptions(k, shared));
    const t0 = performance.now();
    const res = await verifyProduct(ctx, a, c, m, handle, v);
    report.costs.verifyMs += performance.now() - t0;
    Object.assign(t, { verified: res.ok, maxErrOverBound: res.maxErrOverBound, verifiedRows: res.rows });
    if (res.ok && held.keep) held.handle = handle;
    else handle.dispose();
    if (res.ok) report.winner = { kernel: k.id, params: c.params, ms: hit.productMs, gflops: (2 * report.nnz) / (hit.productMs * 1e6) };
    else Object.assign(t, { status: 'error', error: `cached choice failed verification: error/bound ${res.maxErrOverBound.toExponential(2)} at row ${res.row}` });
    return res.ok;
  } catch (e) {
    if (ctx.isLost) throw e;
    Object.assign(t, { status: 'error', error: `cached choice failed: ${(e as Error).message}` });
    return false;
  } finally {
    conv.clear(); // a device-built layout stays with the handle
  }
}

/** Upload options of kernel `k`: the shared CSR arrays for a CSR kernel. */
export function csrUploadOptions(k: AnySpmvKernel, shared: SharedCsrUpload): UploadOptions | undefined {
  return k.format === 'csr' ? { sharedCsr: shared } : undefined;
}
