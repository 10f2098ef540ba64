/**
 * Test fixtures shared by the WebAssembly host-space tests: deterministic values with exact zeros
 * and a wide exponent range, bit patterns for bit-for-bit comparisons, and spaces disposed after
 * the file's tests.
 */
import { afterAll } from 'vitest';
import { WasmVectorSpace } from '../../src/host/index';

/** Deterministic pseudo-random values in [-1, 1) with some exact zeros and a wide exponent range. */
export function values(n: number, seed: number): Float64Array {
  const v = new Float64Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    v[i] = i % 17 === 3 ? 0 : ((s / 2 ** 32) * 2 - 1) * 2 ** ((s % 13) - 6);
  }
  return v;
}

/** The float64 bit patterns of `a`, for exact comparisons. */
export const bits = (a: Float64Array) => Array.from(new BigUint64Array(a.buffer.slice(a.byteOffset, a.byteOffset + a.byteLength)));

/**
 * A factory of WebAssembly spaces disposed after the calling file's tests (call at module level).
 * `small`: split even short vectors and small matrices over the threads.
 */
export function wasmSpaces(): (threads: number, small?: boolean) => WasmVectorSpace {
  const spaces: WasmVectorSpace[] = [];
  afterAll(() => {
    for (const s of spaces) s.dispose();
  });
  return (threads, small = false) => {
    const s = WasmVectorSpace.create({ threads, ...(small ? { parallelMinLength: 1, parallelMinNnz: 1 } : {}) });
    if (!s) throw new Error('WebAssembly SIMD with shared memory is expected in node 20');
    spaces.push(s);
    return s;
  };
}
