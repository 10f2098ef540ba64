/**
 * Session 14: the loop shape of the multi-column reductions (blas1/loops). On a software adapter
 * (lavapipe here) the Lanczos / GMRES block and the fused multi-dot take the bounded loops, whose
 * cold compile in llvmpipe is seconds where the unrolled text took tens of seconds (the
 * hostile-s9a device-lost Lanczos case went past its 120 s limit on a busy core, session 13); on
 * a GPU the unrolled text, unchanged. The values of the bounded kernels are checked where they
 * always were (lanczos-block, gmres-block, blas1-fused: float64 references, bit-identity with
 * dot and with the per-vector path); bench/column-loops.ts checks the two shapes bit for bit
 * against each other (not here: the unrolled pair alone costs lavapipe 30–70 s of CPU cold).
 */
import { generators } from '@gpusparse/formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { gmres, lanczos } from '../../solvers/src/index';
import { columnLoops, columnLoopsTuning } from '../src/blas1/loops';
import { softwareAdapter } from '../src/device/probe';
import { type GpuContext, GpuVectorSpace, gpuOperatorFromCsr } from '../src/index';
import { testContext } from './helpers';

let ctx: GpuContext;
beforeAll(async () => {
  ctx = await testContext();
});

const SHAPED = /^blas1:(lanczos-dots|lanczos-combine|multidot1-\d+|combine-dots\d+)(-bounded)?$/;

describe('multi-column reductions: loop shape by adapter', () => {
  it('softwareAdapter reads the adapter description (lavapipe, SwiftShader: yes; a GPU: no)', () => {
    const info = (o: Record<string, string>) => ({ adapterInfo: { vendor: '', architecture: '', device: '', description: '', ...o } });
    expect(softwareAdapter(info({ description: 'llvmpipe: Mesa 25.0.7 (LLVM 15.0.6)' }))).toBe(true);
    expect(softwareAdapter(info({ vendor: 'google', device: 'SwiftShader Device (Subzero)' }))).toBe(true);
    expect(softwareAdapter(info({ vendor: 'nvidia', architecture: 'hopper', description: 'NVIDIA H100 80GB HBM3' }))).toBe(false);
    expect(softwareAdapter(info({}))).toBe(false);
  });

  it('Lanczos (block), GMRES (block) and a 14-vector multiDot compile only the shape of this adapter', async () => {
    const want = softwareAdapter(ctx) ? 'bounded' : 'unrolled';
    expect(columnLoops(ctx)).toBe(want);
    const s = new GpuVectorSpace(ctx);
    const a = generators.poisson2d(12);
    const op = gpuOperatorFromCsr(ctx, a);
    const r = await lanczos(s, op, { k: 2, tol: 1e-4, checkMultiplicity: false });
    expect(r.reason, r.detail).toBe('converged');
    const g = await gmres(s, op, s.fromArray(new Float64Array(a.rows).fill(1)), { rtol: 1e-4, restart: 10 });
    expect(g.converged).toBe(true);
    const xs = Array.from({ length: 14 }, (_, j) => s.fromArray(new Float64Array(a.rows).fill(j + 1)));
    const dots = await s.readMany(s.multiDot(xs, xs[0]!));
    expect(dots).toEqual(xs.map((_, j) => (j + 1) * a.rows)); // small integers: exact in float32
    await ctx.finish();
    const shaped = ctx.pipelines.log.map((e) => e.key).filter((k) => SHAPED.test(k));
    expect(shaped).toEqual(expect.arrayContaining(['blas1:lanczos-dots', 'blas1:lanczos-combine'].map((k) => (want === 'bounded' ? `${k}-bounded` : k))));
    expect(shaped.some((k) => k.startsWith('blas1:multidot1-'))).toBe(true);
    for (const k of shaped) expect(k.endsWith('-bounded'), k).toBe(want === 'bounded');
  });

  it('columnLoopsTuning.force overrides the adapter for blocks made afterwards (the bench compares the two shapes)', () => {
    const other = softwareAdapter(ctx) ? 'unrolled' : 'bounded';
    try {
      columnLoopsTuning.force = other;
      expect(columnLoops(ctx)).toBe(other);
    } finally {
      columnLoopsTuning.force = undefined;
    }
    expect(columnLoops(ctx)).toBe(softwareAdapter(ctx) ? 'bounded' : 'unrolled');
  });
});
