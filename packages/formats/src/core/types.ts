/**
 * The sparse matrix types every format converts from and to.
 *
 * Index arrays are Int32Array: a matrix holds at most 2^31 - 1 rows, columns and stored
 * entries. Values are Float64Array on the host; the GPU packages convert to float32 on upload.
 * @module
 */

/** Compressed sparse row. Column indices are sorted and unique within each row (canonical). */
export interface CsrMatrix {
  readonly format: 'csr';
  readonly rows: number;
  readonly cols: number;
  /** rowPtr[i]..rowPtr[i+1] is row i's range in colIdx/values; length rows + 1, rowPtr[0] = 0. */
  readonly rowPtr: Int32Array;
  /** Column index of each stored entry; length nnz. */
  readonly colIdx: Int32Array;
  /** Value of each stored entry; length nnz. Explicit zeros are kept. */
  readonly values: Float64Array;
}

/** Any matrix in any format: a tag, a shape and the number of stored (structural) non-zeros. */
export interface SparseMatrix {
  readonly format: string;
  readonly rows: number;
  readonly cols: number;
  /** Number of structural non-zeros of the matrix (not counting padding). */
  readonly nnz: number;
}

/**
 * Storage accounting of one matrix in one format (seed 001 §4.1, seed 004 §3.2).
 * β = nnz / storedElements is the storage occupancy of seed 004.
 */
export interface StorageInfo {
  /** Total bytes of all arrays, with the value and index widths given in {@link StorageOptions}. */
  readonly bytes: number;
  /** Number of value slots stored (non-zeros plus padding / explicit fill). */
  readonly storedElements: number;
  /** Structural non-zeros. */
  readonly nnz: number;
  /** Storage occupancy β = nnz / storedElements (1 when nothing is padded; 1 for an empty matrix). */
  readonly beta: number;
  /** storedElements - nnz. */
  readonly padding: number;
  /** Bytes per array, by name, for the memory tables. */
  readonly arrays: Readonly<Record<string, number>>;
}

/** Byte widths used by {@link StorageInfo}: float32 values on the GPU (4), float64 on the host (8). */
export interface StorageOptions {
  readonly valueBytes?: 4 | 8;
  readonly indexBytes?: 2 | 4 | 8;
}

/**
 * One storage format: its parameters, conversions, reference product and storage formula.
 * Every format folder exports one of these; `formats` in registry.ts lists them all.
 */
export interface FormatDescriptor<M extends SparseMatrix = SparseMatrix, P extends object = object> {
  /** Short id used on the command line and in reports, e.g. 'sell'. */
  readonly name: string;
  /** Human title, e.g. 'SELL-C-σ'. */
  readonly title: string;
  /** Where the format is specified (seed paper and section). */
  readonly source: string;
  readonly defaultParams: Readonly<P>;
  /** Convert from canonical CSR; throws InvalidParameterError for bad params. */
  fromCsr(a: CsrMatrix, params?: Partial<P>): M;
  /** Convert back to canonical CSR; fromCsr followed by toCsr is the identity (values bit-exact). */
  toCsr(m: M): CsrMatrix;
  /** y = A·x in float64 (y allocated when omitted). */
  spmvReference(m: M, x: Float64Array, y?: Float64Array): Float64Array;
  /** Storage accounting following the papers' formulas. */
  storageBytes(m: M, opts?: StorageOptions): StorageInfo;
}

/** Helper for formats: build a StorageInfo from per-array byte counts. */
export function makeStorageInfo(
  nnz: number,
  storedElements: number,
  arrays: Record<string, number>,
): StorageInfo {
  let bytes = 0;
  for (const k of Object.keys(arrays)) bytes += arrays[k] ?? 0;
  return {
    bytes,
    storedElements,
    nnz,
    beta: storedElements === 0 ? 1 : nnz / storedElements,
    padding: storedElements - nnz,
    arrays,
  };
}
