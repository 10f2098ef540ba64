import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { csrEquals, csrFromTriplets, csrSpmv, csrTranspose } from '../src/csr/csr';
import { formatMatrixMarket, MatrixMarketError, parseMatrixMarket, readMatrixMarket } from '../src/mtx/index';
import { join } from 'node:path';
import { dataTier } from '../../../testdata/index';

const dir = join(dataTier.dir, 'matrices');
const readme = join(dataTier.dir, 'README.md');

interface Row {
  file: string;
  rows: number;
  cols: number;
  stored: number;
  nnzFull: number;
  kind: string;
}

/** The matrix table A.1 of shared/data/README.md. */
function readTable(): Map<string, Row> {
  const out = new Map<string, Row>();
  for (const line of readFileSync(readme, 'utf8').split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    const file = /^`(.+\.mtx(\.gz)?)`$/.exec(cells[1] ?? '')?.[1];
    const shape = /^(\d+)x(\d+)$/.exec(cells[5] ?? '');
    if (!file || !shape) continue;
    out.set(file, { file, rows: +shape[1]!, cols: +shape[2]!, stored: +cells[6]!, nnzFull: +cells[7]!, kind: cells[8]! });
  }
  return out;
}

/** Float64 reference reader: plain string splitting and Number(), no streaming, no tokenizer. */
function referenceRead(bytes: Uint8Array) {
  const text = new TextDecoder().decode(bytes[0] === 0x1f && bytes[1] === 0x8b ? gunzipSync(bytes) : bytes);
  const lines = text.split('\n').filter((l) => l.trim() !== '' && !l.trimStart().startsWith('%'));
  const banner = text.slice(0, text.indexOf('\n')).trim().toLowerCase().split(/\s+/);
  const [m, n] = lines[0]!.trim().split(/\s+/).map(Number) as [number, number];
  const ri: number[] = [];
  const ci: number[] = [];
  const v: number[] = [];
  for (const l of lines.slice(1)) {
    const f = l.trim().split(/\s+/);
    const i = Number(f[0]) - 1;
    const j = Number(f[1]) - 1;
    const x = banner[3] === 'pattern' ? 1 : Number(f[2]);
    ri.push(i);
    ci.push(j);
    v.push(x);
    if (banner[4] !== 'general' && i !== j) {
      ri.push(j);
      ci.push(i);
      v.push(x);
    }
  }
  return csrFromTriplets(m, n, ri, ci, v);
}

describe.skipIf(!dataTier.available && !dataTier.required)('every real matrix in shared/data/matrices (data tier)', () => {
  it('finds the data folder and the README table', () => {
    if (!existsSync(dir)) throw new Error(`matrix folder missing: expected ${dir} (shared/data/matrices next to the repository)`);
    const table = readTable();
    const files = readdirSync(dir).filter((f) => /\.mtx(\.gz)?$/.test(f));
    expect(files.length).toBeGreaterThan(50);
    for (const f of files) expect(table.has(f), `${f} has a row in README.md`).toBe(true);
    for (const f of table.keys()) expect(files, `README row ${f} has a file`).toContain(f);
  });

  const files = existsSync(dir) ? readdirSync(dir).filter((f) => /\.mtx(\.gz)?$/.test(f)) : [];
  const table = existsSync(readme) ? readTable() : new Map<string, Row>();
  for (const f of files) {
    it(f, async () => {
      const row = table.get(f);
      if (!row) throw new Error(`${f}: no row in README.md`);
      const path = `${dir}/${f}`;
      if (f === 'young1c.mtx') {
        const e = await readMatrixMarket(path).catch((x: unknown) => x);
        expect(e).toBeInstanceOf(MatrixMarketError);
        expect((e as MatrixMarketError).message).toMatch(/complex matrices are not supported/);
        expect((e as MatrixMarketError).line).toBe(1);
        return;
      }
      if (f === 'ExaSP2_trpcage_8K.mtx.gz') {
        const e = await readMatrixMarket(path).catch((x: unknown) => x);
        expect(e).toBeInstanceOf(MatrixMarketError);
        // banner, size line, 116690 declared entries: the extra one is on line 116693
        expect((e as MatrixMarketError).line).toBe(116693);
        expect((e as MatrixMarketError).message).toMatch(/116690 entries \(declared on line 2\), got entry number 116691/);
        const warnings: string[] = [];
        const r = await readMatrixMarket(path, { strictCount: false, onWarning: (w) => warnings.push(w.message) });
        expect(r.header.declaredEntries).toBe(row.stored);
        expect(r.header.actualEntries).toBe(116691);
        expect(r.matrix.rowPtr[r.matrix.rows]).toBe(116691);
        expect(warnings).toHaveLength(1);
        expect(csrEquals(r.matrix, referenceRead(readFileSync(path)))).toBe(true);
        return;
      }
      const r = await readMatrixMarket(path);
      const { matrix, header } = r;
      expect([matrix.rows, matrix.cols]).toEqual([row.rows, row.cols]);
      expect(header.declaredEntries).toBe(row.stored);
      expect(header.actualEntries).toBe(row.stored);
      expect(matrix.rowPtr[matrix.rows]).toBe(row.nnzFull);
      expect(`${header.format} ${header.field} ${header.symmetry}`).toBe(row.kind);
      expect(r.warnings).toEqual([]);
      // bit-exact against the naive float64 reference reader
      expect(csrEquals(matrix, referenceRead(readFileSync(path)))).toBe(true);
      if (header.symmetry === 'symmetric') expect(csrEquals(csrTranspose(matrix), matrix)).toBe(true);
      // the host kernel on real data against a sequential float64 sum, per-row tolerance
      const x = Float64Array.from({ length: matrix.cols }, (_, j) => Math.sin(j + 1));
      const y = csrSpmv(matrix, x);
      for (let i = 0; i < matrix.rows; i++) {
        let ref = 0;
        let abs = 0;
        for (let k = matrix.rowPtr[i]!; k < matrix.rowPtr[i + 1]!; k++) {
          ref += matrix.values[k]! * x[matrix.colIdx[k]!]!;
          abs += Math.abs(matrix.values[k]! * x[matrix.colIdx[k]!]!);
        }
        const len = matrix.rowPtr[i + 1]! - matrix.rowPtr[i]!;
        if (Math.abs(y[i]! - ref) > 2 * len * Number.EPSILON * abs) throw new Error(`${f} row ${i}: ${y[i]} vs ${ref}`);
      }
      // write → read round trip, in the file's own symmetry
      const sym = header.symmetry === 'symmetric' ? 'symmetric' : 'general';
      const back = parseMatrixMarket(formatMatrixMarket(matrix, { symmetry: sym, field: header.field === 'pattern' ? 'pattern' : 'real' }));
      expect(csrEquals(back.matrix, matrix)).toBe(true);
    });
  }
});
