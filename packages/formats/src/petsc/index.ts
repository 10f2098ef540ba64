/**
 * PETSc binary I/O (matrices and vectors): the exchange format with PETSc and SLEPc, which the
 * CLI's `--engine petsc|slepc` and `gpusparse export` use. Node-only (file handles).
 * @module
 */
export * from './binary';
export * from './read';
export * from './write';
