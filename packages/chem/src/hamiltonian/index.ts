/** Slater–Condon Hamiltonian assembly (CSR, worker threads), S² and the spin penalty. @module */
export * from './tables';
export * from './kernel';
export * from './product-kernel';
export * from './product';
export * from './assemble';
export * from './spin';
export * from './structure';
export * from './nnz-estimate';
export * from './chunked';
export * from './parallel-product';
export * from './symmetry-defect';
