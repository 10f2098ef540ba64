/**
 * @gpusparse/chem — configuration interaction from FCIDUMP files: the reader, determinant
 * spaces (FCI, truncated CI, CAS, point-group sectors), Slater–Condon Hamiltonian assembly
 * into CSR on worker threads, ⟨S²⟩ and spin penalties, and the `ciEnergies` driver.
 * @module
 */
export * from './fcidump/index';
// readFcidump (node:fs) is exported from ./node (package subpath "@gpusparse/chem/node").
export * from './determinants/index';
export * from './hamiltonian/index';
export * from './direct/index';
export * from './dense-eigen';
export * from './ci';
export type { CiHamiltonian } from './ci-assembly';
export * from './ci-polish';
export * from './synthetic';
export * from './memory-estimate';
export * from './ci-estimate';
