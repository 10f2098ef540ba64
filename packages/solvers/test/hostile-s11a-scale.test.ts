/**
 * Session 11 hardening: badly scaled systems on a float32 space (here `Float32HostSpace`, the
 * host emulation of the GPU's float32 arithmetic; packages/gpu/test/hostile-s11a-scale-device
 * runs the same on WebGPU). Norms there square in float32: entries below 2^-63 square to nothing.
 * Before: cg / gmres / bicgstab on A·1e-30 with b = A·1 (or b = 1e-30·A·1) read ‖b‖ = 0 and
 * returned x = 0 'converged' ("b = 0, so x = 0", true relative residual 1); b·1e30 ended
 * 'non-finite' blaming "non-finite values" in a finite b; lanczos / davidson / lobpcg on A·1e-30
 * read every residual as 0 and returned wrong pairs 'converged' (lanczos 3.67 for λ₁ = 0.116 of
 * the unscaled matrix; davidson the same on A·1e-15: its default absolute residualTol 1e-4
 * passed everything). Now: the Krylov solvers refuse with InvalidParameterError naming ‖b‖ and
 * the exact remedy (scale by a power of two, or refinedSolve), and never say 'converged' when
 * rtol·‖b‖ is below the float32 floor; the eigensolvers end 'breakdown'
 * naming the unresolvable threshold; refinedSolve and eigsMixed (which scale or polish in
 * float64) still solve. Float64 spaces are untouched.
 */
import { type CsrMatrix, csrSpmv, generators, HostOperator, HostVectorSpace, InvalidParameterError } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { bicgstab, cg, davidson, eigsMixed, gmres, lanczos, lobpcg, refinedSolve } from '../src/index';
import { Float32HostSpace, float32CsrOperator } from './eigen-f32-space';

const a0 = generators.poisson2d(12); // n = 144, λ₁ = 0.1162, λ₂ = 0.2872
const scaled = (a: CsrMatrix, s: number): CsrMatrix => ({ ...a, values: a.values.map((v) => v * s) });
const ones = new Float64Array(a0.rows).fill(1);
const krylov = { cg, gmres, bicgstab } as const;
function system(sa: number, sb: number) {
  const a = scaled(a0, sa);
  const b = csrSpmv(a, ones).map((v) => v * sb);
  const rel = (x: ArrayLike<number>) => Math.hypot(...csrSpmv(a, Float64Array.from(x)).map((v, i) => b[i]! - v)) / Math.hypot(...b);
  return { a, b, rel };
}

describe('Krylov solvers on a float32 space: a right-hand side float32 cannot measure', () => {
  for (const [what, sa, sb, msg] of [
    ['A·1e-30, b = A·1 (‖b‖ 7.5e-30: reads 0)', 1e-30, 1, /b: expected a right-hand side that float32 can measure.*‖b‖ = 7\.48\de-30, which reads 0/],
    ['b = 1e-30·A·1', 1, 1e-30, /b: expected a right-hand side that float32 can measure.*which reads 0/],
    ['A·1e30, b = A·1 (‖b‖² overflows)', 1e30, 1, /b: expected a right-hand side whose squared norm fits float32.*‖b‖ = 7\.48\de\+30/],
    ['b = 1e30·A·1', 1, 1e30, /whose square overflows float32/],
  ] as const) {
    it(`${what}: cg, gmres, bicgstab throw InvalidParameterError naming the remedy (was 'converged' with x = 0, or 'non-finite')`, async () => {
      const { a, b } = system(sa, sb);
      const space = new Float32HostSpace();
      for (const [name, f] of Object.entries(krylov)) {
        const run = () => f(space, float32CsrOperator(a), space.fromArray(b), { rtol: 1e-5 });
        await expect(run(), name).rejects.toThrow(InvalidParameterError);
        await expect(run(), name).rejects.toThrow(msg);
        await expect(run(), name).rejects.toThrow(/power of two.*refinedSolve/);
      }
    });
  }
  it("A·1e-20 (‖b‖ 7.5e-20 reads, rtol·‖b‖ 7.5e-25 cannot): never 'converged' — the detail names the stopping level and the floor (gmres was 'converged' before)", async () => {
    const { a, b } = system(1e-20, 1);
    const space = new Float32HostSpace();
    for (const [name, f] of Object.entries(krylov)) {
      const r = await f(space, float32CsrOperator(a), space.fromArray(b), { rtol: 1e-5 });
      expect(r.converged, name).toBe(false);
      // cg and bicgstab break down on their own (⟨p, A·p⟩ = 0); gmres reached 'converged' and is taken back
      if (name === 'gmres') expect(r.detail, name).toMatch(/stopping level max\(rtol·‖b‖, atol\) = 7\.48e-25 .* below what a float32 norm of 144 entries resolves/);
    }
  });
  it('an unattainable rtol (1e-30, as the benchmarks use for fixed iteration counts) is not refused: max-iterations', async () => {
    const space = new Float32HostSpace();
    for (const [name, f] of Object.entries(krylov)) {
      const r = await f(space, float32CsrOperator(a0), space.fromArray(csrSpmv(a0, ones)), { rtol: 1e-30, maxIterations: 8 });
      expect(r.reason, name).toBe('max-iterations');
    }
  });
  it('b = 0 still returns x = 0 converged (one extra pass confirms it), and rtol 0 (fixed iterations) is not refused', async () => {
    const space = new Float32HostSpace();
    for (const [name, f] of Object.entries(krylov)) {
      const r = await f(space, float32CsrOperator(a0), space.fromArray(new Float64Array(a0.rows)), { rtol: 1e-5 });
      expect(r.reason, name).toBe('converged');
      const s = await f(space, float32CsrOperator(a0), space.fromArray(csrSpmv(a0, ones)), { rtol: 0, maxIterations: 5 });
      expect(s.reason, name).toBe('max-iterations');
    }
  });
  it('refinedSolve (it scales b by a power of two) solves all four to rtol 1e-10 in float64', async () => {
    for (const [sa, sb] of [[1e-30, 1], [1, 1e-30], [1e30, 1], [1, 1e30]] as const) {
      const { a, b, rel } = system(sa, sb);
      const r = await refinedSolve({ hostOperator: HostOperator.fromCsr(a), innerOperator: float32CsrOperator(a), innerSpace: new Float32HostSpace(), b, rtol: 1e-10, extended: false, inner: { method: 'cg', rtol: 1e-4 } });
      expect(r.reason, `${sa} ${sb}`).toBe('converged');
      expect(rel(r.x), `${sa} ${sb}`).toBeLessThan(1e-9);
    }
  });
  it('on a float64 space nothing changes: A·1e-30 and b·1e30 converge to the true residual', async () => {
    const space = new HostVectorSpace();
    for (const [sa, sb] of [[1e-30, 1], [1, 1e30]] as const) {
      const { a, b, rel } = system(sa, sb);
      for (const [name, f] of Object.entries(krylov)) {
        const r = await f(space, HostOperator.fromCsr(a), space.fromArray(b), { rtol: 1e-8 });
        expect(r.reason, name).toBe('converged');
        expect(rel(r.x), name).toBeLessThan(1e-7);
      }
    }
  });
});

describe('eigensolvers on a float32 space: a residual threshold float32 cannot measure', () => {
  const lambda = [0.11623, 0.28720];
  for (const sa of [1e-30, 1e-15]) {
    it(`A·${sa}: lanczos, davidson, lobpcg end 'breakdown' naming the threshold (were 'converged' on wrong pairs at 1e-30; davidson also at 1e-15)`, async () => {
      const a = scaled(a0, sa);
      const space = new Float32HostSpace();
      const op = float32CsrOperator(a);
      const runs = {
        lanczos: () => lanczos(space, op, { k: 2 }),
        davidson: () => davidson(space, op, { k: 2, diagonal: new Float64Array(a.rows).fill(4 * sa) }),
        lobpcg: () => lobpcg(space, op, { k: 2 }),
      };
      for (const [name, run] of Object.entries(runs)) {
        const r = await run();
        expect(r.converged, name).toBe(false);
        expect(r.reason, name).toBe('breakdown');
        expect(r.detail, name).toMatch(/residual threshold .* is below what a float32 norm of 144 entries resolves.*power of two/);
      }
    });
  }
  it('eigsMixed (float64 polish) still gets λ₁, λ₂ of A·1e-30 and A·1e-15 to 1e-8 relative', async () => {
    const ref = (await lanczos(new HostVectorSpace(), HostOperator.fromCsr(a0), { k: 2, tol: 1e-12 })).values;
    for (const sa of [1e-30, 1e-15]) {
      const a = scaled(a0, sa);
      const r = await eigsMixed({ method: 'lanczos', k: 2, fastOperator: float32CsrOperator(a), fastSpace: new Float32HostSpace(), hostOperator: HostOperator.fromCsr(a), rtol: 1e-10 });
      expect(r.converged, String(sa)).toBe(true);
      r.values.forEach((v, i) => {
        expect(Math.abs(v / sa - ref[i]!) / ref[i]!, String(sa)).toBeLessThan(1e-8);
      });
    }
  });
  it('davidson on a float64 space with A·1e-15: the default thresholds shrink with ‖A‖ (was converged at 3.0e-15 / 5.0e-15, the diagonal)', async () => {
    const a = scaled(a0, 1e-15);
    const r = await davidson(new HostVectorSpace(), HostOperator.fromCsr(a), { k: 2, diagonal: new Float64Array(a.rows).fill(4e-15) });
    expect(r.converged).toBe(true);
    r.values.forEach((v, i) => {
        expect(Math.abs(v / 1e-15 - lambda[i]!) / lambda[i]!).toBeLessThan(1e-4);
      });
  });
  it('unscaled A on the float32 space: all three still converge (the check costs nothing)', async () => {
    const space = new Float32HostSpace();
    for (const r of [await lanczos(space, float32CsrOperator(a0), { k: 2 }), await lobpcg(space, float32CsrOperator(a0), { k: 2 }), await davidson(space, float32CsrOperator(a0), { k: 2, diagonal: new Float64Array(a0.rows).fill(4) })]) {
      expect(r.converged, r.method).toBe(true);
      r.values.forEach((v, i) => {
        expect(Math.abs(v - lambda[i]!), r.method).toBeLessThan(1e-3);
      });
    }
  });
});
