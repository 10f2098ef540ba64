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
  // per string: keys target·2^21 + position, sorted numerically (targets are distinct)
  const SHIFT = 2097152;
  let keys = new Float64Array(256);
  for (let str = 0; str < count; str++) {
    const s0 = s.sOff[str]!;
    const ns = s.sOff[str + 1]! - s0;
    const d0 = s.dOff[str]!;
    const m = 1 + ns + s.dOff[str + 1]! - d0;
    if (m > SHIFT) throw new RangeError(`string ${str}: ${m} connections exceed ${SHIFT}`);
    if (m > keys.length) keys = new Float64Array(2 * m);
    keys[0] = str * SHIFT;
    for (let k = 0; k < ns; k++) keys[1 + k] = s.sTarget[s0 + k]! * SHIFT + 1 + k;
    for (let k = 1 + ns; k < m; k++) keys[k] = s.dTarget[d0 + k - 1 - ns]! * SHIFT + k;
    const order = keys.subarray(0, m).sort();
    for (let j = 0; j < m; j++) {
      const t = Math.floor(order[j]! / SHIFT);
      const k = order[j]! - t * SHIFT;
      const kind = k === 0 ? 0 : k <= ns ? 1 : 2;
      const e = kind === 0 ? -1 : kind === 1 ? s0 + k - 1 : d0 + k - 1 - ns;
      cTarget[w] = t;
      cKind[w] = kind;
      cRef[w++] = e;
      if (kind !== 2) {
        lTarget[wl] = t;
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
