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
  }
  async read(widths: readonly number[]): Promise<number[][]> {
    return widths.map((m, r) => {
      expect(this.hist[r]!.length).toBe(2 * m + 1);
      return this.hist[r]!;
    });
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
const opts = { k: 4, tol: 1e-8, checkEvery: 8, orthogonalization: 'cgs2' as const };

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
