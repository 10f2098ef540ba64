/**
 * The open 1-D Hubbard chain as an FCIDUMP (a model Hamiltonian, labelled as such wherever it is
 * reported): L sites, hopping t between neighbours, on-site U, ⌈L/2⌉ α and ⌊L/2⌋ β electrons.
 * Shared by bench/ci-large.ts and bench/solvers.ts.
 */

/**
 * FCIDUMP text of the open 1-D Hubbard chain with hopping t and on-site U.
 * @example parseFcidump(hubbardFcidump(13)); // 2 944 656 FCI determinants
 */
export function hubbardFcidump(l: number, u = 2, t = 1): string {
  const na = Math.ceil(l / 2);
  const nb = Math.floor(l / 2);
  const lines = [`&FCI NORB=${l},NELEC=${na + nb},MS2=${na - nb},`, `  ORBSYM=${Array(l).fill(1).join(',')},`, '  ISYM=1,', '&END'];
  for (let i = 1; i <= l; i++) lines.push(`${u.toFixed(16)} ${i} ${i} ${i} ${i}`);
  for (let i = 1; i < l; i++) lines.push(`${(-t).toFixed(16)} ${i + 1} ${i} 0 0`);
  lines.push('0.0 0 0 0 0');
  return `${lines.join('\n')}\n`;
}
