/**
 * Byte accounting of an SpMV kernel for bench/spmv.ts (issue 20: "measure achieved bandwidth per
 * kernel and say where each one loses it"). A kernel's time is compared with three byte counts:
 *
 * - **DRAM bytes**: what the kernel must move at least — its device matrix arrays once (padding,
 *   tables and packed indices included: `deviceBytes`), x once (4·cols) and y once (4·rows).
 *   Its GB/s over the measured copy bandwidth is the "% of copy"; DRAM bytes / copy bandwidth is
 *   the kernel's floor (what it would take at copy speed).
 * - **x gather bytes**: the 32-byte sectors of x that blocks of 32 consecutive rows touch, summed
 *   over the blocks — what x costs the caches when a warp's rows are processed together and
 *   nothing survives from one block to the next (L1 misses served by L2). Far above 4·cols means
 *   the gathers, not DRAM, can limit a kernel (random columns); about 4·cols means x is free.
 * - **CSR-equivalent bytes**: 8·nnz + 4·(rows + 1) + 4·cols + 4·rows, the count
 *   `.gpukit/cusparse_anchor.py` divides cuSPARSE's time by, so "GB/s (CSR)" compares directly
 *   with the anchor's GB/s.
 *
 * Where a kernel loses shows as: bytes per entry above the CSR's 8 (padding, tables), % of copy
 * well below 100 on its own bytes (latency, instructions, clock), or a large x gather count.
 * @module
 */
import { existsSync, readFileSync } from 'node:fs';
import type { CsrMatrix } from '@gpusparse/formats';

/**
 * Bytes of x that blocks of `block` consecutive rows gather at `sector`-byte granularity (each
 * block counts every distinct sector its rows touch once). O(nnz + cols) with a stamp array.
 * @example xGatherBytes(generators.poisson2d(100)) // ≈ 3·4·cols: three x bands per block
 */
export function xGatherBytes(a: CsrMatrix, block = 32, sector = 32): number {
  if (!(Number.isInteger(block) && block >= 1)) throw new RangeError(`xGatherBytes: block expected an integer ≥ 1, got ${block}`);
  if (!(Number.isInteger(sector) && sector >= 4 && sector % 4 === 0)) throw new RangeError(`xGatherBytes: sector expected a multiple of 4 bytes, got ${sector}`);
  const per = sector / 4;
  const stamp = new Int32Array(Math.ceil(a.cols / per) + 1).fill(-1);
  let sectors = 0;
  for (let i = 0; i < a.rows; i++) {
    const b = Math.floor(i / block);
    for (let k = a.rowPtr[i]!; k < a.rowPtr[i + 1]!; k++) {
      const s = Math.floor(a.colIdx[k]! / per);
      if (stamp[s] !== b) {
        stamp[s] = b;
        sectors++;
      }
    }
  }
  return sectors * sector;
}

/**
 * Distinct `line`-byte lines of x per gathered entry when 32 entries are gathered together:
 * `row` — 32 consecutive entries of one row (the lanes of a CSR row kernel), `slice` — the k-th
 * entries of 32 consecutive rows (a thread-per-row sliced ELL kernel on one slot). On the H100 a
 * gather instruction costs about one L1 cycle per distinct line, so this ratio × nnz / (SMs ·
 * clock) bounds a gather-limited kernel (H10: cuSPARSE ≈ 1 entry per SM cycle). O(nnz).
 * With `maxEntries` below nnz, only every s-th block of `group` rows is counted (s = ⌈nnz /
 * maxEntries⌉; the first block always): an estimate at ~maxEntries set insertions, for matrices
 * of 10^9 entries where the full count takes a minute.
 * @example gatherLinesPerEntry(generators.poisson2d(64), 'slice') // ≈ 5 lines / 32 entries
 */
export function gatherLinesPerEntry(a: CsrMatrix, mode: 'row' | 'slice', line = 128, group = 32, maxEntries = Number.POSITIVE_INFINITY): number {
  const per = line / 4;
  const seen = new Set<number>();
  let lines = 0;
  let nnz = 0;
  const flush = () => {
    lines += seen.size;
    seen.clear();
  };
  const stride = Math.max(1, Math.ceil(a.rowPtr[a.rows]! / maxEntries));
  for (let r0 = 0; r0 < a.rows; r0 += stride * group) {
    const r1 = Math.min(a.rows, r0 + group);
    if (mode === 'row') {
      for (let i = r0; i < r1; i++) {
        for (let k = a.rowPtr[i]!, n = 0; k < a.rowPtr[i + 1]!; k++, n++) {
          if (n % group === 0) flush();
          seen.add(Math.floor(a.colIdx[k]! / per));
          nnz++;
        }
        flush();
      }
      continue;
    }
    let width = 0;
    for (let i = r0; i < r1; i++) width = Math.max(width, a.rowPtr[i + 1]! - a.rowPtr[i]!);
    for (let k = 0; k < width; k++) {
      for (let i = r0; i < r1; i++) {
        const q = a.rowPtr[i]! + k;
        if (q < a.rowPtr[i + 1]!) {
          seen.add(Math.floor(a.colIdx[q]! / per));
          nnz++;
        }
      }
      flush();
    }
  }
  return nnz > 0 ? lines / nnz : 0;
}

/** The byte counts and rates of one timed kernel (see the module comment). */
export interface ByteAccount {
  /** deviceBytes + 4·cols + 4·rows. */
  readonly dramBytes: number;
  /** deviceBytes / nnz: what the kernel's own layout costs per stored entry (CSR: 8 + 4·rows/nnz). */
  readonly matrixBytesPerNnz: number;
  /** dramBytes / ms, GB/s. */
  readonly gbs: number;
  /** gbs / copy bandwidth. */
  readonly fractionOfCopy: number;
  /** dramBytes / copy bandwidth: the time at copy speed, ms. */
  readonly floorMs: number;
  /** CSR-equivalent bytes / ms (the anchor's GB/s definition). */
  readonly csrGbs: number;
  /** deviceBytes + x gather bytes + 4·rows, over ms: the rate with x gathered per 32-row block. */
  readonly gatherGbs: number;
}

/**
 * The {@link ByteAccount} of a kernel that took `ms` on a rows × cols matrix with `nnz`
 * entries, `deviceBytes` on the device and `xGather` x gather bytes, against `copyGbs`. O(1).
 * @example accountBytes({ rows: 4, cols: 4, nnz: 8, deviceBytes: 84, xGather: 32, ms: 1e-3, copyGbs: 100 })
 */
export function accountBytes(c: { rows: number; cols: number; nnz: number; deviceBytes: number; xGather: number; ms: number; copyGbs: number }): ByteAccount {
  if (!(c.ms > 0) || !(c.copyGbs > 0)) throw new RangeError(`accountBytes: expected ms > 0 and copyGbs > 0, got ${c.ms} and ${c.copyGbs}`);
  const dramBytes = c.deviceBytes + 4 * c.cols + 4 * c.rows;
  const gbs = dramBytes / (c.ms * 1e6);
  return {
    dramBytes,
    matrixBytesPerNnz: c.nnz > 0 ? c.deviceBytes / c.nnz : 0,
    gbs,
    fractionOfCopy: gbs / c.copyGbs,
    floorMs: dramBytes / (c.copyGbs * 1e6),
    csrGbs: (8 * c.nnz + 4 * (c.rows + 1) + 4 * c.cols + 4 * c.rows) / (c.ms * 1e6),
    gatherGbs: (c.deviceBytes + c.xGather + 4 * c.rows) / (c.ms * 1e6),
  };
}

/**
 * cuSPARSE float32 SpMV ms per matrix name from a `cusparse_anchor.py --json` file (lines
 * `{"matrix": "NAME.csr", "dtype": "float32", "spmv_ms": …}`; other dtypes ignored; a later line
 * for the same matrix wins). A missing file gives an empty map (the bench then prints no ratio).
 * @throws RangeError naming the file and line when a line is not such JSON
 * @example readCusparse('/tmp/out/cusparse.jsonl').get('banded-2000000-b9') // 0.146
 */
export function readCusparse(file: string | undefined): Map<string, number> {
  const out = new Map<string, number>();
  if (!file || !existsSync(file)) return out;
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (!line.trim()) return;
      let r: { matrix?: unknown; dtype?: unknown; spmv_ms?: unknown };
      try {
        r = JSON.parse(line);
      } catch {
        throw new RangeError(`${file}:${i + 1}: expected one JSON object per line (cusparse_anchor.py --json), got '${line.slice(0, 80)}'`);
      }
      if (typeof r.matrix !== 'string' || typeof r.spmv_ms !== 'number') throw new RangeError(`${file}:${i + 1}: expected "matrix" (string) and "spmv_ms" (number), got '${line.slice(0, 80)}'`);
      if (r.dtype === 'float32') out.set(r.matrix.replace(/\.(csr|mtx(\.gz)?)$/, ''), r.spmv_ms);
    });
  return out;
}
