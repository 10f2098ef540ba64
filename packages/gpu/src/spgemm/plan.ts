/**
 * A reusable plan for C = A·B with A, B and C in HM or CDM storage on the device (seed 002).
 *
 * `planSpgemm(ctx, A, B)` is the symbolic phase, all of it O(number of diagonals): C's
 * diagonal set and the pair lists ({@link spgemmSymbolic}), C's storage layout (split over
 * buffers where one binding cannot hold it), the dispatch tables (one small u32 array, uploaded
 * once) and C's buffers. `plan.execute(A, B)` is the numeric phase: one gather dispatch per C
 * buffer ({@link gatherWgsl}), recorded without waiting; C stays on the device. A plan is reused
 * for every product of operands with the same structure (time stepping, repeated powers):
 * `execute` checks the structure (O(diagonals)) and records the dispatches again.
 *
 * Operands split over more buffers than one dispatch binds (maxStorageBuffersPerShaderStage)
 * are handled in passes: pass (g, h) binds A's buffer group g and B's group h; a C buffer fed
 * by several passes is written by the first and added to by the others (still one writer per
 * entry per dispatch, no atomics).
 * @module
 */
import { InvalidParameterError, type SymbolicProduct, spgemmSymbolic } from '@gpusparse/formats';
import type { GpuContext } from '../device/context';
import type { PipelineEntry } from '../device/pipelines';
import type { GpuBuf } from '../memory/buffers';
import { uploadU32 } from '../memory/upload';
import { allocateDiagonal, type DeviceDiagonalMatrix, type DiagonalLayout, diagonalLayout, type SplitOptions, splitElems } from './device-diagonal';
import { type GatherShape, gatherWgsl, gatherBindings, JOB_WORDS, PAIR_WORDS } from './gather.kernel';
import { Uniforms } from '../memory/recorder';
import { signature } from '../kernels/wgsl/index';

/** Options of {@link planSpgemm}. */
export interface SpgemmPlanOptions extends SplitOptions {
  /** Invocations per workgroup of the gather kernel. Default 256. */
  readonly workgroupSize?: number;
  /** Refuse when C would have more diagonals than this. Default 2^20. */
  readonly maxDiagonals?: number;
  /** Most A (and B) buffers bound per dispatch; default from maxStorageBuffersPerShaderStage. */
  readonly slotsPerOperand?: number;
}

/** One recorded dispatch of the numeric phase. */
interface Dispatch {
  readonly cq: number;
  readonly aChunks: readonly number[];
  readonly bChunks: readonly number[];
  readonly jobs: number;
  readonly jobBase: number;
  readonly groups: number;
  readonly mode: 0 | 1;
}

/** A planned product: symbolic phase done, numeric phase on call. */
export interface SpgemmPlan {
  readonly symbolic: SymbolicProduct;
  /** C on the device, filled by {@link SpgemmPlan.execute}. */
  readonly c: DeviceDiagonalMatrix;
  /** Dispatches per execute. */
  readonly dispatches: number;
  /** Host milliseconds of the symbolic phase (structure, tables, uploads recorded). */
  readonly planMs: number;
  /** planMs in parts: C's structure and pair lists; layout and tables; table upload, C allocation and pipelines. */
  readonly planParts: { readonly symbolicMs: number; readonly tablesMs: number; readonly uploadMs: number };
  /** Record C = A·B (A, B with the planned structure); returns C. No wait. */
  execute(a: DeviceDiagonalMatrix, b: DeviceDiagonalMatrix): DeviceDiagonalMatrix;
  /** Free C and the tables. */
  dispose(): void;
}

/** Equal element by element (plain loop: no closure per element). O(length). */
function sameArray(p: ArrayLike<number>, q: ArrayLike<number>): boolean {
  if (p.length !== q.length) return false;
  for (let k = 0; k < p.length; k++) if (p[k] !== q[k]) return false;
  return true;
}

/** The same structure and split as planned, or InvalidParameterError naming the difference. O(dg). */
function checkSame(which: 'A' | 'B', planned: DiagonalLayout, got: DiagonalLayout): void {
  if (got === planned) return; // the operand the plan was made from: its layout is read-only
  if (planned.format !== got.format || planned.rows !== got.rows || planned.cols !== got.cols || !sameArray(planned.offsets, got.offsets) || !sameArray(planned.chunk, got.chunk) || !sameArray(planned.start, got.start)) {
    throw new InvalidParameterError(`execute: ${which}`, `the ${planned.format.toUpperCase()} ${planned.rows}x${planned.cols} structure and split the plan was made for (${planned.offsets.length} diagonals)`, `${got.format.toUpperCase()} ${got.rows}x${got.cols} with ${got.offsets.length} diagonals or another split`);
  }
}

/** Split 0 … count−1 into consecutive groups of `size`. */
const groupsOf = (count: number, size: number): number[][] => Array.from({ length: Math.ceil(count / size) }, (_, g) => Array.from({ length: Math.min(size, count - g * size) }, (_, q) => g * size + q));

/** Slot of each chunk inside `group`, −1 outside it. */
function slotsOf(chunks: number, group: readonly number[]): Int32Array {
  const out = new Int32Array(chunks).fill(-1);
  group.forEach((q, k) => {
    out[q] = k;
  });
  return out;
}

/**
 * The table's host staging array, reused by every plan: `writeBuffer` copies it at once, so it
 * is free again when {@link planSpgemm} returns (no fresh, zero-filled array per plan).
 */
let staging = new Uint32Array(1 << 16);
function stagingWords(words: number): Uint32Array {
  return staging.length >= words ? staging : grownStaging(words);
}

/**
 * The staging array grown to the next power of two ≥ `words`. Rare by design: the first array
 * (256 kB) holds the tables of products up to ~16 000 pairs, because the first growth inside the
 * optimised planner deoptimises it (on the H100 host, the 4 096-word array first grew in the
 * middle of a benchmark case and that case planned several times slower; issue 22).
 */
function grownStaging(words: number): Uint32Array {
  staging = new Uint32Array(2 ** Math.ceil(Math.log2(words)));
  return staging;
}

/** Per-diagonal base word of a pair: start + min(k, 0) for HM (a_ij at start + min(i, j)), start for CDM. O(dg). */
function operandBases(m: DiagonalLayout): Int32Array {
  const hm = m.format === 'hm';
  const base = new Int32Array(m.offsets.length);
  for (let d = 0; d < base.length; d++) base[d] = m.start[d]! + (hm ? Math.min(m.offsets[d]!, 0) : 0);
  return base;
}

/** What writing a pair needs of one operand: its chunk and base per diagonal, its slot per chunk. */
interface OperandWords {
  readonly chunk: Int32Array;
  readonly base: Int32Array;
  readonly off: Int32Array;
  slot: Int32Array;
}

/**
 * Append at word `at` of `w` the pairs of C diagonal dc whose A and B buffers have a slot in
 * this dispatch: (A slot | B slot << 8, A base, kA, B base). Returns the word after the last.
 * O(pairs of dc).
 */
function writePairs(w: Uint32Array, at: number, s: SymbolicProduct, dc: number, a: OperandWords, b: OperandWords): number {
  const pairA = s.pairA;
  const pairB = s.pairB;
  const end = s.pairStart[dc + 1]!;
  for (let t = s.pairStart[dc]!; t < end; t++) {
    const u = pairA[t]!;
    const v = pairB[t]!;
    const qa = a.slot[a.chunk[u]!]!;
    const qb = b.slot[b.chunk[v]!]!;
    if (qa < 0 || qb < 0) continue;
    w[at] = qa | (qb << 8);
    w[at + 1] = a.base[u]!;
    w[at + 2] = a.off[u]!;
    w[at + 3] = b.base[v]!;
    at += PAIR_WORDS;
  }
  return at;
}

/** The dispatch list and the table, for every (A group, B group, C buffer) with work. O(pairs + passes·dgC). */
function buildDispatches(s: SymbolicProduct, a: DiagonalLayout, b: DiagonalLayout, c: DiagonalLayout, slots: number, wg: number): { list: Dispatch[]; table: Uint32Array } {
  const aGroups = groupsOf(a.chunkElems.length, slots);
  const bGroups = groupsOf(b.chunkElems.length, slots);
  const passes = aGroups.length * bGroups.length;
  const dgC = c.offsets.length;
  const nc = c.chunkElems.length;
  const w = stagingWords(Math.max(1, passes * JOB_WORDS * dgC + PAIR_WORDS * s.pairA.length));
  let length = 0;
  const list: Dispatch[] = [];
  const touched = new Uint8Array(nc);
  const aw: OperandWords = { chunk: a.chunk, base: operandBases(a), off: a.offsets, slot: new Int32Array(0) };
  const bw: OperandWords = { chunk: b.chunk, base: operandBases(b), off: b.offsets, slot: new Int32Array(0) };
  // C's diagonals are packed in order: buffer cq holds the contiguous range [cFirst[cq], cFirst[cq + 1])
  const cFirst = new Int32Array(nc + 1).fill(dgC);
  for (let d = dgC - 1; d >= 0; d--) cFirst[c.chunk[d]!] = d;
  for (const ag of aGroups) {
    aw.slot = slotsOf(a.chunkElems.length, ag);
    for (const bg of bGroups) {
      bw.slot = slotsOf(b.chunkElems.length, bg);
      for (let cq = 0; cq < nc; cq++) {
        // the first dispatch into a buffer fed by several passes writes all its diagonals (0 where no pair here)
        const writeAll = touched[cq] === 0 && passes > 1;
        const jobBase = length;
        const d0 = cFirst[cq]!;
        const d1 = cFirst[cq + 1]!;
        length += JOB_WORDS * (d1 - d0); // room for the jobs; pairs follow
        let jobs = 0;
        let maxLen = 0;
        for (let dc = d0; dc < d1; dc++) {
          const first = length;
          length = writePairs(w, length, s, dc, aw, bw);
          const count = (length - first) / PAIR_WORDS;
          if (count === 0 && !writeAll) continue;
          const e = jobBase + JOB_WORDS * jobs++;
          const len = c.lengths[dc]!;
          w[e] = c.start[dc]!;
          w[e + 1] = len;
          w[e + 2] = c.offsets[dc]!;
          w[e + 3] = first;
          w[e + 4] = count;
          if (len > maxLen) maxLen = len;
        }
        if (jobs === 0) {
          length = jobBase;
          continue;
        }
        list.push({ cq, aChunks: ag, bChunks: bg, jobs, jobBase, groups: jobs * Math.ceil(maxLen / wg), mode: touched[cq] === 0 ? 0 : 1 });
        touched[cq] = 1;
      }
    }
  }
  return { list, table: w.subarray(0, length) };
}

/** Shader text and binding signature per shape, built once per process. */
const shapes = new Map<string, { readonly text: string; readonly bindings: string; readonly label: string }>();
function gatherShape(shape: GatherShape): { readonly text: string; readonly bindings: string; readonly label: string } {
  const key = `${shape.format}:${shape.sa}:${shape.sb}:${shape.wg}`;
  let t = shapes.get(key);
  if (t === undefined) shapes.set(key, (t = { text: gatherWgsl(shape), bindings: signature(gatherBindings(shape)), label: `spgemm-gather(${shape.format}, ${shape.sa}x${shape.sb})` }));
  return t;
}

/** The context's pipeline for a dispatch (the context caches it by text: a hit is one lookup). */
function gatherPipeline(ctx: GpuContext, format: 'hm' | 'cdm', d: Dispatch, wg: number): PipelineEntry {
  const t = gatherShape({ format, sa: d.aChunks.length, sb: d.bChunks.length, wg });
  return ctx.pipelines.get({ key: t.text, label: t.label, bindings: t.bindings, wgsl: () => t.text });
}

/** A uniform block holding `words` from word 0. */
function uniformsOf(words: readonly number[]): Uniforms {
  const u = new Uniforms();
  for (let k = 0; k < words.length; k++) u.u[k] = words[k]!;
  return u;
}

/**
 * Plan C = A·B for device operands in the same diagonal format (the symbolic phase).
 * Throws DimensionMismatchError (inner dimensions), InvalidParameterError (formats differ, bad
 * option, too many C diagonals), ResourceLimitError (a C diagonal longer than one binding).
 * Cost: O(dgA·dgB) host work (O(dgA·dgB log(dgA·dgB)) where C's offsets spread wide, see
 * {@link spgemmSymbolic}), the table upload and C's allocation; no wait.
 * @example
 * const plan = planSpgemm(ctx, da, db); const c = plan.execute(da, db); await ctx.finish();
 */
export function planSpgemm(ctx: GpuContext, a: DeviceDiagonalMatrix, b: DeviceDiagonalMatrix, opts: SpgemmPlanOptions = {}): SpgemmPlan {
  const t0 = performance.now();
  const wg = opts.workgroupSize ?? 256;
  if (![64, 128, 256].includes(wg)) throw new InvalidParameterError('workgroupSize', 'one of 64, 128, 256', wg);
  const slots = opts.slotsPerOperand ?? Math.min(4, Math.floor((ctx.limits.maxStorageBuffersPerShaderStage - 2) / 2));
  if (!(Number.isInteger(slots) && slots >= 1 && 2 * slots + 2 <= ctx.limits.maxStorageBuffersPerShaderStage)) {
    throw new InvalidParameterError('slotsPerOperand', `an integer in [1, ${Math.floor((ctx.limits.maxStorageBuffersPerShaderStage - 2) / 2)}]`, slots);
  }
  const s = spgemmSymbolic(a, b, opts.maxDiagonals ?? 1 << 20);
  const t1 = performance.now();
  const cLayout = diagonalLayout(s.format, s.rows, s.cols, s.offsets, s.lengths, splitElems(ctx, opts));
  const { list, table } = buildDispatches(s, a, b, cLayout, slots, wg);
  const t2 = performance.now();
  const tab = uploadU32(ctx, table.length > 0 ? table : new Uint32Array(1), 'spgemm-table');
  const c = allocateDiagonal(ctx, cLayout, 'spgemm-c');
  const pipeOf = list.map((d) => gatherPipeline(ctx, s.format, d, wg)); // compiled at plan time, not on the first execute
  const extent = s.format === 'hm' ? s.inner : s.rows;
  const words = list.map((d) => [d.jobs, d.jobBase, d.groups, extent, d.mode]);
  const refsOf = (x: DeviceDiagonalMatrix, y: DeviceDiagonalMatrix): GpuBuf[][] => list.map((d) => [tab, ...d.aChunks.map((q) => x.buffers[q]!), ...d.bChunks.map((q) => y.buffers[q]!), c.buffers[d.cq]!]);
  const plannedRefs = refsOf(a, b); // the operands of the plan are the usual ones: bindings built once
  const t3 = performance.now();
  let disposed = false;
  return {
    symbolic: s,
    c,
    dispatches: list.length,
    planMs: t3 - t0,
    planParts: { symbolicMs: t1 - t0, tablesMs: t2 - t1, uploadMs: t3 - t2 },
    execute(x, y) {
      if (disposed) throw new InvalidParameterError('execute', 'a plan not yet disposed', 'a disposed plan (its C buffers are back in the pool: writing them would corrupt whatever holds them now)');
      checkSame('A', a, x);
      checkSame('B', b, y);
      checkLive(x, y, c);
      const refs = x === a && y === b ? plannedRefs : refsOf(x, y);
      for (let k = 0; k < list.length; k++) ctx.recorder.dispatch(pipeOf[k]!, refs[k]!, uniformsOf(words[k]!), list[k]!.groups);
      return c;
    },
    dispose() {
      disposed = true;
      tab.dispose();
      c.dispose();
    },
  };
}

/**
 * The operands of an execute must be live and must not be the plan's own C: a disposed operand's
 * buffers may hold another matrix by now, and an operand sharing a buffer with C would be read
 * while the gather writes it. Either gave a wrong C without a word. O(buffers).
 */
function checkLive(x: DeviceDiagonalMatrix, y: DeviceDiagonalMatrix, c: DeviceDiagonalMatrix): void {
  const cIds = new Set(c.buffers.map((q) => q.id));
  for (const [which, m] of [['A', x], ['B', y]] as const) {
    if (m.buffers.some((q) => q.isDisposed)) throw new InvalidParameterError(`execute: ${which}`, 'an operand whose buffers are live', 'a disposed operand');
    if (m.buffers.some((q) => cIds.has(q.id))) throw new InvalidParameterError(`execute: ${which}`, "an operand that is not the plan's own C (it is written while read: copy it first)", "the plan's C");
  }
}
