import { csrFromTriplets, generators, HostOperator, HostVectorSpace } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { EigenRun } from '../src/eigen/common';
import { symmetricEigen } from '../src/eigen/dense';
import { chebyshevFilter } from '../src/eigen/lanczos-filter';
import type { LanczosCtx } from '../src/eigen/lanczos-step';
import { lanczos } from '../src/index';

// (s13-eig13) the residue of a check attempt (./lanczos-residue) and the multiplicity check end to end

const n = 400;
const missChance = 1e-4;
const unit = (i: number) => Float64Array.from({ length: n }, (_, j) => (j === i ? 1 : 0));

function diagonal(d: readonly number[]) {
  const idx = d.map((_, i) => i);
  return HostOperator.fromCsr(csrFromTriplets(d.length, d.length, idx, idx, [...d]));
}

function ctx(op: HostOperator): LanczosCtx<Float64Array, number> {
  return { op, space: new HostVectorSpace(), run: new EigenRun({ k: 1 }), sign: 1, tolerance: { tol: 1e-8, atol: 0 }, maxBasis: 20, maxIterations: 5000, checkEvery: 1, iterations: 0, normA: 10, eps: 2 ** -52, keep: undefined, scheduleEstimates: false, hint: {} } as unknown as LanczosCtx<Float64Array, number>;
}

/** A unit start orthogonal to e_0 with weight w1 on e_1 and w2 on e_2, the rest pseudo-random. */
function start(w1: number, w2: number): Float64Array {
  let s = 5;
  const x = Float64Array.from({ length: n }, (_, i) => {
    s = (s * 16807) % 2147483647;
    return i < 3 ? 0 : s / 2147483647 - 0.5;
  });
  const norm = Math.hypot(...x);
  const rest = Math.sqrt(1 - w1 * w1 - w2 * w2);
  for (let i = 3; i < n; i++) x[i] = (x[i]! / norm) * rest;
  x[1] = w1;
  x[2] = w2;
  return x;
}

// e_0 = 1 found, e_1 at 2 a missed copy of a found 2, e_2 at 1 (a missed copy of λ₁ when the start has weight on it), the rest on [3, 10]
const d = Array.from({ length: n }, (_, i) => (i === 0 || i === 2 ? 1 : i === 1 ? 2 : 3 + (7 * (i - 3)) / (n - 4)));

/** The filter of a check at μ₀ = 2 + 1e-7 from `x`, handed over with its residue. */
async function handover(x: Float64Array) {
  const c = ctx(diagonal(d));
  const out = await chebyshevFilter(c, [unit(0)], x, { lo: 2.9, hi: 10.2, lowest: 1 }, 2 + 1e-7, missChance);
  if (out.kind !== 'lanczos' || !out.residue) throw new Error(`expected a handover with a residue, got ${out.kind}`);
  return out.residue;
}

describe('the residue of a check attempt', () => {
  it('clears the next check point when the start had no weight on a copy there', async () => {
    const r = await handover(start(0.05, 0));
    expect(await r.clears([unit(0), unit(1)], 1 + 1e-7, { value: 2, vector: unit(1) })).toBe(true);
    r.release();
  });
  it('never clears a start with weight above the bound on a missed copy at or before the new point', async () => {
    for (const w of [0.05, 1e-3, 1e-5]) {
      const r = await handover(start(0.05, w));
      expect(await r.clears([unit(0), unit(1)], 1 + 1e-7, { value: 2, vector: unit(1) })).toBe(false);
      r.release();
    }
  });
  it("says nothing of the found value's own eigenvalue: no clear when the found value is not beyond the point", async () => {
    const r = await handover(start(0.05, 0));
    expect(await r.clears([unit(0), unit(1)], 2 + 1e-7, { value: 2, vector: unit(1) })).toBe(false);
    r.release();
  });
});

/** Tridiagonal T (diag 2 + 0.5·sin i, off −1) of size nb, placed on the diagonal once per shift. */
function blocks(nb: number, shifts: readonly number[]) {
  const ri: number[] = [];
  const ci: number[] = [];
  const v: number[] = [];
  for (const [b, s] of shifts.entries()) {
    for (let i = 0; i < nb; i++) {
      const r = b * nb + i;
      ri.push(r);
      ci.push(r);
      v.push(2 + 0.5 * Math.sin(i) + s);
      if (i + 1 === nb) continue;
      ri.push(r, r + 1);
      ci.push(r + 1, r);
      v.push(-1, -1);
    }
  }
  const t = symmetricEigen(Array.from({ length: nb }, (_, i) => Array.from({ length: nb }, (_, j) => (i === j ? 2 + 0.5 * Math.sin(i) : Math.abs(i - j) === 1 ? -1 : 0))))!.values;
  const spectrum = shifts.flatMap((s) => t.map((x) => x + s)).sort((x, y) => x - y);
  return { op: HostOperator.fromCsr(csrFromTriplets(nb * shifts.length, nb * shifts.length, ri, ci, v)), spectrum };
}

describe('lanczos multiplicity check end to end (s13-eig13)', () => {
  for (const m of [1, 2, 3, 4]) {
    for (const which of ['smallest', 'largest'] as const) {
      it(`λ₂ of multiplicity ${m} after a simple λ₁ (${which}): k = m + 2 returns every copy`, async () => {
        const delta = which === 'smallest' ? 0.01 : -0.01;
        const { op, spectrum } = blocks(60, [0, ...new Array<number>(m).fill(delta)]);
        const want = which === 'smallest' ? spectrum.slice(0, m + 2) : spectrum.slice(-(m + 2)).reverse();
        const r = await lanczos(new HostVectorSpace(), op, { k: m + 2, tol: 1e-8, which });
        expect(r.reason).toBe('converged');
        for (const [i, x] of r.values.entries()) expect(Math.abs(x - want[i]!)).toBeLessThan(5e-8);
        expect(r.residualNorms.every((x) => x <= r.tolerance!.threshold)).toBe(true);
      });
    }
  }
  it('clustered eigenvalues (four distinct values within 3e-6): the k smallest, none skipped', async () => {
    const { op, spectrum } = blocks(60, [0, 1e-6, 2e-6, 3e-6]);
    const r = await lanczos(new HostVectorSpace(), op, { k: 6, tol: 1e-8 });
    expect(r.reason).toBe('converged');
    for (const [i, x] of r.values.entries()) expect(Math.abs(x - spectrum[i]!)).toBeLessThan(5e-8);
  });
  it('3-D Laplacian 8³ (λ₂ and λ₃ triple): k = 4 and k = 7 match the closed form', async () => {
    const op = HostOperator.fromCsr(generators.poisson3d(8, 8, 8));
    const mode = (i: number) => 2 - 2 * Math.cos((i * Math.PI) / 9);
    const all: number[] = [];
    for (let i = 1; i <= 8; i++) for (let j = 1; j <= 8; j++) for (let l = 1; l <= 8; l++) all.push(mode(i) + mode(j) + mode(l));
    all.sort((x, y) => x - y);
    for (const k of [4, 7]) {
      const r = await lanczos(new HostVectorSpace(), op, { k, tol: 1e-8 });
      expect(r.reason).toBe('converged');
      for (const [i, x] of r.values.entries()) expect(Math.abs(x - all[i]!)).toBeLessThan(1e-9 * 12);
    }
  });
});
