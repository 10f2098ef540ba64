import { type CsrMatrix, csrSpmv, generators } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { readFcidump } from '../src/fcidump/node';
import { assembleChunked, assembleHamiltonian, buildCiSpace, type ChunkSink, parallelRowBlockOperator, rowBlockOperator } from '../src/index';
import { dataFile } from '../../../testdata/index';

const file = (name: string) => dataFile('fcidump', name);

/** A sink that records the chunks it gets (and checks they come in row order). */
function recordingSink(slow: boolean) {
  const got: { chunk: CsrMatrix; rowStart: number }[] = [];
  const sink: ChunkSink<Float64Array> = {
    add(chunk, rowStart) {
      const prev = got[got.length - 1];
      expect(rowStart).toBe(prev ? prev.rowStart + prev.chunk.rows : 0);
      got.push({ chunk, rowStart });
      // a slow consumer (like a device queue being drained) holds the assembly back
      return slow ? new Promise<void>((r) => setTimeout(r, 2)) : undefined;
    },
    finish: () => {
      throw new Error('not used');
    },
  };
  return { sink, got };
}

describe('chunked assembly of H', () => {
  for (const [workers, slow] of [
    [0, false],
    [2, false],
    [2, true],
  ] as const) {
    it(`gives the whole assembly's rows bit for bit, in many small chunks (workers ${workers}${slow ? ', slow sink' : ''})`, async () => {
      const fd = await readFcidump(file('H8_sto6g_R1.8_block2.FCIDUMP'));
      const { space, fcidump } = buildCiSpace(fd, 'fci', { irrep: 1 });
      const whole = await assembleHamiltonian(fcidump, space, { workers: 0 });
      const { sink, got } = recordingSink(slow);
      const perRow = whole.stats.nnz / space.size;
      const h = await assembleChunked(fcidump, space, sink, { perRow, chunkNnz: 5000, workers });
      expect(h.chunks).toBeGreaterThan(10);
      expect(h.stats.workers).toBe(workers);
      expect(got.length).toBe(h.chunks);
      expect(h.nnz).toBe(whole.stats.nnz);
      expect(Array.from(h.diagonal)).toEqual(Array.from(whole.diagonal));
      let mismatches = 0;
      for (const { chunk, rowStart } of got) {
        for (let i = 0; i < chunk.rows; i++) {
          const a0 = whole.matrix.rowPtr[rowStart + i]!;
          const len = whole.matrix.rowPtr[rowStart + i + 1]! - a0;
          if (chunk.rowPtr[i + 1]! - chunk.rowPtr[i]! !== len) mismatches++;
          for (let k = 0; k < len; k++) {
            if (chunk.colIdx[chunk.rowPtr[i]! + k] !== whole.matrix.colIdx[a0 + k]) mismatches++;
            if (chunk.values[chunk.rowPtr[i]! + k] !== whole.matrix.values[a0 + k]) mismatches++;
          }
        }
      }
      expect(mismatches).toBe(0);
      // the float64 row-block product equals the CSR product
      const x = Float64Array.from({ length: space.size }, generators.rng(3));
      const y = new Float64Array(space.size);
      rowBlockOperator(h.blocks, space.size).apply(x, y);
      const ref = csrSpmv(whole.matrix, x);
      let worst = 0;
      for (let i = 0; i < y.length; i++) worst = Math.max(worst, Math.abs(y[i]! - ref[i]!));
      expect(worst).toBeLessThan(1e-12);
      // on worker threads over shared memory: bit-identical to the one-thread product, twice
      const par = await parallelRowBlockOperator(h.blocks, space.size, 3);
      expect(par).toBeDefined();
      try {
        for (let rep = 0; rep < 2; rep++) {
          const yp = new Float64Array(space.size).fill(Number.NaN);
          par!.apply(x, yp);
          expect(Buffer.from(yp.buffer).equals(Buffer.from(y.buffer))).toBe(true);
        }
      } finally {
        par!.dispose();
      }
    });
  }
});
