/** Occupation strings and determinant spaces. @module */
export * from './bits';
export * from './pair-hash';
export * from './strings';
export * from './space';
export * from './build';
export * from './count';
