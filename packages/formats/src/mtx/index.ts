/**
 * Matrix Market I/O. The parser and the writer have no node imports (browser-safe); the file
 * functions `readMatrixMarket` / `writeMatrixMarket` come from node.ts and need node.
 * @module
 */

export { estimateReadBytes } from './counts';
export { MatrixMarketError, quoteInput } from './errors';
export { formatMatrixMarket, formatReal, matrixMarketChunks } from './format';
export { availableMemoryBytes } from './host-memory';
export { readMatrixMarket, writeMatrixMarket } from './node';
export { parseMatrixMarket, parseMatrixMarketStream } from './parse';
export { MatrixMarketParser } from './parser';
export type {
  MatrixMarketField,
  MatrixMarketFormat,
  MatrixMarketHeader,
  MatrixMarketReadOptions,
  MatrixMarketReadResult,
  MatrixMarketSymmetry,
  MatrixMarketWarning,
  MatrixMarketWriteOptions,
} from './types';
