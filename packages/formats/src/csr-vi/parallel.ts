/**
 * The csr-vi conversion on worker threads (node:worker_threads, each running `packChunk` from its
 * source text on a copy of its share of the rows): the serial pass costs 20–60 ns per entry, ~35–80 s
 * for the 1.376·10^9 entries of the N2 CAS(10e,16o) FCI, more than a GPU call can spare (session 13).
 * The result is the serial conversion's, array for array. Without worker threads (a browser, a
 * bundle that stubs them), below `minEntries`, or with one worker, it is the serial conversion.
 * @module
 */
import { InvalidParameterError } from '../core/errors';
import type { CsrMatrix } from '../core/types';
import { validateCsr } from '../csr/csr';
import { requireInt } from '../dia/common';
import { hardwareThreads, loadWorkerThreads } from '../spgemm/parallel-node';
import { type CsrViMatrix, type CsrViParams, csrViFromCsr, csrViPlan, packJob, tableHash, vouchCsrVi } from './csr-vi';
import { type PackJob, type PackOut, packChunk } from './pack-kernel';

/** Options of {@link csrViFromCsrParallel}. */
export interface CsrViParallelOptions {
  /** Threads, an integer in 1…256 (default: the hardware threads, at most 256); more than the rows run one row each. */
  readonly workers?: number;
  /** Below this many entries the serial conversion runs (a number ≥ 0; default 2^24). */
  readonly minEntries?: number;
}

/** The worker's script: packChunk's source and a one-job message loop. */
const workerSource = (): string => `"use strict";
var __name = function (f) { return f; };
const { parentPort } = require('node:worker_threads');
const packChunk = (${packChunk.toString()});
parentPort.on('message', (job) => {
  try {
    const o = packChunk(job);
    parentPort.postMessage({ ok: true, o }, [o.packPtr.buffer, o.segPtr.buffer, o.rawPtr.buffer, o.packed.buffer, o.segEnd.buffer, o.segBase.buffer, o.rawCols.buffer, o.rawWords.buffer]);
  } catch (e) {
    parentPort.postMessage({ ok: false, error: String((e && e.stack) || e) });
  }
});`;

/** Row ranges of about equal entries, at most `n`. O(rows). */
function rowChunks(a: CsrMatrix, n: number): [number, number][] {
  const nnz = a.rowPtr[a.rows]!;
  const out: [number, number][] = [];
  let r0 = 0;
  for (let c = 1; c <= n && r0 < a.rows; c++) {
    let r1 = r0;
    const target = Math.floor((c * nnz) / n);
    while (r1 < a.rows && (a.rowPtr[r1 + 1]! <= target || r1 === r0)) r1++;
    if (c === n) r1 = a.rows;
    out.push([r0, r1]);
    r0 = r1;
  }
  return out;
}

/** The job of rows [r0, r1) of the whole-matrix job `all`: copies of its rows' arrays (transferable). */
function chunkJob(all: PackJob, r0: number, r1: number): PackJob {
  const k0 = all.rowPtr[r0]!;
  const k1 = all.rowPtr[r1]!;
  const rowPtr = all.rowPtr.slice(r0, r1 + 1);
  for (let i = 0; i < rowPtr.length; i++) rowPtr[i]! -= k0;
  return { ...all, rowPtr, colIdx: all.colIdx.slice(k0, k1), words: all.words.slice(2 * k0, 2 * k1), keyLo: all.keyLo.slice(), keyHi: all.keyHi.slice(), slot: all.slot.slice() };
}

/** The chunks' outputs joined in row order: global pointers, segment ends offset by the words before. */
function join(a: CsrMatrix, ranges: [number, number][], outs: PackOut[]) {
  const sum = (f: (o: PackOut) => number) => outs.reduce((t, o) => t + f(o), 0);
  const packed = new Uint32Array(sum((o) => o.packed.length));
  const segEnd = new Int32Array(sum((o) => o.segEnd.length));
  const segBase = new Uint32Array(segEnd.length);
  const rawCols = new Int32Array(sum((o) => o.rawCols.length));
  const rawWords = new Uint32Array(2 * rawCols.length);
  const [packPtr, segPtr, rawPtr] = [new Int32Array(a.rows + 1), new Int32Array(a.rows + 1), new Int32Array(a.rows + 1)];
  let [np, ns, nr] = [0, 0, 0];
  outs.forEach((o, c) => {
    const r0 = ranges[c]![0];
    for (let i = 1; i < o.packPtr.length; i++) {
      packPtr[r0 + i] = np + o.packPtr[i]!;
      segPtr[r0 + i] = ns + o.segPtr[i]!;
      rawPtr[r0 + i] = nr + o.rawPtr[i]!;
    }
    packed.set(o.packed, np);
    for (let s = 0; s < o.segEnd.length; s++) segEnd[ns + s] = np + o.segEnd[s]!;
    segBase.set(o.segBase, ns);
    rawCols.set(o.rawCols, nr);
    rawWords.set(o.rawWords, 2 * nr);
    [np, ns, nr] = [np + o.packed.length, ns + o.segEnd.length, nr + o.rawCols.length];
  });
  return { packPtr, packed, segPtr, segEnd, segBase, rawPtr, rawCols, rawValues: new Float64Array(rawWords.buffer, 0, nr) };
}

/**
 * Run one chunk on worker `w`: its output, or a rejection naming `who` for a failure in the pass,
 * an error event (a throw while loading, killed for memory) or an exit before the answer
 * (s14-harden-e: an exit without an error event left the conversion pending for ever).
 */
function runChunk(w: import('node:worker_threads').Worker, job: PackJob, who: string): Promise<PackOut> {
  return new Promise<PackOut>((resolve, reject) => {
    w.once('message', (m: { ok: boolean; o?: PackOut; error?: string }) => (m.ok ? resolve(m.o!) : reject(new Error(`${who}: ${m.error}`))));
    w.once('error', (e: Error) => reject(new Error(`${who}: ${e.message}`, { cause: e })));
    w.once('exit', (code: number) => reject(new Error(`${who} exited (code ${code}) before its result`)));
    w.postMessage(job, [job.rowPtr.buffer, job.colIdx.buffer, job.words.buffer] as ArrayBuffer[]);
  });
}

/**
 * {@link csrViFromCsr} with the pass over the rows split between worker threads (the plan's sample
 * stays on the calling thread). Same result, array for array. Cost: the serial pass / workers, plus
 * a copy of the matrix's columns and values into the workers (≈ 12 bytes per entry) and of the words
 * back into one array.
 * @example const m = await csrViFromCsrParallel(h.matrix); // 16 threads on the H100 host
 */
export async function csrViFromCsrParallel(a: CsrMatrix, params: Partial<CsrViParams> = {}, opts: CsrViParallelOptions = {}): Promise<CsrViMatrix> {
  validateCsr(a, 'csrViFromCsrParallel');
  // s14-harden-e: workers 2.5 cut the row ranges after chunk 2 (a partial matrix, vouched for); 0 / NaN ran serially unnamed
  const asked = requireInt('workers', opts.workers ?? Math.min(256, (await hardwareThreads()) ?? 1), 1, 256);
  const minEntries = opts.minEntries ?? 1 << 24;
  if (typeof minEntries !== 'number' || !(minEntries >= 0)) throw new InvalidParameterError('minEntries', 'a number ≥ 0', minEntries);
  const nnz = a.rowPtr[a.rows]!;
  const workers = Math.min(asked, a.rows);
  const wt = workers > 1 && nnz >= minEntries ? await loadWorkerThreads() : undefined;
  if (!wt) return csrViFromCsr(a, params);
  const plan = csrViPlan(a, params.valueBits ?? 0);
  const all = packJob(a, tableHash(plan.table), 32 - plan.valueBits);
  const ranges = rowChunks(a, workers);
  const code = workerSource();
  const threads = ranges.map(() => new wt.Worker(code, { eval: true }));
  try {
    const outs = await Promise.all(ranges.map(([r0, r1], c) => runChunk(threads[c]!, chunkJob(all, r0, r1), `csr-vi conversion worker (rows ${r0}…${r1 - 1})`)));
    return vouchCsrVi({ format: 'csr-vi', rows: a.rows, cols: a.cols, nnz, valueBits: plan.valueBits, table: plan.table, ...join(a, ranges, outs) });
  } finally {
    for (const w of threads) void w.terminate();
  }
}
