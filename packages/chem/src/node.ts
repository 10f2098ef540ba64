/**
 * Node-only entry of @gpusparse/chem (`@gpusparse/chem/node`): reading FCIDUMP files (plain
 * or gzip) from disk. The main entry stays free of node:fs so that it bundles for browsers.
 * @module
 */
export { availableMemoryBytes, readFcidump } from './fcidump/node';
export { symmetrizeCsr, writeHamiltonianMatrixMarket } from './hamiltonian/export';
