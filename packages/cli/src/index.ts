/** @gpusparse/cli */
export {};
