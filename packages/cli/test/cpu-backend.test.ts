import { generators as g } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { eigsh, solve } from '../src/api';

describe('CPU backend (WasmVectorSpace)', () => {
  const a = g.poisson2d(40);
  const b = new Float64Array(a.rows).fill(1);
  it('solve: the wasm host backend, the same x bit for bit with 1 and 2 threads', async () => {
    const r1 = await solve(a, b, { backend: 'cpu', method: 'cg', rtol: 1e-10, threads: 1 });
    const r2 = await solve(a, b, { backend: 'cpu', method: 'cg', rtol: 1e-10, threads: 2 });
    expect(r1.backend).toContain('WebAssembly SIMD, 1 thread');
    expect(r2.backend).toContain('2 threads');
    expect(r1.converged).toBe(true);
    expect(r1.relativeResidual).toBeLessThan(1e-10);
    expect(Array.from(r2.x)).toEqual(Array.from(r1.x));
  });
  it('eigsh: eigenvectors come back as plain arrays, not views on wasm memory', async () => {
    const r = await eigsh(a, 2, { backend: 'cpu', threads: 2 });
    expect(r.converged).toBe(true);
    expect(r.vectors[0]!.buffer).toBeInstanceOf(ArrayBuffer);
    expect(r.values[0]).toBeCloseTo(8 * Math.sin(Math.PI / 82) ** 2, 8);
  });
});
