/**
 * Chunked CI assembly into the device (lavapipe here): H forced into many row chunks, each split
 * over several binding blocks, gives the same product as the whole CSR and the same energies as
 * the unchunked path to 1e-10 Eh.
 */
import { readFcidump } from '@gpusparse/chem/node';
import { assembleHamiltonian, buildCiSpace, type CiBackend, ciEnergies, hostBackend } from '@gpusparse/chem';
import { csrSpmv, generators } from '@gpusparse/formats';
import { createGpuContext, type GpuContext, GpuVectorSpace, gpuOperatorFromCsr } from '@gpusparse/gpu';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gpuChunkSink } from '../src/util/ci-device';
import { dataFile } from '../../../testdata/index';

const file = (name: string) => dataFile('fcidump', name);
let ctx: GpuContext;
// part of the GPU tier (vitest.config.ts): skipped with it when no adapter appears, required in CI
const gpuTierSkipped = process.env.GPUSPARSE_GPU_TIER === 'skip' && process.env.GPUSPARSE_REQUIRE_GPU !== '1';

beforeAll(async () => {
  if (!gpuTierSkipped) ctx = await createGpuContext();
});
afterAll(() => ctx?.dispose());

describe.skipIf(gpuTierSkipped)('chunked device assembly', () => {
  it('joins chunks of several binding blocks each into one operator equal to the whole CSR product', async () => {
    const fd = await readFcidump(file('H8_sto6g_R1.8_block2.FCIDUMP'));
    const { space, fcidump } = buildCiSpace(fd, 'fci', { irrep: 1 });
    const h = await assembleHamiltonian(fcidump, space, { workers: 0 });
    const n = space.size;
    const sink = await gpuChunkSink(ctx, n, h.stats.nnz / n, 'csr-vector', 4096);
    const rowsPer = 97;
    for (let s = 0; s < n; s += rowsPer) {
      const e = Math.min(n, s + rowsPer);
      const k0 = h.matrix.rowPtr[s]!;
      const rowPtr = Int32Array.from(h.matrix.rowPtr.subarray(s, e + 1), (v) => v - k0);
      const k1 = h.matrix.rowPtr[e]!;
      sink.add({ format: 'csr', rows: e - s, cols: n, rowPtr, colIdx: h.matrix.colIdx.subarray(k0, k1), values: h.matrix.values.subarray(k0, k1) }, s);
    }
    const op = await sink.finish();
    // 4096-byte bindings: 1024 entries per block, so every chunk of ~97 rows spans several blocks
    expect((op as unknown as { handle: { blocks: number } }).handle.blocks).toBeGreaterThan(2 * Math.ceil(n / rowsPer));
    const vs = new GpuVectorSpace(ctx);
    const x = Float64Array.from({ length: n }, generators.rng(5));
    const y = vs.create(n);
    op.apply(vs.fromArray(x), y);
    const got = await vs.toArray(y);
    const ref = csrSpmv(h.matrix, x);
    let worst = 0;
    let scale = 0;
    for (let i = 0; i < n; i++) {
      worst = Math.max(worst, Math.abs(got[i]! - ref[i]!));
      scale = Math.max(scale, Math.abs(ref[i]!));
    }
    expect(worst / scale).toBeLessThan(1e-5);
  });

  it('ciEnergies with assembly: chunked (tiny chunks) equals the unchunked path to 1e-10 Eh', async () => {
    const fd = await readFcidump(file('He2_dice.FCIDUMP'));
    const space = new GpuVectorSpace(ctx);
    const backend: CiBackend<unknown, unknown> = {
      space: space as never,
      operator: (m) => gpuOperatorFromCsr(ctx, m, { kernel: 'csr-vector' }) as never,
      chunkSink: (rows, perRow) => gpuChunkSink(ctx, rows, perRow, 'csr-vector', 1 << 16) as never,
    };
    const opts = { irrep: 1, nroots: 2, workers: 0, solver: 'davidson' as const };
    const stages = new Set<string>();
    const chunked = await ciEnergies(fd, { ...opts, backend, assembly: 'chunked', chunkNnz: 400, onProgress: (p) => void stages.add(p.stage) });
    // the float64 polish reports its iterations too (the CLI prints them off a terminal)
    expect([...stages]).toEqual(['read', 'estimate', 'space', 'assembly', 'solve-start', 'solve', 'polish']);
    const whole = await ciEnergies(fd, { ...opts, backend, assembly: 'whole' });
    // the host path's default stop is the energy bound (≤ 1e-8 Eh): the residual stop makes it a 1e-10 reference
    const host = await ciEnergies(fd, { ...opts, backend: hostBackend(), accept: 'residual' });
    const m = /assembled in (\d+) row chunks straight to the device/.exec(chunked.notes.join(' '));
    expect(Number(m?.[1])).toBeGreaterThan(4);
    expect(chunked.solver.converged).toBe(true);
    for (let r = 0; r < 2; r++) {
      expect(Math.abs(chunked.energies[r]! - whole.energies[r]!)).toBeLessThan(1e-10);
      expect(Math.abs(chunked.energies[r]! - host.energies[r]!)).toBeLessThan(1e-10);
    }
    expect(chunked.energies[0]).toBeCloseTo(-5.76217597349, 8);
    expect(chunked.nnz).toBe(whole.nnz);
  });
});
