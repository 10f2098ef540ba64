/**
 * Lanczos's optional basis block (eigen/lanczos-step BasisBlock; the WebGPU space's
 * `lanczosBlock`), on the host: a space that offers a block built from its own operations gives
 * the answers of the same space without it, the block is disposed at the end, a space whose
 * block is refused falls back to the per-vector steps, and a block whose history is bad ends the
 * run as non-finite (no silent answer).
 */
import { generators, HostOperator, HostVectorSpace } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { lanczos } from '../src/index';

type V = Float64Array;

/** A host block: the same CGS2 (h1 = Qᵀw, w ← Qh1 − w, h2 = Qᵀw, w ← Qh2 − w, next = w/‖w‖) on arrays. */
class HostBlock {
  readonly hist: number[][] = [];
  steps = 0;
  /** Steps recorded while a read was in flight (between a read call and its result). */
  overlapped = 0;
  private reading = false;
  combines = 0;
  disposed = false;
  poison = false;
  constructor(
    private readonly s: HostVectorSpace,
    readonly capacity: number,
    readonly rows: number,
  ) {}
  step(basis: readonly V[], w: V, next: V, row: number): void {
    expect(basis.length + 1).toBeLessThanOrEqual(this.capacity);
    expect(row).toBeLessThan(this.rows);
    const s = this.s;
    const h1 = basis.map((q) => s.dot(q, w).value);
    s.combine(h1, basis, -1, w);
    const h2 = basis.map((q) => s.dot(q, w).value);
    s.combine(h2, basis, -1, w);
    const beta = Math.sqrt(s.dot(w, w).value);
    s.axpby(1 / beta, w, 0, next);
    this.hist[row] = [...h1, ...h2, this.poison ? Number.NaN : beta];
    this.steps++;
    if (this.reading) this.overlapped++;
  }
  /** The rows as they are at the call (the device copies them then), delivered a macrotask later (a readback). */
  read(widths: readonly number[]): Promise<number[][]> {
    const rows = widths.map((m, r) => {
      expect(this.hist[r]!.length).toBe(2 * m + 1);
      return this.hist[r]!;
    });
    this.reading = true;
    return new Promise((resolve) => setTimeout(() => {
      this.reading = false;
      resolve(rows);
    }, 0));
  }
  combineColumns(basis: readonly V[], coeffs: readonly (readonly number[])[], make: (n: number) => V): V[] {
    this.combines++;
    return coeffs.map((c) => {
      const y = make(basis[0]!.length);
      this.s.combine([...c], basis.slice(0, c.length), 0, y);
      return y;
    });
  }
  dispose(): void {
    this.disposed = true;
  }
}

/** A host space that offers the block (or refuses it: `refuse`). */
class BlockSpace extends HostVectorSpace {
  blocks: HostBlock[] = [];
  asked = 0;
  constructor(
    private readonly refuse = false,
    private readonly poison = false,
  ) {
    super();
  }
  lanczosBlock(n: number, capacity: number, rows: number): HostBlock | undefined {
    this.asked++;
    expect(n).toBeGreaterThan(0);
    if (this.refuse) return undefined;
    const b = new HostBlock(this, capacity, rows);
    b.poison = this.poison;
    this.blocks.push(b);
    return b;
  }
}

const a = generators.poisson2d(16, 17); // simple lowest eigenvalues
const op = HostOperator.fromCsr(a);
const opts = { k: 4, tol: 1e-8, checkEvery: 8, orthogonalization: 'cgs2' as const, recordAhead: false };

describe('Lanczos with a basis block offered by the space', () => {
  it('the answers of the per-vector steps, every product through the block, restarts from it, disposed at the end', async () => {
    const plain = await lanczos(new HostVectorSpace(), op, opts);
    const space = new BlockSpace();
    const r = await lanczos(space, op, opts);
    expect(r.reason, r.detail).toBe('converged');
    expect(plain.reason).toBe('converged');
    expect(r.stats.matvecs).toBe(plain.stats.matvecs);
    r.values.forEach((v, i) => {
      expect(Math.abs(v - plain.values[i]!)).toBeLessThanOrEqual(1e-12);
    });
    expect(space.blocks.length).toBe(1); // one block for the whole call (multiplicity runs included)
    const b = space.blocks[0]!;
    expect(b.steps).toBe(r.iterations);
    expect(b.combines).toBeGreaterThan(0);
    expect(b.disposed).toBe(true);
  });

  it('record ahead (the default): the next steps recorded while a read is in flight; the same answers, a few discarded products', async () => {
    // basis 40 (eigsMixed's fast default): 18 steps between restarts, batches of 8, 8, 2; no step crosses a restart
    const wide = { ...opts, maxBasis: 40 };
    const plain = await lanczos(new HostVectorSpace(), op, wide);
    const space = new BlockSpace();
    const r = await lanczos(space, op, { ...wide, recordAhead: true });
    expect(r.reason, r.detail).toBe('converged');
    r.values.forEach((v, i) => {
      expect(Math.abs(v - plain.values[i]!)).toBeLessThanOrEqual(1e-12);
    });
    const b = space.blocks[0]!;
    expect(b.overlapped).toBeGreaterThan(r.iterations / 4); // 7 of each 18 steps recorded during a readback
    // each run (the main one and the multiplicity checks) discards at most checkEvery − 1 steps recorded ahead
    expect(r.stats.matvecs).toBeGreaterThanOrEqual(plain.stats.matvecs);
    expect(r.stats.matvecs).toBeLessThanOrEqual(plain.stats.matvecs + 5 * 7);
    expect(b.disposed).toBe(true);
    const off = new BlockSpace();
    await lanczos(off, op, wide);
    expect(off.blocks[0]!.overlapped).toBe(0); // recordAhead false: host and device take turns
  });

  it('a refused block: asked twice (the size of the call, then the least that fits), never again; the per-vector steps, the same answers', async () => {
    const plain = await lanczos(new HostVectorSpace(), op, opts);
    const space = new BlockSpace(true);
    const r = await lanczos(space, op, opts);
    expect(space.asked).toBe(2); // the run's size, then the smallest that fits; never again
    expect(r.values).toEqual(plain.values);
  });

  it('a non-finite history ends the run as non-finite (no answer from it)', async () => {
    const space = new BlockSpace(false, true);
    const r = await lanczos(space, op, opts);
    expect(r.reason).toBe('non-finite');
    expect(r.converged).toBe(false);
    expect(space.blocks[0]!.disposed).toBe(true);
  });
});
