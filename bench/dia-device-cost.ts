/**
 * DIA conversion on the host against the device build (issue 16; `bench/convert-cost.ts
 * --device`). Per matrix, wall times with the queue drained (ms; `min` of --reps, `cold` the
 * first, pipelines compiled in it):
 *
 * - host: `diaFromCsr(a, { valueType: 'f32' })` (`hostConvMs`), the dia-tiled upload of it
 *   (`hostUploadMs`), and `diagonalPrecheck` (`precheckMs`: the host pass the tuner's
 *   `supportsCsr` still makes before any DIA conversion);
 * - device: the CSR arrays uploaded once (`csrUploadMs`: the tuner pays it anyway), the build
 *   with the offsets found on the device (`buildMs`: mark, compact, readback, index, scatter)
 *   and with the offsets given (`buildGivenOffsetsMs`: the tuner's path, the offsets from its
 *   device statistics), the dia-tiled handle on the build (`handleMs`: tables only);
 * - `gpuOperatorFromCsr(a, dia-tiled)` now (`operatorMs`: CSR upload + host offsets pass +
 *   device build) against the host path it replaced (hostConvMs + hostUploadMs);
 * - `productBitsEqual`: y = A·x of the host and the device upload, bit for bit.
 * @module
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { type CsrMatrix, csrNnz, diaFromCsr, generators } from '@gpusparse/formats';
import { createGpuContext, type GpuContext, gpuOperatorFromCsr, readF32, tuneVector, uploadCsrArrays, uploadF32 } from '@gpusparse/gpu';
import { deviceDiaFromCsr } from '../packages/gpu/src/kernels/dia/dia-build';
import { diaTiledKernel } from '../packages/gpu/src/kernels/dia/dia-tiled.kernel';
import { diagonalPrecheck } from '../packages/gpu/src/kernels/dia/diagonal-device';
import { bindingCapElems, type EllDeviceMatrix } from '../packages/gpu/src/kernels/ell/ell-device';
import { stencil27 } from './validation-set';

/** The matrices: issue 16's three at full size, or the lavapipe sizes (`quick`). */
export function diaDeviceSet(quick: boolean): [string, () => CsrMatrix][] {
  if (quick) {
    return [
      ...[40, 50, 60].map((n): [string, () => CsrMatrix] => [`stencil27-${n}^3`, () => stencil27(n)]),
      ['stencil7-60^3', () => generators.poisson3d(60)],
      ['banded-200000-b9', () => generators.banded(2e5, 4, 4, { seed: 1 })],
    ];
  }
  return [
    ['stencil27-120^3', () => stencil27(120)],
    ['stencil7-160^3', () => generators.poisson3d(160)],
    ['banded-2000000-b9', () => generators.banded(2e6, 4, 4, { seed: 1 })],
  ];
}

/** Wall ms of `f` with the queue drained after it; `cold` the first of `reps`, `min` the least. */
async function timed<T>(ctx: GpuContext, reps: number, f: () => T | Promise<T>, drop: (v: T) => void): Promise<{ cold: number; min: number }> {
  const ms: number[] = [];
  for (let r = 0; r < reps; r++) {
    await ctx.finish();
    const t0 = performance.now();
    const v = await f();
    await ctx.finish();
    ms.push(performance.now() - t0);
    drop(v);
    await ctx.finish();
  }
  return { cold: ms[0]!, min: Math.min(...ms) };
}

/** y = A·x of a dia-tiled handle, as float32 bit patterns. */
async function productBits(ctx: GpuContext, h: EllDeviceMatrix, x: Float64Array, rows: number): Promise<Uint32Array> {
  const dx = uploadF32(ctx, x);
  const dy = ctx.buffers.acquire(Math.max(1, rows) * 4);
  diaTiledKernel.encode(ctx, h as never, dx, dy);
  const y = await readF32(ctx, dy, rows);
  dx.dispose();
  dy.dispose();
  return new Uint32Array(Float32Array.from(y).buffer);
}

/** Host side of one matrix: conversion, upload, precheck; returns the host handle for the comparison. */
async function hostSide(ctx: GpuContext, a: CsrMatrix, reps: number): Promise<{ row: Record<string, unknown>; handle: EllDeviceMatrix }> {
  const t0 = performance.now();
  diagonalPrecheck(a, 1024, 'dia');
  const precheckMs = performance.now() - t0;
  const conv = await timed(ctx, reps, () => diaFromCsr(a, { valueType: 'f32', maxDiagonals: 2 ** 28 }), () => {});
  const host = diaFromCsr(a, { valueType: 'f32', maxDiagonals: 2 ** 28 });
  const up = await timed(ctx, reps, () => diaTiledKernel.upload(ctx, host), (h) => h.dispose());
  const handle = diaTiledKernel.upload(ctx, host) as EllDeviceMatrix;
  return { row: { hostConvMs: conv, hostUploadMs: up, precheckMs, diagonals: host.offsets.length, slots: host.data.length }, handle };
}

/** Device side of one matrix: CSR upload, builds (offsets found / given), handle; returns a device handle. */
async function deviceSide(ctx: GpuContext, a: CsrMatrix, reps: number): Promise<{ row: Record<string, unknown>; handle: EllDeviceMatrix; offsets: Int32Array }> {
  const t0 = performance.now();
  const shared = uploadCsrArrays(ctx, a, 'bench');
  await ctx.finish();
  const csrUploadMs = performance.now() - t0;
  const cap = bindingCapElems(ctx);
  try {
    const built = async (offsets?: Int32Array) => {
      const m = await deviceDiaFromCsr(ctx, shared, { offsets });
      m.layout(cap, Number.POSITIVE_INFINITY).release();
      return m;
    };
    const buildMs = await timed(ctx, reps, () => built(), (m) => m.release());
    const m = await built();
    const buildGivenOffsetsMs = await timed(ctx, reps, () => built(m.offsets), (d) => d.release());
    const handleMs = await timed(ctx, reps, () => diaTiledKernel.upload(ctx, m), (h) => h.dispose());
    const handle = diaTiledKernel.upload(ctx, m) as EllDeviceMatrix;
    m.release();
    return { row: { csrUploadMs, buildMs, buildGivenOffsetsMs, handleMs }, handle, offsets: m.offsets };
  } finally {
    shared.release();
  }
}

/** Measure every matrix of the set; writes JSON to `out` after each. */
export async function diaDeviceCost(opts: { quick: boolean; reps: number; out: string; only?: string[] }): Promise<void> {
  const ctx = await createGpuContext();
  ctx.buffers.maxPooledBytes = 0; // destroy released buffers at once: the layouts are 100s of MB
  const rows: Record<string, unknown>[] = [];
  try {
    for (const [name, make] of diaDeviceSet(opts.quick)) {
      if (opts.only && !opts.only.some((f) => name.includes(f))) continue;
      const a = make();
      const host = await hostSide(ctx, a, opts.reps);
      const dev = await deviceSide(ctx, a, opts.reps);
      const x = tuneVector(a.cols);
      const [yh, yd] = [await productBits(ctx, host.handle, x, a.rows), await productBits(ctx, dev.handle, x, a.rows)];
      host.handle.dispose();
      dev.handle.dispose();
      const operatorMs = await timed(ctx, opts.reps, () => gpuOperatorFromCsr(ctx, a, { kernel: 'dia-tiled' }), (op) => op.dispose());
      const row = { matrix: name, rows: a.rows, nnz: csrNnz(a), adapter: ctx.adapterInfo, ...host.row, ...dev.row, operatorMs, productBitsEqual: yh.every((v, i) => v === yd[i]) };
      rows.push(row);
      console.log(JSON.stringify(row, (k, v) => (k === 'adapter' ? undefined : typeof v === 'number' ? Number(v.toFixed(2)) : v)));
      mkdirSync(dirname(opts.out), { recursive: true });
      writeFileSync(opts.out, JSON.stringify({ quick: opts.quick, reps: opts.reps, rows }, null, 1));
    }
  } finally {
    ctx.dispose();
  }
  console.log(`wrote ${opts.out}`);
}
