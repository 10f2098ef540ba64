/**
 * Counts behind issue 20's 4-byte CI layout (csr-vi), on the host. Per CI Hamiltonian (values rounded
 * to float32 first, as bench/spmv.ts does before any conversion): distinct values (all entries, the
 * off-diagonal ones), the share of off-diagonal entries the 2^k most frequent values cover, segments
 * per row for windows of 2^16 and 2^21 columns, the bytes per non-zero of each layout option, the
 * predicted bytes per v from csrViPlan, what csrViFromCsr built (its time on assembled matrices) and the
 * bytes per non-zero of csr-vi-slice's padded slices of 32 rows.
 * A space too large to assemble here is sampled: `:sample:S,W` assembles S evenly spaced blocks of W
 * rows (global columns) and counts those.
 * Usage: npx tsx bench/csr-vi-count.ts FILE[:cas:E,O][:sample:S,W] …   (FCI in the file's ISYM sector, or a CAS)
 * @module
 */
import { type CsrMatrix, csrViFromCsr, csrViPlan, csrViStorageBytes } from '../packages/formats/src/index';
import { buildCiSpace } from '../packages/chem/src/index';
import { assembleHamiltonian, kernelContext } from '../packages/chem/src/hamiltonian/assemble';
import { productContext } from '../packages/chem/src/hamiltonian/product';
import { assembleRowsProduct } from '../packages/chem/src/hamiltonian/product-kernel';
import { readFcidump } from '../packages/chem/src/node';

/** The sampled rows of the space: S blocks of W rows, as one CSR matrix over all columns (diagonal: the block's own rows). */
function sampled(pctx: NonNullable<ReturnType<typeof productContext>>, n: number, blocks: number, width: number): { a: CsrMatrix; firstRow: Int32Array } {
  const parts = [];
  const firstRow = new Int32Array(blocks * width);
  for (let b = 0; b < blocks; b++) {
    const s = Math.floor((b * (n - width)) / Math.max(1, blocks - 1));
    parts.push(assembleRowsProduct(pctx, s, s + width));
    for (let i = 0; i < width; i++) firstRow[b * width + i] = s + i;
  }
  const rows = blocks * width;
  const rowPtr = new Int32Array(rows + 1);
  const nnz = parts.reduce((t, p) => t + p.cols.length, 0);
  const colIdx = new Int32Array(nnz);
  const values = new Float64Array(nnz);
  let w = 0;
  parts.forEach((p, b) => {
    colIdx.set(p.cols, w);
    values.set(p.vals, w);
    for (let i = 0; i < width; i++) rowPtr[b * width + i + 1] = rowPtr[b * width + i]! + p.lengths[i]!;
    w += p.cols.length;
  });
  return { a: { format: 'csr', rows, cols: n, rowPtr, colIdx, values }, firstRow };
}

/** Distinct values, coverage of the top 2^k off-diagonal values, runs of 2^16 / 2^21 windows. */
function counts(a: CsrMatrix, rowOf: (i: number) => number) {
  const all = new Set<number>();
  const off = new Map<number, number>();
  let diag = 0;
  let seg16 = 0;
  let seg21 = 0;
  for (let r = 0; r < a.rows; r++) {
    let [p16, p21] = [-1, -1];
    for (let k = a.rowPtr[r]!; k < a.rowPtr[r + 1]!; k++) {
      const c = a.colIdx[k]!;
      const v = a.values[k]!;
      all.add(v);
      if (c === rowOf(r)) diag++;
      else off.set(v, (off.get(v) ?? 0) + 1);
      if (c >>> 16 !== p16) [seg16, p16] = [seg16 + 1, c >>> 16];
      if (c >>> 21 !== p21) [seg21, p21] = [seg21 + 1, c >>> 21];
    }
  }
  const nnz = a.rowPtr[a.rows]!;
  const offN = nnz - diag;
  const ranked = [...off.values()].sort((x, y) => y - x);
  const cover = (t: number) => +(ranked.slice(0, t).reduce((x, c) => x + c, 0) / offN).toFixed(4);
  return { nnz, distinct: all.size, distinctOffDiag: off.size, diagonal: diag, offCoveredByTop: Object.fromEntries([256, 1024, 2048, 4096, 16384, 65535].map((t) => [t, cover(t)])), segmentsPerRow: { w16: +(seg16 / a.rows).toFixed(2), w21: +(seg21 / a.rows).toFixed(2) } };
}

async function one(spec: string): Promise<void> {
  const [file, ...rest] = spec.split(':');
  const opt = (name: string) => {
    const i = rest.indexOf(name);
    return i < 0 ? undefined : rest[i + 1]!.split(',').map(Number);
  };
  const cas = opt('cas');
  const sample = opt('sample');
  const { fcidump, space } = buildCiSpace(await readFcidump(file!), cas ? { kind: 'cas', electrons: cas[0]!, orbitals: cas[1]! } : 'fci', { irrep: 'isym' });
  const t0 = performance.now();
  let a: CsrMatrix;
  let rowOf = (i: number) => i;
  if (sample) {
    const s = sampled(productContext(kernelContext(fcidump, space), space)!, space.size, sample[0]!, sample[1]!);
    a = s.a;
    rowOf = (i) => s.firstRow[i]!;
  } else a = (await assembleHamiltonian(fcidump, space, { workers: 'auto' })).matrix;
  a = { ...a, values: Float64Array.from(Float32Array.from(a.values)) }; // what bench/spmv.ts converts
  const buildS = (performance.now() - t0) / 1000;
  const c = counts(a, rowOf);
  const plan = csrViPlan(a);
  const out: Record<string, unknown> = { spec, determinants: space.size, rows: a.rows, buildS: +buildS.toFixed(1), perRow: +(c.nnz / a.rows).toFixed(1), ...c };
  out.planBytesPerEntry = Object.fromEntries(plan.bytesPerEntry.map((b, i) => [i + 1, +b.toFixed(3)]).filter(([v]) => (v as number) >= 8));
  out.planValueBits = plan.valueBits;
  const tc = performance.now();
  const m = csrViFromCsr(a);
  const bytes = csrViStorageBytes(m, { valueBytes: 4, indexBytes: 4 }).bytes;
  out.csrVi = { valueBits: m.valueBits, table: m.table.length, wordShare: +(m.packed.length / c.nnz).toFixed(4), segmentsPerRow: +(m.segEnd.length / a.rows).toFixed(2), bytesPerNnz: +(bytes / c.nnz).toFixed(3), convertS: +((performance.now() - tc) / 1000).toFixed(2) };
  // csr-vi-slice's padding: each slice of 32 rows stores its longest row's words and raw pairs for every row
  // (sampled: slices of 32 consecutive sampled rows, a few crossing the blocks' seams)
  let padded = 0;
  for (let r0 = 0; r0 < a.rows; r0 += 32) {
    let [wn, wr] = [0, 0];
    for (let r = r0; r < Math.min(a.rows, r0 + 32); r++) [wn, wr] = [Math.max(wn, m.packPtr[r + 1]! - m.packPtr[r]!), Math.max(wr, m.rawPtr[r + 1]! - m.rawPtr[r]!)];
    padded += Math.min(32, a.rows - r0) * (4 * wn + 8 * wr);
  }
  out.slice32BytesPerNnz = +((bytes - 4 * m.packed.length - 8 * m.rawCols.length + padded) / c.nnz).toFixed(3);
  // bytes per non-zero of the layouts: CSR (u32 column + f32 value), 16-bit column offsets + f32 (csr-long pack 1; rows spanning < 2^16 columns only)
  out.layouts = { csr: +(8 + (4 * a.rows) / c.nnz).toFixed(3), col16f32: +(6 + (8 * a.rows) / c.nnz).toFixed(3), csrVi: plan.bytesPerEntry[plan.valueBits - 1]!.toFixed(3) };
  console.log(JSON.stringify(out));
}

for (const spec of process.argv.slice(2)) await one(spec);
