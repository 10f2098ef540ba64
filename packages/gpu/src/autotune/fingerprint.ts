/**
 * Cache keys of the autotuner: a matrix fingerprint (shape, nnz, a hash of the row-length
 * histogram, occupied diagonals and bandwidth, optionally an FNV-1a hash of the arrays), an
 * adapter key (vendor, architecture, device, description, subgroup size, bounds checks) and a
 * hash of the candidate space (registry kernels and their declared values), so that a new kernel
 * or parameter value invalidates old choices.
 * @module
 */
import type { CsrMatrix, RowLengthStats } from '@gpusparse/formats';
import type { GpuContext } from '../device/context';
import type { AnySpmvKernel } from '../kernels/types';

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/**
 * FNV-1a (32 bit) over the bytes of `data`, continuing from `h`. Cost: O(bytes).
 * @example fnv1a(new Uint8Array([97])) // 0xe40c292c ('a')
 */
export function fnv1a(data: Uint8Array, h = FNV_OFFSET): number {
  let x = h >>> 0;
  for (let i = 0; i < data.length; i++) {
    x ^= data[i]!;
    x = Math.imul(x, FNV_PRIME) >>> 0;
  }
  return x >>> 0;
}

/** FNV-1a of a string (UTF-16 code units, low byte then high byte). O(length). @example fnv1aString('csr') */
export function fnv1aString(s: string, h = FNV_OFFSET): number {
  let x = h >>> 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    x = Math.imul(x ^ (c & 0xff), FNV_PRIME) >>> 0;
    x = Math.imul(x ^ (c >>> 8), FNV_PRIME) >>> 0;
  }
  return x >>> 0;
}

const bytesOf = (a: ArrayBufferView): Uint8Array => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
const hex = (h: number): string => h.toString(16).padStart(8, '0');

/** (length, rows) pairs of the row-length histogram, ascending length, from the row pointers. O(rows). */
function rowLengthPairs(a: CsrMatrix): [number, number][] {
  const counts = new Map<number, number>();
  for (let i = 0; i < a.rows; i++) {
    const len = a.rowPtr[i + 1]! - a.rowPtr[i]!;
    counts.set(len, (counts.get(len) ?? 0) + 1);
  }
  return [...counts.entries()].sort((p, q) => p[0] - q[0]);
}

/** The same pairs from a histogram indexed by length (the device statistics'). O(bins). */
function histogramPairs(h: Uint32Array): [number, number][] {
  const out: [number, number][] = [];
  for (let len = 0; len < h.length; len++) if (h[len]) out.push([len, h[len]!]);
  return out;
}

/** What {@link matrixFingerprint} returns: the parts and their joined key. */
export interface MatrixFingerprint {
  readonly rows: number;
  readonly cols: number;
  readonly nnz: number;
  /** FNV-1a over the (length, count) pairs of the row-length histogram, ascending length. */
  readonly histogram: string;
  readonly occupiedDiagonals: number;
  readonly bandwidth: number;
  /** FNV-1a over rowPtr, colIdx and values (float64 bytes) when content hashing was asked for. */
  readonly content?: string;
  /** All of the above in one string. */
  readonly key: string;
}

/**
 * Fingerprint of a CSR matrix for the tuning cache. Without `content` two matrices with the
 * same shape, row-length histogram, diagonal count and bandwidth share a key (the tuning choice
 * depends on the structure, not on the values); with `content` any change of an index or value
 * changes it. Cost: O(rows) (histogram; O(max row) when `opts.histogram` is the device one; the statistics are passed in), plus O(bytes of the
 * arrays) with `content`.
 * @example matrixFingerprint(a, rowLengthStats(a), { content: true }).key
 */
export function matrixFingerprint(a: CsrMatrix, stats: RowLengthStats, opts: { content?: boolean; histogram?: Uint32Array } = {}): MatrixFingerprint {
  const pairs = opts.histogram ? histogramPairs(opts.histogram) : rowLengthPairs(a);
  const flat = new Float64Array(pairs.length * 2);
  pairs.forEach(([len, c], k) => {
    flat[2 * k] = len;
    flat[2 * k + 1] = c;
  });
  const histogram = hex(fnv1a(bytesOf(flat)));
  let content: string | undefined;
  if (opts.content) {
    let h = fnv1a(bytesOf(a.rowPtr.subarray(0, a.rows + 1)));
    h = fnv1a(bytesOf(a.colIdx.subarray(0, stats.nnz)), h);
    h = fnv1a(bytesOf(a.values.subarray(0, stats.nnz)), h);
    content = hex(h);
  }
  const parts = [`${a.rows}x${a.cols}`, `nnz${stats.nnz}`, `h${histogram}`, `d${stats.occupiedDiagonals}`, `b${stats.bandwidth}`];
  if (content) parts.push(`c${content}`);
  return { rows: a.rows, cols: a.cols, nnz: stats.nnz, histogram, occupiedDiagonals: stats.occupiedDiagonals, bandwidth: stats.bandwidth, content, key: parts.join(':') };
}

/**
 * The adapter part of a cache key: vendor, architecture, device, description (Dawn puts the
 * driver there), subgroup size and whether bounds checks are off. O(1).
 * @example adapterKey(ctx) // 'nvidia|hopper|…|sg32|safe'
 */
export function adapterKey(ctx: GpuContext): string {
  const a = ctx.adapterInfo;
  return [a.vendor, a.architecture, a.device, a.description, `sg${ctx.caps.subgroupSize}`, ctx.caps.unsafe ? 'unsafe' : 'safe'].join('|');
}

/**
 * Hash of a candidate space: kernel ids with their declared parameter values. A kernel added
 * to the registry, or a value added to a parameter, changes it (old cache entries then miss).
 * O(kernels · params).
 * @example candidateSpaceHash(kernels)
 */
export function candidateSpaceHash(ks: readonly AnySpmvKernel[]): string {
  let h = FNV_OFFSET;
  for (const k of ks) {
    h = fnv1aString(k.id, h);
    for (const [name, spec] of Object.entries(k.params as Record<string, { values: readonly number[] }>)) h = fnv1aString(`${name}=${spec.values.join(',')};`, h);
  }
  return hex(h);
}

/** Part of every cache key; bump it when candidate generation or the objective changes meaning. */
export const TUNER_VERSION = 4; // 4: tunedOperator decides by the build cost left (0: spent); 3: csr-vec4 preparation as a conversion, csr-balanced on power-law rows only
