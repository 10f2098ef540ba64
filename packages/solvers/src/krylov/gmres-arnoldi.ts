/**
 * The Arnoldi step of GMRES(m) ({@link gmres} in ./gmres): the product w = A·M⁻¹·v_j and its
 * orthogonalisation into v_{j+1} ('cgs2', 'cgs', 'mgs', 'icgs', or the basis block), the
 * Hessenberg column left pending for the cycle's next batch read. Split from gmres-cycles.ts (no
 * logic change: the same arithmetic, order of operations, readbacks and dispatches).
 * @module
 */
import type { VectorSpace } from '@gpusparse/formats';
import type { SolveContext } from '../common/context';
import { IcgsBasis } from '../common/icgs';
import { combineNormalize } from './fused-update';
import type { ArnoldiBlock } from './gmres-block';
import type { PendingColumn } from './gmres-reads';

/** The orthogonalisation of {@link GmresOptions.orthogonalization}. */
export type Ortho = 'cgs2' | 'cgs' | 'mgs' | 'icgs';

/**
 * The basis V of one solve and its Arnoldi steps. The caller counts the iterations and owns
 * the pending list the steps push their Hessenberg columns on.
 */
export class ArnoldiSteps<V, S> {
  private readonly space: VectorSpace<V, S>;
  private readonly n: number;
  private readonly hasM: boolean;
  private readonly icgs: IcgsBasis<V, S>;

  constructor(
    private readonly ctx: SolveContext<V, S>,
    readonly V: V[],
    private readonly w: V,
    private readonly z: V,
    readonly ortho: Ortho,
    private readonly block: ArnoldiBlock<V> | undefined,
  ) {
    this.space = ctx.space;
    this.n = ctx.n;
    this.hasM = ctx.opts.preconditioner !== undefined;
    this.icgs = new IcgsBasis(ctx.space, undefined, () => ctx.stats.readbacks++);
  }

  /** v_i, created at first use. */
  basis(i: number): V {
    return this.V[i] ?? (this.V[i] = this.space.create(this.n));
  }

  /** Step j with 'icgs': it reads its scalars every step, so it waits (one await, as before the split). */
  async icgsStep(j: number, pending: PendingColumn<S>[]): Promise<void> {
    const vs = this.product(j);
    if (j === 0) this.icgs.reset(); // v₀ alone is orthonormal
    const st = await this.icgs.step(vs, this.w); // sign·w ⟂ V: one pass, two when the loss bound says so
    this.space.axpby(st.sign / st.norm, this.w, 0, this.basis(j + 1)); // v_{j+1} = w' / h_{j+1,j}
    const col = [...st.h, st.norm];
    pending.push({ s: [], col: () => col });
  }

  /** w = A·M⁻¹·v_j; returns v_0 … v_j. */
  product(j: number): V[] {
    const { ctx, w, z } = this;
    const vj = this.basis(j);
    if (this.hasM) {
      ctx.precond(vj, z); // z = M⁻¹·v_j
      ctx.matvec(z, w); // w = A·z
    } else ctx.matvec(vj, w); // w = A·v_j
    return this.V.slice(0, j + 1);
  }

  /** The Gram–Schmidt passes of step j other than 'icgs' (no readback, no await): v_{j+1} and the pending column. */
  orthogonalize(j: number, vs: V[], pending: PendingColumn<S>[]): void {
    const { space, w, block } = this;
    // Signs are folded into the passes (combine with β = −1 flips w) so that no scalar op is
    // recorded per coefficient; the Hessenberg column is assembled on the host after the read.
    if (this.ortho === 'cgs2') {
      const h = space.multiDot(vs, w); // h = Vᵀ·w
      space.combine(h, vs, -1, w); // w' = V·h − w = −(w − V·h)
      const h2 = space.multiDot(vs, w); // h₂' = Vᵀ·w' = −h₂ (re-orthogonalisation)
      space.combine(h2, vs, -1, w); // w = V·h₂' − w' = w − V·h − V·h₂
      const hn = space.norm2(w); // h_{j+1,j} = ‖w‖
      const inv = space.div(1, hn);
      space.axpby(inv, w, 0, this.basis(j + 1)); // v_{j+1} = w / h_{j+1,j}
      space.release(inv);
      pending.push({ s: [...h, ...h2, hn], col: (v) => [...v.slice(0, j + 1).map((hi, i) => hi - v[j + 1 + i]!), v[2 * j + 2]!] });
    } else if (block) {
      block.step(j + 1, w, this.basis(j + 1), j); // w' = V·h − w, v_{j+1} = w'/‖w'‖ = −(true v_{j+1})
      pending.push({ s: [], row: j, col: (v) => [...v.slice(0, j + 1), -v[j + 1]!] });
    } else if (this.ortho === 'cgs') {
      const h = space.multiDot(vs, w); // h = Vᵀ·w
      // w' = V·h − w = −(w − V·h); h_{j+1,j} = ‖w'‖; v_{j+1} = −w'/h_{j+1,j} (two passes where the space fuses them)
      const hn = combineNormalize(space, h, vs, -1, w, this.basis(j + 1), -1);
      pending.push({ s: [...h, hn], col: (v) => v });
    } else this.mgsStep(j, pending);
  }

  /** Modified Gram–Schmidt for step j: 2·(j+1) dependent passes. */
  private mgsStep(j: number, pending: PendingColumn<S>[]): void {
    const { space, V, w } = this;
    const h: S[] = [];
    const signs: number[] = [];
    let sigma = 1; // w holds σ·w_true
    for (let i = 0; i <= j; i++) {
      const hij = space.dot(V[i]!, w); // σ·h_ij = ⟨v_i, σ·w⟩
      space.axpby(hij, V[i]!, -1, w); // σ·w ← −σ·(w − h_ij·v_i)
      h.push(hij);
      signs.push(sigma);
      sigma = -sigma;
    }
    const hn = space.norm2(w); // h_{j+1,j} = ‖w‖
    const inv = space.div(sigma, hn);
    space.axpby(inv, w, 0, this.basis(j + 1)); // v_{j+1} = w / h_{j+1,j}
    space.release(inv);
    pending.push({ s: [...h, hn], col: (v) => v.map((hi, i) => (i <= j ? signs[i]! * hi : hi)) });
  }
}
