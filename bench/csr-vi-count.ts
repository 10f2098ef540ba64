/**
 * Counts for issue 20's 4-byte CI layout (csr-vi), on the host: per CI Hamiltonian, distinct float32 values
 * (all entries, off-diagonal only), how many entries the most frequent 2^k values cover, 64 Ki-column
 * segments per row, the bytes per non-zero of each layout option, and what csrViFromCsr chose (v, table
 * share, segments per row, bytes per non-zero) with its conversion time.
 * Usage: npx tsx bench/csr-vi-count.ts FILE[:cas:E,O] …   (FCI in the file's ISYM sector, or a CAS of it)
 * @module
 */
import { csrViFromCsr, csrViStorageBytes } from '../packages/formats/src/index';
import { assembleHamiltonian, buildCiSpace } from '../packages/chem/src/index';
import { readFcidump } from '../packages/chem/src/node';

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
const bitsOf = (v: number) => {
  f32[0] = v;
  return u32[0]!;
};

async function one(spec: string): Promise<void> {
  const [file, kind, sizes] = spec.split(':');
  const fd = await readFcidump(file!);
  const s = kind === 'cas' ? { kind: 'cas' as const, electrons: Number(sizes!.split(',')[0]), orbitals: Number(sizes!.split(',')[1]) } : ('fci' as const);
  const { fcidump, space } = buildCiSpace(fd, s, { irrep: 'isym' });
  const t0 = performance.now();
  const a = (await assembleHamiltonian(fcidump, space, { workers: 'auto' })).matrix;
  const nnz = a.rowPtr[a.rows]!;
  const all = new Map<number, number>();
  const off = new Map<number, number>();
  let diag = 0;
  let segs = 0;
  let maxSegs = 0;
  let maxLen = 0;
  for (let r = 0; r < a.rows; r++) {
    let prevHi = -1;
    let rs = 0;
    maxLen = Math.max(maxLen, a.rowPtr[r + 1]! - a.rowPtr[r]!);
    for (let k = a.rowPtr[r]!; k < a.rowPtr[r + 1]!; k++) {
      const c = a.colIdx[k]!;
      const b = bitsOf(a.values[k]!);
      all.set(b, (all.get(b) ?? 0) + 1);
      if (c === r) diag++;
      else off.set(b, (off.get(b) ?? 0) + 1);
      if (c >>> 16 !== prevHi) {
        rs++;
        prevHi = c >>> 16;
      }
    }
    segs += rs;
    maxSegs = Math.max(maxSegs, rs);
  }
  // how many entries the 65 535 most frequent off-diagonal values cover
  const tc = performance.now();
  const vi = csrViFromCsr(a);
  const convertS = (performance.now() - tc) / 1000;
  const viBytes = csrViStorageBytes(vi, { valueBytes: 4, indexBytes: 4 }).bytes;
  const counts = [...off.values()].sort((x, y) => y - x);
  const covered = counts.slice(0, 65535).reduce((t, c) => t + c, 0);
  const offN = nnz - diag;
  const K = Math.ceil(a.cols / 65536);
  const perNnz = (b: number) => (b / nnz).toFixed(3);
  console.log(
    JSON.stringify({
      spec,
      rows: a.rows,
      nnz,
      perRow: +(nnz / a.rows).toFixed(1),
      maxLen,
      assembleS: +((performance.now() - t0) / 1000).toFixed(1),
      distinctAll: all.size,
      distinctOffDiag: off.size,
      diagonal: diag,
      offCoveredBy65535: +(covered / offN).toFixed(6),
      offCoveredByTop: Object.fromEntries([256, 1024, 2048, 4096, 16384, 65535].map((t) => [t, +(counts.slice(0, t).reduce((x, c) => x + c, 0) / offN).toFixed(4)])),
      colBits: Math.ceil(Math.log2(a.cols)),
      segmentsPerRow: +(segs / a.rows).toFixed(2),
      maxSegments: maxSegs,
      windows: K,
      csrVi: { valueBits: vi.valueBits, table: vi.table.length, wordShare: +(vi.packed.length / nnz).toFixed(4), segmentsPerRow: +(vi.segEnd.length / a.rows).toFixed(2), bytesPerNnz: +(viBytes / nnz).toFixed(3), convertS: +convertS.toFixed(2) },
      bytesPerNnz: {
        csr8: perNnz(8 * nnz + 4 * a.rows),
        col16val32_quads: perNnz(6 * nnz + 8 * a.rows),
        // 4-byte entries (16-bit column low bits, 16-bit value index), diagonal apart (4 B/row), u32 row start, K u16 window ends per row
        seg16vi16: perNnz(4 * offN + 4 * a.rows + 4 * a.rows + 2 * K * a.rows + 4 * off.size),
      },
    }),
  );
}

for (const spec of process.argv.slice(2)) await one(spec);
