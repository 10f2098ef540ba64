/**
 * Session 12: the CI driver's df64 polish on a Hamiltonian whose values lie below float32's
 * normal range (every integral × 1e-35: max |Hᵢⱼ| ≈ 1e-35 Eh). NVIDIA flushes the df64 parts of
 * such values: before, the device polish multiplied a float32-accurate H with nothing said. Now
 * the df64 operator refuses it (InvalidMatrixError naming the values and the remedy) from every
 * build the driver uses — the chunk sink's blocks and the float32 operator's shared upload — and
 * ciEnergies with polish 'device' rejects with it. A Hamiltonian of
 * ordinary scale with a few integrals of 1e-35 is not refused (its flushed parts are far below
 * df64's rounding): packages/gpu/test/hostile-s12a-df64-flush.
 */
import { readFcidump } from '@gpusparse/chem/node';
import { type CiBackend, ciEnergies, type Fcidump } from '@gpusparse/chem';
import { type CsrMatrix, generators, InvalidMatrixError } from '@gpusparse/formats';
import { createGpuContext, type Df64Blas, type GpuContext, GpuVectorSpace, gpuOperatorFromCsr } from '@gpusparse/gpu';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gpuChunkSink, gpuDevicePolish } from '../src/util/ci-device';
import { dataFile } from '../../../testdata/index';

let ctx: GpuContext;
const gpuTierSkipped = process.env.GPUSPARSE_GPU_TIER === 'skip' && process.env.GPUSPARSE_REQUIRE_GPU !== '1';

beforeAll(async () => {
  if (!gpuTierSkipped) ctx = await createGpuContext();
});
afterAll(() => ctx?.dispose());

/** `fd` with every integral and the constant × s. */
const scaledFd = (fd: Fcidump, s: number): Fcidump => ({ ...fd, h1: fd.h1.map((v) => v * s), eri: fd.eri.map((v) => v * s), ecore: fd.ecore * s });

function backend(): CiBackend<unknown, unknown> {
  return {
    space: new GpuVectorSpace(ctx) as never,
    operator: (m) => gpuOperatorFromCsr(ctx, m, { kernel: 'csr-vector' }) as never,
    chunkSink: (rows, perRow, o) => gpuChunkSink(ctx, rows, perRow, 'csr-vector', 1 << 12, o) as never,
    devicePolish: () => gpuDevicePolish(ctx) as never,
  };
}

describe.skipIf(gpuTierSkipped)('CI df64 polish on a Hamiltonian below float32 normal range', () => {
  it('the device polish operator refuses H·1e-35 from the whole CSR (shared upload) and from the chunk sink', async () => {
    const dp = (await gpuDevicePolish(ctx))!;
    const h0 = generators.poisson2d(10);
    const h: CsrMatrix = { ...h0, values: h0.values.map((v) => v * 1.2345e-35) };
    const fast = gpuOperatorFromCsr(ctx, h);
    await expect(dp.operator(h, undefined, fast)).rejects.toThrow(InvalidMatrixError);
    await expect(dp.operator(h, undefined, fast)).rejects.toThrow(/below float32's normal range/);
    const sink = await gpuChunkSink(ctx, h.rows, 5, 'csr-vector', undefined, { keepLo: true });
    await sink.add(h, 0);
    ((await sink.finish()) as unknown as { dispose(): void }).dispose();
    expect(() => sink.df64Operator((dp.space as unknown as { d: Df64Blas }).d)).toThrow(InvalidMatrixError);
    // the same H at its own scale builds both ways
    const ok = await dp.operator(h0, undefined, gpuOperatorFromCsr(ctx, h0));
    (ok as unknown as { dispose(): void }).dispose();
    fast.dispose();
  });

  it("ciEnergies with polish 'device' on He2 × 1e-35 rejects with InvalidMatrixError (chunked and whole)", async () => {
    const fd = scaledFd(await readFcidump(dataFile('fcidump', 'He2_dice.FCIDUMP')), 1e-35);
    const opts = { irrep: 1, nroots: 2, workers: 0, solver: 'davidson' as const, backend: backend() };
    await expect(ciEnergies(fd, { ...opts, assembly: 'chunked', chunkNnz: 400, polish: 'device' })).rejects.toThrow(InvalidMatrixError);
    await expect(ciEnergies(fd, { ...opts, assembly: 'whole', polish: 'device' })).rejects.toThrow(InvalidMatrixError);
  });
});
