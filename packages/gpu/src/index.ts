/** @gpusparse/gpu */
export {};
