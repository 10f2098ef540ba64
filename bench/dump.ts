/**
 * Raw CSR dumps for the Python baselines on the GPU machine (.gpukit/cusparse_anchor.py,
 * bench/solvers_cupy.py): NAME.rowptr and NAME.cols (int32) and NAME.vals (float32).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
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
  writeFileSync(`${base}.rowptr`, new Uint8Array(a.rowPtr.buffer, a.rowPtr.byteOffset, a.rowPtr.byteLength));
  writeFileSync(`${base}.cols`, new Uint8Array(a.colIdx.buffer, a.colIdx.byteOffset, a.colIdx.byteLength));
  const v = Float32Array.from(a.values);
  if (exact) for (let i = 0; i < v.length; i++) if (v[i] !== a.values[i]) throw new Error(`dumpCsr ${name}: value ${a.values[i]} at position ${i} is not exact in float32`);
  writeFileSync(`${base}.vals`, new Uint8Array(v.buffer));
}
