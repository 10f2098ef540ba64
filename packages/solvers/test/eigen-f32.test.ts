import { describe, expect, it } from 'vitest';
import { Float32HostSpace, float32CsrOperator } from './eigen-f32-space';
import { eigenSuite } from './eigen-suite';

// The same suite on the float32 emulation of the GPU backend (f32 tolerances).
describe('eigensolvers on Float32HostSpace (float32 emulation)', () => {
  eigenSuite(() => ({ name: 'host-f32-emulated', space: new Float32HostSpace(), operator: float32CsrOperator }));
});

describe('lanczos readback batching (float32 space)', () => {
  it('reads back once per checkEvery steps and per restart, with the same eigenvalues as checkEvery 1', async () => {
    const { generators } = await import('@gpusparse/formats');
    const { lanczos } = await import('../src/index');
    const a = generators.poisson2d(30, 19); // 570 rows, simple eigenvalues (closed form below)
    const space = new Float32HostSpace();
    const one = await lanczos(float32CsrOperator(a), space, { k: 3, checkEvery: 1, checkMultiplicity: false });
    const batched = await lanczos(float32CsrOperator(a), space, { k: 3, checkMultiplicity: false }); // default 8 in float32
    expect(one.reason).toBe('converged');
    expect(batched.reason).toBe('converged');
    // per step vs per batch: at least 4x fewer readbacks, at most 7 extra steps per check
    expect(batched.stats.readbacks * 4).toBeLessThanOrEqual(one.stats.readbacks);
    expect(batched.iterations).toBeLessThanOrEqual(one.iterations + 8);
    const all: number[] = [];
    for (let i = 1; i <= 30; i++) for (let j = 1; j <= 19; j++) all.push(4 - 2 * Math.cos((i * Math.PI) / 31) - 2 * Math.cos((j * Math.PI) / 20));
    const want = all.sort((x, y) => x - y).slice(0, 3);
    batched.values.forEach((v, i) => { expect(Math.abs(v - want[i]!)).toBeLessThan(1e-4); });
    one.values.forEach((v, i) => { expect(Math.abs(v - want[i]!)).toBeLessThan(1e-4); });
  });
});
