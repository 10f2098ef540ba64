/**
 * Raw CSR dumps for the Python baselines on the GPU machine (.gpukit/cusparse_anchor.py,
 * bench/solvers_cupy.py): NAME.rowptr and NAME.cols (int32) and NAME.vals (float32).
 */
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { CsrMatrix } from '@gpusparse/formats';

/**
 * Write `a` as DIR/NAME.{rowptr,cols,vals}; with `exact`, throw when a value is not exact in
 * float32 (the float64 baselines then read the same numbers as ours). Cost: one pass, three files.
 * @example dumpCsr('/tmp/m', 'poisson2d-1000', generators.poisson2d(1000));
 */
export function dumpCsr(dir: string, name: string, a: CsrMatrix, exact = false): void {
  mkdirSync(dir, { recursive: true });
  const base = join(dir, name);
  writeArray(`${base}.rowptr`, a.rowPtr);
  writeArray(`${base}.cols`, a.colIdx);
  const v = Float32Array.from(a.values);
  if (exact) for (let i = 0; i < v.length; i++) if (v[i] !== a.values[i]) throw new Error(`dumpCsr ${name}: value ${a.values[i]} at position ${i} is not exact in float32`);
  writeArray(`${base}.vals`, v);
}

/** Write a typed array in pieces of ≤ 256 MiB (a byte view of more than 2^32 − 1 bytes is not allowed). */
function writeArray(path: string, a: Uint32Array | Int32Array | Float32Array): void {
  const fd = openSync(path, 'w');
  try {
    const step = (256 << 20) / a.BYTES_PER_ELEMENT;
    for (let i = 0; i < a.length; i += step) {
      const part = a.subarray(i, Math.min(a.length, i + step));
      writeSync(fd, new Uint8Array(part.buffer, part.byteOffset, part.byteLength));
    }
  } finally {
    closeSync(fd);
  }
}
