import { csrFromTriplets, HostOperator, HostVectorSpace, InvalidParameterError } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { EigenRun } from '../src/eigen/common';
import { CopyBound } from '../src/eigen/lanczos-check';
import { chebyshevFilter, filterInterval, HANDOVER } from '../src/eigen/lanczos-filter';
import type { LanczosCtx } from '../src/eigen/lanczos-step';
import { lanczos } from '../src/index';

const n = 400;
const missChance = 1e-4;
const bound = missChance * Math.sqrt(Math.PI / (2 * (n - 1))); // what a cleared filter proves of the start's weight on a copy

/** diag(d) as an operator. */
function diagonal(d: readonly number[]) {
  const idx = d.map((_, i) => i);
  return HostOperator.fromCsr(csrFromTriplets(d.length, d.length, idx, idx, [...d]));
}

/** A context as lanczos makes it for a float64 host space (only what the filter reads). */
function ctx(op: HostOperator, sign: 1 | -1 = 1): LanczosCtx<Float64Array, number> {
  return { op, space: new HostVectorSpace(), run: new EigenRun({ k: 1 }), sign, tolerance: { tol: 1e-8, atol: 0 }, maxBasis: 20, maxIterations: 5000, checkEvery: 1, iterations: 0, normA: 10, eps: 2 ** -52, keep: undefined, scheduleEstimates: false, hint: {} } as unknown as LanczosCtx<Float64Array, number>;
}

/** A unit start orthogonal to e_0 (the found vector) with weight `c` on e_1 (the copy's direction), the rest pseudo-random. */
function start(c: number, seed = 3): Float64Array {
  let s = seed;
  const x = Float64Array.from({ length: n }, (_, i) => {
    s = (s * 16807) % 2147483647;
    return i < 2 ? 0 : s / 2147483647 - 0.5;
  });
  const norm = Math.hypot(...x);
  for (let i = 2; i < n; i++) x[i] = (x[i]! / norm) * Math.sqrt(1 - c * c);
  x[1] = c;
  return x;
}

// λ = 1 (found: e_0), then the copy direction e_1 at `copy`, the rest spread over [2, 10]
const spectrum = (copy: number, sign: 1 | -1 = 1) => Array.from({ length: n }, (_, i) => sign * (i === 0 ? 1 : i === 1 ? copy : 2 + (8 * (i - 2)) / (n - 3)));
/** ‖D·u − (uᵀDu)·u‖ for a unit u and the diagonal d. */
const residual = (d: readonly number[], u: Float64Array) => {
  const t = d.reduce((s, x, i) => s + x * u[i]! * u[i]!, 0);
  return Math.hypot(...d.map((x, i) => (x - t) * u[i]!));
};
const locked = [Float64Array.from({ length: n }, (_, i) => (i === 0 ? 1 : 0))];
const mu0 = 1 + 1e-7;

describe('the Chebyshev start of a multiplicity-check run', () => {
  it('clears the check when nothing lies below the interval, in about the steps the interval predicts', async () => {
    const c = ctx(diagonal(spectrum(3)));
    const out = await chebyshevFilter(c, locked, start(0.05), { lo: 1.9, hi: 10.2, lowest: 1 }, mu0, missChance);
    expect(out.kind).toBe('cleared');
    const a = Math.acosh((2 * (1.9 - mu0)) / (10.2 - 1.9) + 1);
    expect(out.steps).toBeLessThan(Math.ceil(Math.log(1 / bound) / a) + 10);
    expect(c.run.stats.matvecs).toBe(out.steps);
  });
  it('never clears a start with weight above the bound on a missed copy: it grows the copy and hands it to a Lanczos run', async () => {
    for (const w of [0.05, 1e-3, 20 * bound]) {
      const c = ctx(diagonal(spectrum(1)));
      const out = await chebyshevFilter(c, locked, start(w), { lo: 1.9, hi: 10.2, lowest: 1 }, mu0, missChance);
      expect(out.kind).toBe('lanczos');
      if (out.kind !== 'lanczos') continue;
      // (s13-eig13) the start leans on ±e_1, orthogonal to the found e_0, the interval's part below HANDOVER·threshold in its residual
      expect(Math.abs(Math.abs(out.start[1]!) - 1)).toBeLessThan(1e-10);
      expect(Math.abs(out.start[0]!)).toBeLessThan(1e-12);
      expect(residual(spectrum(1), out.start)).toBeLessThanOrEqual(HANDOVER * 1e-8 * 10);
      expect(Number.isFinite(out.logStart)).toBe(true);
      expect(out.residue).toBeDefined();
      out.residue?.release();
    }
  });
  it('a copy well before μ₀ (a copy of λ₁ while the check is at λ₂): the same polynomial grows it, the handed vector leans on it', async () => {
    const d = spectrum(1).map((x, i) => (i === 2 ? 1.5 : x)); // e_0 (1) and e_2 (1.5) found, e_1 a copy of 1
    const c = ctx(diagonal(d));
    const found2 = [locked[0]!, Float64Array.from({ length: n }, (_, i) => (i === 2 ? 1 : 0))];
    const x = start(0.05);
    x[2] = 0;
    const norm = Math.hypot(...x);
    for (let i = 0; i < n; i++) x[i] = x[i]! / norm; // a unit start orthogonal to both found vectors
    const out = await chebyshevFilter(c, found2, x, { lo: 1.9, hi: 10.2, lowest: 1 }, 1.5 + 1e-7, missChance);
    expect(out.kind).toBe('lanczos');
    if (out.kind !== 'lanczos') return;
    expect(Math.abs(Math.abs(out.start[1]!) - 1)).toBeLessThan(1e-10);
    expect(Math.abs(out.start[0]!) + Math.abs(out.start[2]!)).toBeLessThan(1e-12);
    out.residue?.release();
  });
  it('a wrong interval costs steps, never soundness: with the spectrum past β it does not clear a start that holds a copy', async () => {
    const d = spectrum(1).map((x, i) => (i === n - 1 ? 30 : x)); // λ_max = 30, far past the interval's 10.2
    const c = ctx(diagonal(d));
    const out = await chebyshevFilter(c, locked, start(1e-3), { lo: 1.9, hi: 10.2, lowest: 1 }, mu0, missChance);
    expect(out.kind).not.toBe('cleared');
    if (out.kind === 'lanczos') {
      // the Lanczos run starts from the filtered vector with the certificate reached: still a polynomial with p(μ₀)·e^logStart = 1/‖v‖
      expect(Number.isFinite(out.logStart)).toBe(true);
      expect(Math.abs(Math.hypot(...out.start) - 1)).toBeLessThan(1e-12);
    }
  });
  it('a start without weight on the copy (below what any certificate can see) clears: the bound is about the start', async () => {
    const c = ctx(diagonal(spectrum(1)));
    const out = await chebyshevFilter(c, locked, start(0), { lo: 1.9, hi: 10.2, lowest: 1 }, mu0, missChance);
    expect(out.kind).toBe('cleared');
  });
  it('which = largest: the mirrored interval (wanted-side coordinates sign·x)', async () => {
    const c = ctx(diagonal(spectrum(3, -1)), -1);
    const out = await chebyshevFilter(c, locked, start(0.05), { lo: 1.9, hi: 10.2, lowest: 1 }, -mu0, missChance);
    expect(out.kind).toBe('cleared');
    const c2 = ctx(diagonal(spectrum(1, -1)), -1);
    const found = await chebyshevFilter(c2, locked, start(0.05), { lo: 1.9, hi: 10.2, lowest: 1 }, -mu0, missChance);
    expect(found.kind === 'lanczos' && Math.abs(Math.abs(found.start[1]!) - 1) < 1e-10).toBe(true);
  });
  it('filterInterval: α below the next value known past μ₀ (at most halfway back), β past the farthest Ritz value; none without them', () => {
    const hint = { next: { value: 2, residual: 0.01 }, far: { value: 10, residual: 0.1 } };
    const iv = filterInterval(hint, 1, 1, [0.5, 1, 1.5], [], 1e-8)!;
    expect(iv.lo).toBeCloseTo(1.99, 12);
    expect(iv.hi).toBeCloseTo(10.1 + 0.01 * 9.1, 12);
    expect(iv.lowest).toBe(0.5);
    expect(filterInterval({ ...hint, next: { value: 2, residual: 5 } }, 1, 1, [1], [], 1e-8)!.lo).toBeCloseTo(1.5, 12); // a poor estimate: halfway
    expect(filterInterval(hint, 1, 1, [1], [1.2], 1e-8)!.lo).toBeCloseTo(1.2 - 1e-8, 12); // a dropped pair is back in the spectrum
    expect(filterInterval({ next: hint.next }, 1, 1, [1], [], 1e-8)).toBeUndefined();
    expect(filterInterval({ far: hint.far }, 1, 1, [1], [], 1e-8)).toBeUndefined();
    const mirrored = filterInterval({ next: { value: -2, residual: 0.01 }, far: { value: -10, residual: 0.1 } }, -1, -1, [-1], [], 1e-8)!;
    expect(mirrored.lo).toBeCloseTo(1.99, 12);
  });
  it('CopyBound with a start scale: a Lanczos run from a filtered vector carries the filter\'s certificate', () => {
    const plain = new CopyBound(1, 1, 100, 1e-4);
    const scaled = new CopyBound(1, 1, 100, 1e-4, 7);
    const h = [[2]];
    plain.extend(h, 0, 0.5);
    scaled.extend(h, 0, 0.5);
    expect(scaled.logKernel(1) - plain.logKernel(1)).toBeCloseTo(7, 12);
    expect(scaled.logValue(1) - plain.logValue(1)).toBeCloseTo(7, 12);
  });
});

describe('lanczos checkFilter', () => {
  // three identical tridiagonal blocks: every eigenvalue is a triple (as lanczos-multiplicity.test.ts)
  const nb = 120;
  const ri: number[] = [];
  const ci: number[] = [];
  const v: number[] = [];
  for (let b = 0; b < 3; b++) {
    for (let i = 0; i < nb; i++) {
      const r = b * nb + i;
      ri.push(r);
      ci.push(r);
      v.push(2 + 0.5 * Math.sin(i));
      if (i + 1 === nb) continue;
      ri.push(r, r + 1);
      ci.push(r + 1, r);
      v.push(-1, -1);
    }
  }
  const triple = HostOperator.fromCsr(csrFromTriplets(3 * nb, 3 * nb, ri, ci, v));
  // simple eigenvalues, unevenly spaced
  const simple = diagonal(Array.from({ length: 500 }, (_, i) => 1 + i + 0.001 * i * i));

  /** A host space counting the vectors multiDot reads (Gram–Schmidt's share of the work). */
  function counting() {
    const space = new HostVectorSpace();
    let reads = 0;
    const multiDot = space.multiDot.bind(space);
    space.multiDot = (xs, y) => {
      reads += xs.length + 1;
      return multiDot(xs, y);
    };
    return { space, reads: () => reads };
  }

  for (const which of ['smallest', 'largest'] as const) {
    it(`the same values with and without the filter (${which}; triples found, a simple spectrum certified), and less Gram–Schmidt with it`, async () => {
      for (const op of [triple, simple]) {
        const on = counting();
        const off = counting();
        const a = await lanczos(on.space, op, { k: 4, tol: 1e-8, which });
        const b = await lanczos(off.space, op, { k: 4, tol: 1e-8, which, checkFilter: false });
        expect(a.reason).toBe('converged');
        expect(b.reason).toBe('converged');
        for (let i = 0; i < 4; i++) expect(Math.abs(a.values[i]! - b.values[i]!)).toBeLessThan(1e-9 * 5);
        expect(a.residualNorms.every((r) => r <= a.tolerance!.threshold)).toBe(true);
        expect(on.reads()).toBeLessThan(off.reads());
      }
    });
  }
  it('the step cap holds inside the filter: a check cut short reports max-iterations, never a converged claim', async () => {
    const space = new HostVectorSpace();
    const full = await lanczos(space, triple, { k: 4, tol: 1e-8 });
    const main = await lanczos(space, triple, { k: 4, tol: 1e-8, checkMultiplicity: false });
    const cap = main.stats.matvecs + 10; // the main run converges, the check runs out of steps
    expect(full.stats.matvecs).toBeGreaterThan(cap);
    const cut = await lanczos(space, triple, { k: 4, tol: 1e-8, maxIterations: cap });
    expect(cut.reason).toBe('max-iterations');
    expect(cut.detail).toMatch(/multiplicity check/);
    expect(cut.iterations).toBeLessThanOrEqual(cap); // steps (filter steps included); explicit residual products come on top, as on the Lanczos path
  });
  it('rejects a checkFilter that is not a boolean', async () => {
    const space = new HostVectorSpace();
    await expect(lanczos(space, simple, { k: 2, checkFilter: 'yes' as unknown as boolean })).rejects.toThrow(InvalidParameterError);
  });
});
