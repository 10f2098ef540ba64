/** @gpusparse/chem */
export {};
