/** FCIDUMP reading (text parser; the node file reader is exported separately from ../index). @module */
export * from './errors';
export * from './types';
export * from './parse';
export * from './reader';
export { DUPLICATE_RTOL, fcidumpTableBytes } from './tables';
export { parseIntToken, parseRealToken } from './numbers';
export * from './active-space';
export { assertIrrepRestrictable, SYMMETRY_NOISE, type SymmetryBreaking, symmetryBreaking } from './symmetry-check';
