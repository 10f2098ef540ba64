import { type CsrMatrix, csrSpmv, generators as g, HostOperator, HostVectorSpace, InvalidParameterError, WasmVectorSpace } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { CHUNK_BYTES, IcgsBasis } from '../src/common/icgs';
import { gmres, lanczos } from '../src/index';

const space = new HostVectorSpace();

function rand(n: number, seed: number): Float64Array {
  let s = seed >>> 0;
  return Float64Array.from({ length: n }, () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return (s / 2 ** 32) * 2 - 1;
  });
}
const dot = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
};
const nrm = (a: ArrayLike<number>) => Math.sqrt(dot(a, a));

/** A HostVectorSpace that counts its combine calls (one vector pass each). */
function countingSpace(): { counting: HostVectorSpace; counts: { combine: number } } {
  const counts = { combine: 0 };
  class Counting extends HostVectorSpace {
    override combine(...args: Parameters<HostVectorSpace['combine']>): void {
      counts.combine++;
      super.combine(...args);
    }
  }
  return { counting: new Counting(), counts };
}

/** An orthonormal basis of k random vectors (modified Gram–Schmidt twice, plain float64). */
function basis(n: number, k: number): Float64Array[] {
  const q: Float64Array[] = [];
  for (let j = 0; j < k; j++) {
    const v = rand(n, 100 + j);
    for (let pass = 0; pass < 2; pass++) for (const u of q) { const c = dot(u, v); for (let i = 0; i < n; i++) v[i]! -= c * u[i]!; }
    const s = nrm(v);
    q.push(v.map((x) => x / s));
  }
  return q;
}
/** max |qᵢᵀw| / ‖w‖. */
const lossOf = (q: Float64Array[], w: ArrayLike<number>) => Math.max(...q.map((u) => Math.abs(dot(u, w)))) / nrm(w);

describe('IcgsBasis (one Gram–Schmidt pass, a second when the loss bound passes √u)', () => {
  const n = 400;
  it('a well-separated w: one pass; h, ‖w‖ and sign·w match plain float64 projection', async () => {
    const q = basis(n, 6);
    const w0 = rand(n, 7);
    const w = Float64Array.from(w0);
    const ortho = new IcgsBasis(space);
    const st = await ortho.step(q, w);
    expect(st.twice).toBe(false);
    const h = q.map((u) => dot(u, w0));
    const want = Float64Array.from(w0);
    q.forEach((u, j) => { for (let i = 0; i < n; i++) want[i]! -= h[j]! * u[i]!; });
    for (let j = 0; j < h.length; j++) expect(Math.abs(st.h[j]! - h[j]!)).toBeLessThanOrEqual(1e-14 * nrm(w0));
    expect(Math.abs(st.norm - nrm(want))).toBeLessThanOrEqual(1e-13 * nrm(w0));
    expect(st.norm0).toBeCloseTo(nrm(w0), 12);
    for (let i = 0; i < n; i++) expect(Math.abs(st.sign * w[i]! - want[i]!)).toBeLessThanOrEqual(1e-13);
    expect(lossOf(q, w)).toBeLessThan(1e-14);
  });

  it('a nearly dependent w (norm drop 10^9): the second pass fires and keeps orthogonality that one pass loses', async () => {
    const q = basis(n, 6);
    const w0 = Float64Array.from(q[2]!, (x, i) => x + 1e-9 * rand(n, 9)[i]!);
    const once = Float64Array.from(w0);
    await new IcgsBasis(space, Number.POSITIVE_INFINITY).step(q, once); // never twice: classical GS once
    const w = Float64Array.from(w0);
    const ortho = new IcgsBasis(space);
    const st = await ortho.step(q, w);
    expect(st.twice).toBe(true);
    expect(ortho.reorthogonalized).toBe(1);
    expect(lossOf(q, once)).toBeGreaterThan(1e-9); // what the test guards against
    expect(lossOf(q, w)).toBeLessThan(1e-14);
    expect(st.h[2]).toBeCloseTo(1, 8); // h sums both passes
    expect(st.sign).toBe(1);
  });

  it('the bound compounds the norm drops of successive steps and fires before the measured loss passes √u', async () => {
    const q = basis(n, 1);
    const ortho = new IcgsBasis(space);
    let firstTwice = -1;
    for (let j = 0; j < 30 && firstTwice < 0; j++) {
      const r = rand(n, 50 + j);
      const rn = nrm(r);
      const w = Float64Array.from(q[j]!, (x, i) => 3 * x + (0.4 * r[i]!) / rn); // norm drop ≈ 7.6 per step
      const st = await ortho.step(q, w);
      if (st.twice) firstTwice = j;
      else expect(ortho.loss).toBeLessThanOrEqual(ortho.tol);
      q.push(w.map((x) => (st.sign * x) / st.norm));
    }
    expect(firstTwice).toBeGreaterThan(3);
    expect(firstTwice).toBeLessThan(30);
    // each w leans on the newest vector, so the loss really compounds (the bound is not idle
    // pessimism here): measured, the basis is semi-orthogonal — lost, but below √u
    const measured = await ortho.remeasure(q);
    expect(measured).toBeGreaterThan(1e-12);
    expect(measured).toBeLessThanOrEqual(ortho.tol);
    expect(ortho.loss).toBe(measured);
    // a basis with a real defect is measured as such
    const bad = basis(n, 3);
    bad[1] = bad[1]!.map((x, i) => x + 1e-6 * bad[0]![i]!);
    expect(await ortho.remeasure(bad)).toBeCloseTo(1e-6, 8);
  });
});

describe('IcgsBasis in cache-sized chunks of basis vectors (host spaces, a basis above chunkBytes)', () => {
  // 10 basis vectors of 3 000 rows (240 kB) against chunkBytes 48 kB: chunks of 4, 4 and 2 vectors
  const n = 3000;
  const wasm = WasmVectorSpace.create({ threads: 1 });
  const spaces: [string, HostVectorSpace][] = [['HostVectorSpace', space], ...(wasm ? [['WasmVectorSpace', wasm] as [string, HostVectorSpace]] : [])];
  for (const [name, sp] of spaces) {
    it(`${name}: one pass and the second give the same bits, h and norms as the unchunked pass; the copy of w is released`, async () => {
      const q = basis(n, 10).map((v) => sp.fromArray(v));
      const run = async (chunkBytes: number, w0: Float64Array) => {
        const w = sp.fromArray(w0);
        const ortho = new IcgsBasis(sp, undefined, undefined, chunkBytes);
        const combine = sp.combine;
        let combines = 0;
        sp.combine = (...args: Parameters<HostVectorSpace['combine']>) => {
          combines++;
          combine.apply(sp, args);
        };
        // the wasm space's last combine of a pass also returns ‖w‖ (combineNorm): counted as a combine
        const fused = sp as unknown as { combineNorm?: (...a: unknown[]) => unknown };
        const combineNorm = fused.combineNorm;
        if (combineNorm) {
          fused.combineNorm = (...args: unknown[]) => {
            combines++;
            sp.combine = combine; // its fallback may call combine: not a second count
            try {
              return combineNorm.apply(sp, args);
            } finally {
              sp.combine = (...a: Parameters<HostVectorSpace['combine']>) => {
                combines++;
                combine.apply(sp, a);
              };
            }
          };
        }
        const st = await ortho.step(q, w).finally(() => {
          sp.combine = combine;
          if (combineNorm) fused.combineNorm = combineNorm;
        });
        const out = { st, combines, w: Float64Array.from(await sp.toArray(w)) };
        sp.release(w);
        return out;
      };
      const plain = rand(n, 7);
      const nearly = Float64Array.from(await sp.toArray(q[5]!), (x, i) => x + 1e-9 * plain[i]!); // the second pass fires
      for (const w0 of [plain, nearly]) {
        const whole = await run(Number.POSITIVE_INFINITY, w0);
        const before = wasm && sp === wasm ? wasm.heap.usedBytes : undefined;
        const chunked = await run(48_000, w0);
        expect(chunked.st.twice).toBe(w0 === nearly);
        expect([whole.combines, chunked.combines]).toEqual(w0 === nearly ? [2, 6] : [1, 3]); // chunks of 4, 4 and 2 per pass
        expect(chunked.st).toEqual(whole.st);
        expect(Array.from(chunked.w)).toEqual(Array.from(whole.w));
        if (before !== undefined) expect(wasm!.heap.usedBytes).toBe(before);
      }
      expect(lossOf(await Promise.all(q.map((v) => sp.toArray(v))), (await run(48_000, plain)).w)).toBeLessThan(1e-14);
      for (const v of q) sp.release(v);
    });
  }
  it('host spaces chunk above CHUNK_BYTES by default, other spaces never (their combines run on a device)', () => {
    expect(CHUNK_BYTES).toBe(8 * 2 ** 20);
    const chunkOf = (o: IcgsBasis<unknown, unknown>) => (o as unknown as { chunkBytes: number }).chunkBytes;
    expect(chunkOf(new IcgsBasis(space) as IcgsBasis<unknown, unknown>)).toBe(CHUNK_BYTES);
    const device = Object.assign(Object.create(space), { name: 'webgpu-f32', precision: 'f32' }) as HostVectorSpace;
    expect(chunkOf(new IcgsBasis(device) as IcgsBasis<unknown, unknown>)).toBe(Number.POSITIVE_INFINITY);
  });
});

/** Non-symmetric, diagonally dominant (each GMRES step's norm drop is ≈ 3). */
function dominant(n: number): CsrMatrix {
  const a = g.uniformRandom(n, n, 8, 5);
  const rowPtr = new Int32Array(n + 1);
  const cols: number[] = [];
  const vals: number[] = [];
  for (let i = 0; i < n; i++) {
    let s = 1;
    for (let p = a.rowPtr[i]!; p < a.rowPtr[i + 1]!; p++) {
      if (a.colIdx[p] === i) continue;
      cols.push(a.colIdx[p]!);
      vals.push(a.values[p]!);
      s += Math.abs(a.values[p]!);
    }
    cols.push(i);
    vals.push(s);
    rowPtr[i + 1] = cols.length;
  }
  return { ...a, rowPtr, colIdx: Int32Array.from(cols), values: Float64Array.from(vals) };
}

describe("gmres 'icgs' and lanczos on host spaces", () => {
  it("gmres: 'icgs' is the host default, agrees with 'cgs2', and re-orthogonalises only some steps", async () => {
    const a = dominant(3000);
    const b = csrSpmv(a, new Float64Array(a.cols).fill(1), new Float64Array(a.rows));
    const op = HostOperator.fromCsr(a);
    const counting = new HostVectorSpace();
    let dots = 0;
    const md = counting.multiDot.bind(counting);
    counting.multiDot = (xs, y) => { dots++; return md(xs, y); };
    const def = await gmres(counting, op, counting.fromArray(b), { rtol: 1e-10, restart: 30, maxIterations: 300 });
    const defDots = dots;
    dots = 0;
    const icgs = await gmres(counting, op, counting.fromArray(b), { rtol: 1e-10, restart: 30, orthogonalization: 'icgs' });
    expect(dots).toBe(defDots);
    expect(Array.from(icgs.x)).toEqual(Array.from(def.x));
    const cgs2 = await gmres(space, op, space.fromArray(b), { rtol: 1e-10, restart: 30, orthogonalization: 'cgs2' });
    expect(icgs.reason).toBe('converged');
    expect(Math.abs(icgs.iterations - cgs2.iterations)).toBeLessThanOrEqual(1);
    for (let i = 0; i < 3000; i++) expect(Math.abs(icgs.x[i]! - 1)).toBeLessThan(1e-8);
    // one multiDot per step, plus one per re-orthogonalised step: some, not all
    expect(dots).toBeGreaterThan(icgs.iterations);
    expect(dots).toBeLessThan(2 * icgs.iterations);
    await expect(gmres(space, op, space.fromArray(b), { orthogonalization: 'twice' as 'icgs' })).rejects.toThrow(InvalidParameterError);
    await expect(gmres(space, op, space.fromArray(b), { orthogonalization: 'twice' as 'icgs' })).rejects.toThrow(/'icgs'/);
  });

  it("lanczos: the one-pass path (orthogonalization 'icgs', checkEvery 1) finds the eigenpairs of the batched CGS2 path", async () => {
    const a = g.poisson2d(30);
    const op = HostOperator.fromCsr(a);
    const one = await lanczos(space, op, { k: 4, tol: 1e-10, checkMultiplicity: false, orthogonalization: 'icgs', keep: 12 }); // the batched path's restart (half the basis)
    const two = await lanczos(space, op, { k: 4, tol: 1e-10, checkMultiplicity: false, checkEvery: 2 });
    expect(one.converged && two.converged).toBe(true);
    for (let i = 0; i < 4; i++) expect(Math.abs(one.values[i]! - two.values[i]!)).toBeLessThan(1e-9);
    expect(Math.abs(one.stats.matvecs - two.stats.matvecs)).toBeLessThanOrEqual(8);
    for (let j = 0; j < 4; j++) {
      const v = one.vectors[j]!;
      const av = csrSpmv(a, v, new Float64Array(a.rows));
      expect(nrm(av.map((x, i) => x - one.values[j]! * v[i]!))).toBeLessThan(1e-9 * 8);
    }
  });

  it("lanczos: the one-pass path is the float64 host default and reaches tol 1e-10 on a 1-D Laplacian of 40 points (a √u loss bound stalled there); a bad orthogonalization is refused", async () => {
    const op = HostOperator.fromCsr(g.laplacian1d(40));
    const exact = [1, 2, 3].map((j) => 2 - 2 * Math.cos((j * Math.PI) / 41));
    const { counting, counts } = countingSpace();
    const def = await lanczos(counting, op, { k: 3, which: 'smallest', tol: 1e-10 });
    const combinesDefault = counts.combine;
    counts.combine = 0;
    const cgs2 = await lanczos(counting, op, { k: 3, which: 'smallest', tol: 1e-10, orthogonalization: 'cgs2' });
    expect(def.converged && cgs2.converged).toBe(true);
    for (let i = 0; i < 3; i++) expect(Math.abs(def.values[i]! - exact[i]!)).toBeLessThan(1e-12);
    for (let j = 0; j < 3; j++) {
      const v = def.vectors[j]!;
      const av = csrSpmv(g.laplacian1d(40), v, new Float64Array(40));
      expect(nrm(av.map((x, i) => x - def.values[j]! * v[i]!))).toBeLessThan(1e-10 * 4);
    }
    expect(combinesDefault).toBeLessThan(counts.combine); // fewer vector passes than CGS2
    await expect(lanczos(space, op, { k: 3, orthogonalization: 'mgs' as 'cgs2' })).rejects.toThrow(/orthogonalization/);
  });

  it('lanczos default keep (k + 1 + nearly converged pairs) takes fewer products and vector passes than keeping half the basis on a 2-D Poisson grid', async () => {
    const op = HostOperator.fromCsr(g.poisson2d(40));
    const { counting, counts } = countingSpace();
    const def = await lanczos(counting, op, { k: 4, tol: 1e-8, checkMultiplicity: false });
    const defCombines = counts.combine;
    counts.combine = 0;
    const half = await lanczos(counting, op, { k: 4, tol: 1e-8, checkMultiplicity: false, keep: 12 });
    expect(def.converged && half.converged).toBe(true);
    for (let i = 0; i < 4; i++) expect(Math.abs(def.values[i]! - half.values[i]!)).toBeLessThan(1e-7 * 8);
    expect(def.stats.matvecs).toBeLessThan(half.stats.matvecs);
    expect(defCombines).toBeLessThan(counts.combine);
  });

  it('lanczos keep: fewer kept Ritz vectors mean fewer restart combines, the same eigenpairs; out-of-range keep is refused', async () => {
    const a = g.poisson2d(30);
    const op = HostOperator.fromCsr(a);
    const { counting, counts } = countingSpace();
    const runs = [];
    for (const keep of [5, 12]) {
      counts.combine = 0;
      const r = await lanczos(counting, op, { k: 4, tol: 1e-9, checkMultiplicity: false, keep });
      expect(r.converged).toBe(true);
      runs.push({ r, perProduct: counts.combine / r.stats.matvecs });
    }
    for (let i = 0; i < 4; i++) expect(Math.abs(runs[0]!.r.values[i]! - runs[1]!.r.values[i]!)).toBeLessThan(1e-8);
    expect(runs[0]!.perProduct).toBeLessThan(runs[1]!.perProduct);
    await expect(lanczos(space, op, { k: 4, keep: 3 })).rejects.toThrow(InvalidParameterError);
    await expect(lanczos(space, op, { k: 4, maxBasis: 20, keep: 20 })).rejects.toThrow(/keep/);
  });
});
