/**
 * Inputs of the string-driven kernel (./product-kernel.ts): a dense (alpha, beta) → index
 * table instead of the determinant hash, and per-string connection lists sorted by target
 * string (identity, singles, same-spin doubles; and identity + singles alone).
 * @module
 */
import type { DeterminantSpace } from '../determinants/space';
import type { KernelContext, KernelSpin } from './kernel';
import type { ProductContext, ProductSpin } from './product-kernel';

/** Largest dense table accepted: 2^27 entries (512 MiB of int32). */
const MAX_TABLE = 2 ** 27;

function connections(s: KernelSpin, count: number, norb: number): ProductSpin {
  const cOff = new Int32Array(count + 1);
  const lOff = new Int32Array(count + 1);
  const total = count + s.sTarget.length + s.dTarget.length;
  const cTarget = new Int32Array(total);
  const cKind = new Int32Array(total);
  const cRef = new Int32Array(total);
  const lTarget = new Int32Array(count + s.sTarget.length);
  const lRef = new Int32Array(count + s.sTarget.length);
  const lPair = new Int32Array(count + s.sTarget.length);
  const lSign = new Float64Array(count + s.sTarget.length);
  let w = 0;
  let wl = 0;
  const order: number[] = [];
  const tgt: number[] = [];
  const kind: number[] = [];
  const ref: number[] = [];
  for (let str = 0; str < count; str++) {
    tgt.length = kind.length = ref.length = order.length = 0;
    tgt.push(str);
    kind.push(0);
    ref.push(-1);
    for (let e = s.sOff[str]!; e < s.sOff[str + 1]!; e++) {
      tgt.push(s.sTarget[e]!);
      kind.push(1);
      ref.push(e);
    }
    for (let e = s.dOff[str]!; e < s.dOff[str + 1]!; e++) {
      tgt.push(s.dTarget[e]!);
      kind.push(2);
      ref.push(e);
    }
    for (let k = 0; k < tgt.length; k++) order.push(k);
    order.sort((x, y) => tgt[x]! - tgt[y]!);
    for (const k of order) {
      cTarget[w] = tgt[k]!;
      cKind[w] = kind[k]!;
      cRef[w++] = ref[k]!;
      if (kind[k]! !== 2) {
        const e = ref[k]!;
        lTarget[wl] = tgt[k]!;
        lPair[wl] = e < 0 ? -1 : s.sTo[e]! * norb + s.sFrom[e]!;
        lSign[wl] = e < 0 ? 0 : s.sSign[e]!;
        lRef[wl++] = e;
      }
    }
    cOff[str + 1] = w;
    lOff[str + 1] = wl;
  }
  return { ...s, cOff, cTarget, cKind, cRef, lOff, lTarget, lRef, lPair, lSign };
}

/**
 * The string-driven kernel's context from the reference kernel's, or undefined when the
 * dense (alpha, beta) table would exceed 2^27 entries or 16 entries per determinant (e.g.
 * truncated CI over many strings: the hash kernel is used then). Cost O(n_α·n_β + size +
 * Σ connections·log).
 * @example
 * const pctx = productContext(kernelContext(fd, space), space);
 */
export function productContext(ctx: KernelContext, space: DeterminantSpace): ProductContext | undefined {
  const nA = space.alpha.count;
  const nB = space.beta.count;
  const cells = nA * nB;
  if (cells > MAX_TABLE || cells > 16 * space.size + 65536) return undefined;
  const pairIndex = new Int32Array(cells).fill(-1);
  let monotone = 1;
  let prev = -1;
  for (let i = 0; i < space.size; i++) {
    const cell = space.detAlpha[i]! * nB + space.detBeta[i]!;
    pairIndex[cell] = i;
    if (cell <= prev) monotone = 0;
    prev = cell;
  }
  const alpha = connections(ctx.alpha, nA, ctx.norb);
  const beta = ctx.beta === ctx.alpha ? alpha : connections(ctx.beta, nB, ctx.norb);
  return {
    norb: ctx.norb,
    eri: ctx.eri,
    jmat: ctx.jmat,
    detAlpha: ctx.detAlpha,
    detBeta: ctx.detBeta,
    nBeta: nB,
    pairIndex,
    monotone,
    dropTolerance: ctx.dropTolerance,
    alpha,
    beta,
  };
}
