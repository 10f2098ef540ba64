/** @gpusparse/cli: the `gpusparse` command, and the one-call API (solve, eigsh, converters). */
export * from './api';
