/**
 * Validation of matrices given as raw arrays (issue 13, point 5): every constructor, conversion
 * and product refuses a malformed CSR / COO / CSC / DIA / HM / CDM / BCSR with an
 * InvalidMatrixError naming the first bad index, instead of a NaN, a dropped entry or a
 * format-dependent answer; `{ unchecked: true }` skips the checks.
 */
import { describe, expect, it } from 'vitest';
import {
  bcsrFromCsr,
  bcsrSpmv,
  bcsrToCsr,
  cdmAllocate,
  cdmFromCsr,
  cdmSpmv,
  coo,
  cooFormat,
  cooFromCsr,
  cooSpmv,
  cooToCsr,
  type CsrMatrix,
  csc,
  cscFromCsr,
  cscSpmv,
  cscToCsr,
  csr,
  csrFormat,
  csrSpmv,
  csrTranspose,
  diaFromCsr,
  diaSpmv,
  diaToCsr,
  generators as g,
  HostOperator,
  hmAllocate,
  hmFromCsr,
  hmSpmv,
  hmToCsr,
  InvalidMatrixError,
  validateCsr,
} from '../src/index';

const raw = (rows: number, cols: number, rowPtr: number[], colIdx: number[], values?: number[]): CsrMatrix => ({
  format: 'csr',
  rows,
  cols,
  rowPtr: Int32Array.from(rowPtr),
  colIdx: Int32Array.from(colIdx),
  values: Float64Array.from(values ?? colIdx.map((_, k) => k + 1)),
});

/** The InvalidMatrixError `f` throws, or a failure when it throws nothing or something else. */
function invalid(f: () => unknown): InvalidMatrixError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidMatrixError);
    return e as InvalidMatrixError;
  }
  throw new Error('expected an InvalidMatrixError, nothing was thrown');
}

/** The message without its "where: " prefix. */
const detail = (e: InvalidMatrixError): string => e.message.slice(e.where.length + 2);

describe('the audit cases', () => {
  // rowPtr goes 0, 3, 1, 4: before, CSR, COO and CSC gave three different products
  const nonMonotone = () => raw(3, 3, [0, 3, 1, 4], [0, 1, 2, 0]);
  const x = Float64Array.of(1, 10, 100);

  it('a non-monotone rowPtr throws the same error in CSR, COO, CSC and the host operator', () => {
    const errors = [
      invalid(() => csrSpmv(nonMonotone(), x)),
      invalid(() => cooSpmv(cooFromCsr(nonMonotone()), x)),
      invalid(() => cscSpmv(cscFromCsr(nonMonotone()), x)),
      invalid(() => HostOperator.fromCsr(nonMonotone())),
      invalid(() => csrFormat.fromCsr(nonMonotone())),
      invalid(() => cooFormat.fromCsr(nonMonotone())),
    ];
    for (const e of errors) expect(detail(e)).toBe('CSR rowPtr[2] = 1 < rowPtr[1] = 3: row pointers must not decrease');
    expect(errors.map((e) => e.where)).toEqual(['csrSpmv', 'cooFromCsr', 'cscFromCsr', 'HostOperator.fromCsr', 'csrFormat.fromCsr', 'cooFromCsr']);
  });

  it('an out-of-range column throws (it gave NaN in CSR and was dropped in CSC)', () => {
    const wide = () => raw(2, 3, [0, 1, 2], [0, 3]);
    const msg = 'CSR colIdx[1] = 3 in row 1: expected a column in [0, 3)';
    expect(detail(invalid(() => csrSpmv(wide(), x)))).toBe(msg);
    expect(detail(invalid(() => cscFromCsr(wide())))).toBe(msg);
    expect(detail(invalid(() => csrTranspose(wide())))).toBe(msg);
    const negative = raw(2, 3, [0, 1, 2], [-1, 0]);
    expect(detail(invalid(() => cooFromCsr(negative)))).toBe('CSR colIdx[0] = -1 in row 0: expected a column in [0, 3)');
  });

  it('HostOperator.fromCsr validates below 10^4 non-zeros too, at construction', () => {
    // before, only the wasm path (from 10^4 non-zeros, at the first apply) looked at the matrix
    const e = invalid(() => HostOperator.fromCsr(raw(2, 2, [0, 1, 2], [0, 7])));
    expect(e.message).toBe('HostOperator.fromCsr: CSR colIdx[1] = 7 in row 1: expected a column in [0, 2)');
    const big = g.uniformRandom(2000, 2000, 8, 3); // 16 000 non-zeros: the wasm path
    const bad = { ...big, colIdx: big.colIdx.slice() };
    bad.colIdx[12_345] = 2000;
    expect(invalid(() => HostOperator.fromCsr(bad)).message).toMatch(/^HostOperator\.fromCsr: CSR colIdx\[12345\] = 2000 in row \d+: expected a column in \[0, 2000\)$/);
  });

  it('diagonal formats refuse offsets outside the matrix instead of dropping them', () => {
    const a = g.laplacian1d(4);
    const x4 = Float64Array.of(1, 2, 3, 4);
    const d = diaFromCsr(a);
    const absurd = { ...d, offsets: Int32Array.of(-1, 0, 1000) };
    const msg = 'DIA offsets[2] = 1000: expected a diagonal offset inside the 4x4 matrix, in [-3, 3]';
    expect(detail(invalid(() => diaSpmv(absurd, x4)))).toBe(msg);
    expect(detail(invalid(() => diaToCsr(absurd)))).toBe(msg);
    expect(detail(invalid(() => diaSpmv({ ...d, offsets: Int32Array.of(-1, 0, 0) }, x4)))).toMatch(/offsets\[2\] = 0 after offsets\[1\] = 0: duplicate offset/);
    expect(detail(invalid(() => diaSpmv({ ...d, offsets: Int32Array.of(0, -1, 1) }, x4)))).toMatch(/offsets\[1\] = -1 after offsets\[0\] = 0: out of order/);

    const present = d.present.slice();
    present[0]! |= 1; // slot 0: row 0 of diagonal −1, i.e. column −1 (padding)
    expect(invalid(() => diaToCsr({ ...d, present })).message).toMatch(/slot 0 \(row 0, offset -1\) marks column -1, outside \[0, 4\)/);

    const h = hmFromCsr(a); // offsets 0, 1, -1
    expect(detail(invalid(() => hmSpmv({ ...h, offsets: Int32Array.of(0, 1, -4) }, x4)))).toMatch(/^HM offsets\[2\] = -4: expected a diagonal offset inside the 4x4 matrix, in \[-3, 3\]$/);
    expect(detail(invalid(() => hmToCsr({ ...h, starts: Int32Array.of(0, 4, 6) })))).toMatch(/HM starts\[2\] = 6: expected 7/);
    expect(invalid(() => hmAllocate(4, 4, [0, 1, 1000])).message).toMatch(/hmAllocate: HM offsets\[2\] = 1000/);
    expect(invalid(() => hmAllocate(4, 4, [0, 1, 1])).message).toMatch(/HM offset 1 given twice/);

    const c = cdmFromCsr(a); // compact offsets 0, 1, 3
    expect(detail(invalid(() => cdmSpmv({ ...c, offsets: Int32Array.of(0, 1, 7) }, x4)))).toBe('CDM offsets[2] = 7: expected a compact diagonal index in [0, 4)');
    expect(detail(invalid(() => cdmSpmv({ ...c, offsets: Int32Array.of(0, 1, 1) }, x4)))).toMatch(/duplicate offset/);
    expect(invalid(() => cdmAllocate(4, [0, 4])).message).toMatch(/compact diagonal index \[1\] = 4: expected an integer in \[0, 4\)/);
    expect(invalid(() => cdmAllocate(4, [3, 0, 3])).message).toMatch(/index 3 given twice/);
  });
});

describe('CSR rules', () => {
  it('names the first bad index for each rule', () => {
    const cases: [CsrMatrix, string][] = [
      [raw(2, 2, [0, 1], [0]), 'CSR rowPtr has length 2: expected rows + 1 = 3'],
      [raw(1, 2, [1, 1], [0]), 'CSR rowPtr[0] = 1: expected 0'],
      [raw(2, 2, [0, 1, 2], [0, 1, 1]), 'CSR rowPtr[2] = 2 but colIdx has 3 entries and values 3: expected rowPtr[rows] = colIdx.length = values.length'],
      [raw(2, 4, [0, 2, 4], [0, 3, 2, 1]), 'CSR colIdx[3] = 1 in row 1 after column 2: columns must be sorted and unique within a row (not sorted; csrFromTriplets sorts and sums duplicates)'],
      [raw(2, 4, [0, 2, 4], [0, 3, 2, 2]), 'CSR colIdx[3] = 2 in row 1 after column 2: columns must be sorted and unique within a row (duplicate; csrFromTriplets sorts and sums duplicates)'],
      [{ ...raw(1, 2, [0, 1], [0]), colIdx: [0] as unknown as Int32Array }, 'CSR colIdx: expected an Int32Array, got Array'],
      [{ ...raw(1, 2, [0, 1], [0]), values: Float32Array.of(1) as unknown as Float64Array }, 'CSR values: expected an Float64Array, got Float32Array'],
      [{ ...raw(1, 2, [0, 1], [0]), cols: 2.5 }, 'CSR shape 1x2.5: expected integer dimensions in [0, 2147483647]'],
      [{ ...raw(0, 0, [0], []), rows: Number.NaN }, 'CSR shape NaNx0: expected integer dimensions in [0, 2147483647]'],
    ];
    for (const [m, msg] of cases) expect(detail(invalid(() => validateCsr(m)))).toBe(msg);
  });

  it('csr() refuses indices that are not integers instead of truncating them', () => {
    expect(invalid(() => csr(2, 3, [0, 1, 2], [0, 1.5], [1, 1])).message).toBe('csr(): CSR colIdx[1] = 1.5: expected an integer index in [0, 2147483647]');
    expect(invalid(() => csr(2, 3, [0, Number.NaN, 2], [0, 1], [1, 1])).message).toMatch(/CSR rowPtr\[1\] = NaN/);
    expect(invalid(() => csr(1, 3, [0, 1], [2 ** 32], [1])).message).toMatch(/colIdx\[0\] = 4294967296/); // would wrap to 0
    expect(invalid(() => csr(1, 3, [0, 1], Uint32Array.of(2 ** 31), [1])).message).toMatch(/colIdx\[0\] = 2147483648/); // would wrap to < 0
  });

  it('unsorted or repeated columns: products sum them, conversions refuse them', () => {
    const a = csr(2, 3, [0, 3, 4], [2, 0, 2, 1], [1, 2, 3, 4], { requireSorted: false });
    expect(Array.from(csrSpmv(a, Float64Array.of(1, 10, 100)))).toEqual([402, 40]);
    const op = HostOperator.fromCsr(a);
    const y = new Float64Array(2);
    op.apply(Float64Array.of(1, 10, 100), y);
    expect(Array.from(y)).toEqual([402, 40]);
    expect(invalid(() => cscFromCsr(a)).message).toMatch(/^cscFromCsr: CSR colIdx\[1\] = 0 in row 0 after column 2/);
    expect(invalid(() => diaFromCsr(a)).message).toMatch(/not sorted/); // DIA would keep one of the two (2, 0)-entries
    expect(invalid(() => csr(2, 3, [0, 3, 4], [2, 0, 2, 1], [1, 2, 3, 4])).message).toMatch(/^csr\(\): .*not sorted/);
  });

  it('a changed shape or array on a validated matrix is validated again', () => {
    const a = csr(2, 3, [0, 1, 2], [0, 2], [1, 1]);
    csrSpmv(a, new Float64Array(3));
    expect(detail(invalid(() => csrSpmv({ ...a, cols: 2 }, new Float64Array(2))))).toBe('CSR colIdx[1] = 2 in row 1: expected a column in [0, 2)');
    expect(detail(invalid(() => csrSpmv({ ...a, colIdx: Int32Array.of(0, 3) }, new Float64Array(3))))).toMatch(/colIdx\[1\] = 3/);
  });
});

describe('{ unchecked: true }', () => {
  it('skips the checks: the caller vouches for the arrays', () => {
    const ok = csr(2, 2, [0, 1, 2], [0, 1], [2, 3], { unchecked: true });
    expect(Array.from(csrSpmv(ok, Float64Array.of(1, 1)))).toEqual([2, 3]);
    // an invalid matrix passed unchecked is not looked at (undefined result, documented)
    expect(() => csr(2, 2, [0, 2, 1], [0, 1], [1, 1], { unchecked: true })).not.toThrow();
    const bad = raw(2, 2, [0, 1, 2], [0, 5]);
    expect(() => HostOperator.fromCsr(bad, { unchecked: true })).not.toThrow();
    expect(() => HostOperator.fromCsr(bad)).toThrow(InvalidMatrixError);
    // unchecked still refuses what it cannot convert without losing information
    expect(() => csr(1, 2, [0, 1], [0.5], [1], { unchecked: true })).toThrow(/colIdx\[0\] = 0.5/);
    const c = coo(2, 2, Int32Array.of(0, 5), Int32Array.of(0, 0), Float64Array.of(1, 1), { unchecked: true });
    expect(c.nnz).toBe(2);
    const s = csc(2, 2, Int32Array.of(0, 1, 2), Int32Array.of(0, 1), Float64Array.of(1, 1), { unchecked: true });
    expect(Array.from(cscSpmv(s, Float64Array.of(3, 4)))).toEqual([3, 4]);
  });

  it('conversions hand on validated matrices: no second validation needed downstream', () => {
    const a = g.poisson2d(6);
    for (const m of [cooToCsr(cooFromCsr(a)), cscToCsr(cscFromCsr(a)), diaToCsr(diaFromCsr(a)), bcsrToCsr(bcsrFromCsr(a))]) {
      expect(Array.from(m.colIdx)).toEqual(Array.from(a.colIdx));
      // an in-place corruption after vouching is not re-checked (same rule as the wasm copy)
      expect(() => validateCsr(m)).not.toThrow();
    }
  });
});

describe('COO and CSC rules', () => {
  it('coo() and the COO functions check lengths and ranges', () => {
    expect(invalid(() => coo(2, 2, [0, 2], [0, 0], [1, 1])).message).toBe('coo(): COO rowIdx[1] = 2: expected a row in [0, 2)');
    expect(invalid(() => coo(2, 2, [0, 1], [0, 9], [1, 1])).message).toBe('coo(): COO colIdx[1] = 9 in row 1: expected a column in [0, 2)');
    expect(invalid(() => coo(2, 2, [0, 1], [0, 1], [1])).message).toMatch(/COO nnz = 2 but rowIdx, colIdx and values have 2, 2, 1 entries/);
    const m = coo(2, 2, [1, 0, 1], [0, 1, 0], [1, 2, 3]); // any order, repeats summed
    expect(Array.from(cooSpmv(m, Float64Array.of(1, 10)))).toEqual([20, 4]);
    expect(Array.from(cooToCsr(m).values)).toEqual([2, 4]);
    const broken = { ...m, rowIdx: Int32Array.of(1, 0, 7) }; // a write past y used to vanish
    expect(detail(invalid(() => cooSpmv(broken, Float64Array.of(1, 1))))).toBe('COO rowIdx[2] = 7: expected a row in [0, 2)');
    expect(invalid(() => cooToCsr(broken)).where).toBe('cooToCsr');
  });

  it('csc() and the CSC functions apply the CSR rules by columns', () => {
    expect(invalid(() => csc(3, 2, [0, 2, 1], [0, 1], [1, 1])).message).toBe('csc(): CSC colPtr[2] = 1 < colPtr[1] = 2: column pointers must not decrease');
    expect(invalid(() => csc(3, 2, [0, 1, 2], [0, 3], [1, 1])).message).toBe('csc(): CSC rowIdx[1] = 3 in column 1: expected a row in [0, 3)');
    expect(invalid(() => csc(3, 1, [0, 2], [2, 1], [1, 1])).message).toMatch(/CSC rowIdx\[1\] = 1 in column 0 after row 2: rows must be sorted and unique within a column \(not sorted/);
    const m = cscFromCsr(g.laplacian1d(3));
    expect(detail(invalid(() => cscToCsr({ ...m, nnz: 5 })))).toBe('CSC nnz = 5 but colPtr[cols] = 7: expected them equal');
  });
});

describe('BCSR rules', () => {
  it('refuses block columns outside the matrix and a presence mask that disagrees with nnz', () => {
    const b = bcsrFromCsr(g.laplacian1d(5), { blockSize: 2 }); // 3 block rows, block columns in [0, 3)
    const cols = b.colIdx.slice();
    cols[cols.length - 1] = 3;
    expect(detail(invalid(() => bcsrSpmv({ ...b, colIdx: cols }, new Float64Array(5))))).toMatch(/^BCSR colIdx\[\d+\] = 3 in block row 2: expected a block column in \[0, 3\)$/);
    expect(detail(invalid(() => bcsrToCsr({ ...b, nnz: b.nnz - 1 })))).toMatch(/presence mask marks more than nnz/);
    expect(detail(invalid(() => bcsrToCsr({ ...b, nnz: b.nnz + 1 })))).toBe(`BCSR nnz = ${b.nnz + 1} but the presence mask marks ${b.nnz} entries inside the matrix`);
    expect(detail(invalid(() => bcsrSpmv({ ...b, numBlockRows: 2 }, new Float64Array(5))))).toBe('BCSR numBlockRows = 2: expected ⌈5 / 2⌉ = 3');
    expect(detail(invalid(() => bcsrSpmv({ ...b, blockCols: 0 }, new Float64Array(5))))).toBe('BCSR block 2x0: expected integer block sizes in [1, 1024]');
  });
});

describe('property: random valid CSRs pass, single-entry corruptions are caught at their index', () => {
  const rand = g.rng(20261125);
  const int = (n: number) => Math.floor(rand() * n);

  /** Canonical CSR from random (row, col) pairs: per row, unique columns sorted. */
  function canonical(rows: number, cols: number, pairs: [number, number][]): CsrMatrix {
    const perRow: Set<number>[] = Array.from({ length: rows }, () => new Set<number>());
    for (const [i, j] of pairs) perRow[i]!.add(j);
    const rowPtr = new Int32Array(rows + 1);
    const colIdx: number[] = [];
    for (let i = 0; i < rows; i++) {
      colIdx.push(...[...perRow[i]!].sort((p, q) => p - q));
      rowPtr[i + 1] = colIdx.length;
    }
    return { format: 'csr', rows, cols, rowPtr, colIdx: Int32Array.from(colIdx), values: Float64Array.from(colIdx, () => rand() - 0.5) };
  }

  function randomValid(): CsrMatrix {
    const rows = 1 + int(40);
    const cols = 1 + int(40);
    const pairs: [number, number][] = [];
    for (let t = int(rows * 6); t > 0; t--) pairs.push([int(rows), int(cols)]);
    return canonical(rows, cols, pairs);
  }

  it('500 random valid matrices pass every consumer', () => {
    for (let t = 0; t < 500; t++) {
      const a = randomValid();
      expect(() => validateCsr(a)).not.toThrow();
      const x = Float64Array.from({ length: a.cols }, () => rand());
      const y = csrSpmv(a, x);
      const yc = cscSpmv(cscFromCsr(a), x);
      const yo = cooSpmv(cooFromCsr(a), x);
      let worst = 0;
      for (let i = 0; i < a.rows; i++) worst = Math.max(worst, Math.abs(yc[i]! - y[i]!), Math.abs(yo[i]! - y[i]!));
      expect(worst).toBeLessThan(1e-12);
    }
  });

  it('1500 single-entry corruptions: each throws and names the corrupted index', () => {
    let tried = 0;
    const kinds = { rowPtrDown: 0, rowPtrUp: 0, colHigh: 0, colNegative: 0, colRepeat: 0 };
    while (tried < 1500) {
      const a = randomValid();
      const nnz = a.rowPtr[a.rows]!;
      const rowPtr = a.rowPtr.slice();
      const colIdx = a.colIdx.slice();
      const kind = int(5);
      let expected: RegExp;
      if (kind === 0 && a.rows >= 2) {
        // rowPtr[i] drops below rowPtr[i − 1]: the first decrease is at i
        const i = 1 + int(a.rows - 1);
        rowPtr[i] = rowPtr[i - 1]! - 1 - int(3);
        expected = new RegExp(`^CSR rowPtr\\[${i}\\] = ${rowPtr[i]} < rowPtr\\[${i - 1}\\] = ${rowPtr[i - 1]}: row pointers must not decrease$`);
        kinds.rowPtrDown++;
      } else if (kind === 1 && a.rows >= 2) {
        // rowPtr[i] jumps above rowPtr[i + 1]: the first decrease is at i + 1
        const i = 1 + int(a.rows - 1);
        rowPtr[i] = rowPtr[i + 1]! + 1 + int(3);
        expected = new RegExp(`^CSR rowPtr\\[${i + 1}\\] = ${rowPtr[i + 1]} < rowPtr\\[${i}\\] = ${rowPtr[i]}: row pointers`);
        kinds.rowPtrUp++;
      } else if (kind === 2 && nnz > 0) {
        const k = int(nnz);
        colIdx[k] = a.cols + int(1000);
        expected = new RegExp(`^CSR colIdx\\[${k}\\] = ${colIdx[k]} in row \\d+: expected a column in \\[0, ${a.cols}\\)$`);
        kinds.colHigh++;
      } else if (kind === 3 && nnz > 0) {
        const k = int(nnz);
        colIdx[k] = -1 - int(1000);
        expected = new RegExp(`^CSR colIdx\\[${k}\\] = ${colIdx[k]} in row \\d+: expected a column`);
        kinds.colNegative++;
      } else if (kind === 4) {
        // repeat the previous column of the same row (a duplicate)
        const ks: number[] = [];
        for (let i = 0; i < a.rows; i++) for (let k = a.rowPtr[i]! + 1; k < a.rowPtr[i + 1]!; k++) ks.push(k);
        if (ks.length === 0) continue;
        const k = ks[int(ks.length)]!;
        colIdx[k] = colIdx[k - 1]!;
        expected = new RegExp(`^CSR colIdx\\[${k}\\] = ${colIdx[k]} in row \\d+ after column ${colIdx[k]}: .*\\(duplicate`);
        kinds.colRepeat++;
      } else continue;
      const bad: CsrMatrix = { ...a, rowPtr, colIdx };
      // each consumer sees a fresh object: no verdict is remembered across them
      expect(detail(invalid(() => validateCsr({ ...bad })))).toMatch(expected);
      expect(detail(invalid(() => cscFromCsr({ ...bad })))).toMatch(expected);
      if (kind !== 4) expect(detail(invalid(() => csrSpmv({ ...bad }, new Float64Array(a.cols))))).toMatch(expected);
      tried++;
    }
    for (const n of Object.values(kinds)) expect(n).toBeGreaterThan(200);
  });
});
