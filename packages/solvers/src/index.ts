/** @gpusparse/solvers */
export {};
