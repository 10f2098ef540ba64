/**
 * Orbital energies for the aufbau order, and the frozen-core effective Hamiltonian of a
 * complete active space (CAS): core orbitals doubly occupied and folded into the constant and
 * the one-electron integrals, frozen virtuals dropped.
 * @module
 */
import { InvalidParameterError } from '@gpusparse/formats';
import { FcidumpError } from './errors';
import type { Fcidump } from './types';

/**
 * Orbital energies used to order orbitals (aufbau). The file's Molpro `e i 0 0 0` lines when
 * present for every orbital; otherwise the diagonal of the Fock matrix of the aufbau
 * occupation, iterated until the occupied set stops changing (≤ 50 rounds):
 * f_pp = h_pp + Σ_i n_i [(pp|ii) − ½ (pi|ip)], n_i ∈ {0, 1, 2}. Cost O(iterations · norb²).
 * @example
 * const eps = orbitalEnergies(fd); // Float64Array(norb)
 */
export function orbitalEnergies(fd: Fcidump): Float64Array {
  const n = fd.norb;
  if (fd.orbitalEnergies?.every((e) => Number.isFinite(e))) return fd.orbitalEnergies.slice();
  const f = new Float64Array(n);
  for (let p = 0; p < n; p++) f[p] = fd.h1[p * n + p]!;
  const fock = (occ: Int32Array) => {
    for (let p = 0; p < n; p++) {
      let s = fd.h1[p * n + p]!;
      for (let i = 0; i < n; i++) {
        const ni = occ[i]!;
        if (ni === 0) continue;
        // (pp|ii) and (pi|ip)
        s += ni * (fd.eri[((p * n + p) * n + i) * n + i]! - 0.5 * fd.eri[((p * n + i) * n + i) * n + p]!);
      }
      f[p] = s;
    }
  };
  let prev = '';
  let occ = occupationsByEnergy(f, fd.nelec, fd.ms2);
  for (let it = 0; it < 50; it++) {
    const key = occ.join(',');
    if (key === prev) break;
    prev = key;
    fock(occ);
    occ = occupationsByEnergy(f, fd.nelec, fd.ms2);
  }
  // the fixed point may be a wrong aufbau: improve by single orbital swaps on ⟨D|H|D⟩
  occ = lowestDeterminantOccupation(fd, occ);
  fock(occ);
  return f;
}

/** ⟨D|H|D⟩ − E_core of the determinant with the given alpha and beta orbital flags. */
function determinantEnergy(fd: Fcidump, a: Uint8Array, b: Uint8Array): number {
  const n = fd.norb;
  const J = (i: number, j: number) => fd.eri[((i * n + i) * n + j) * n + j]!;
  const K = (i: number, j: number) => fd.eri[((i * n + j) * n + j) * n + i]!;
  let e = 0;
  for (let i = 0; i < n; i++) {
    e += (a[i]! + b[i]!) * fd.h1[i * n + i]!;
    for (let j = 0; j < n; j++) {
      if (j > i) e += (a[i]! * a[j]! + b[i]! * b[j]!) * (J(i, j) - K(i, j));
      e += a[i]! * b[j]! * J(i, j);
    }
  }
  return e;
}

/**
 * Local search from `occ` (n_p ∈ {0,1,2}): move one alpha or one beta electron to an empty
 * orbital of its spin while that lowers ⟨D|H|D⟩. Cost O(rounds · nocc · nvirt · norb²).
 */
function lowestDeterminantOccupation(fd: Fcidump, occ: Int32Array): Int32Array {
  const n = fd.norb;
  const a = Uint8Array.from(occ, (x) => (x >= 1 ? 1 : 0));
  const b = Uint8Array.from(occ, (x) => (x === 2 ? 1 : 0));
  let best = determinantEnergy(fd, a, b);
  for (let round = 0; round < 100; round++) {
    let improved = false;
    for (const s of [a, b]) {
      for (let i = 0; i < n; i++) {
        if (!s[i]) continue;
        for (let j = 0; j < n; j++) {
          if (s[j]) continue;
          s[i] = 0;
          s[j] = 1;
          const e = determinantEnergy(fd, a, b);
          if (e < best - 1e-12) {
            best = e;
            improved = true;
            break;
          }
          s[i] = 1;
          s[j] = 0;
        }
      }
    }
    if (!improved) break;
  }
  return Int32Array.from(a, (x, p) => x + b[p]!);
}

/**
 * Orbital indices sorted by ascending energy (stable: ties keep the file's order). O(n log n).
 * @example
 * orbitalsByEnergy(Float64Array.of(0.5, -1, 0.2)); // [1, 2, 0]
 */
export function orbitalsByEnergy(energies: Float64Array): number[] {
  return Array.from(energies.keys()).sort((a, b) => energies[a]! - energies[b]! || a - b);
}

/**
 * Aufbau occupations n_p ∈ {0,1,2} for nelec electrons and 2·S_z = ms2, filling by energy.
 * @example
 * occupationsByEnergy(Float64Array.of(-1, 0, 1), 3, 1); // [2, 1, 0]
 */
export function occupationsByEnergy(energies: Float64Array, nelec: number, ms2: number): Int32Array {
  const order = orbitalsByEnergy(energies);
  const na = (nelec + ms2) / 2;
  const nb = (nelec - ms2) / 2;
  const occ = new Int32Array(energies.length);
  for (let k = 0; k < na && k < order.length; k++) occ[order[k]!]!++;
  for (let k = 0; k < nb && k < order.length; k++) occ[order[k]!]!++;
  return occ;
}

/** Which orbitals are frozen core and which are active (0-based file indices). */
export interface ActiveSpaceChoice {
  core: number[];
  active: number[];
}

/**
 * Choose a CAS(electrons, orbitals): the (nelec − electrons)/2 lowest-energy orbitals are
 * core, the next `orbitals` are active, the rest are frozen virtuals. Explicit lists override.
 * @example
 * const { core, active } = chooseActiveSpace(fd, 10, 8); // N2: 2 core, 8 active
 */
export function chooseActiveSpace(
  fd: Fcidump,
  electrons: number,
  orbitals: number,
  explicit: Partial<ActiveSpaceChoice> = {},
): ActiveSpaceChoice {
  // what the option cannot mean, said as such (was blamed on NORB, or on ms2 further on)
  if (!Number.isInteger(orbitals) || orbitals < 1) throw new InvalidParameterError('CAS orbitals', 'at least 1 active orbital', orbitals);
  if (electrons > 2 * orbitals) throw new InvalidParameterError('CAS electrons', `at most 2 per active orbital (≤ ${2 * orbitals} in ${orbitals})`, electrons);
  const ncore2 = fd.nelec - electrons;
  if (ncore2 < 0 || ncore2 % 2 !== 0) {
    throw new FcidumpError(fd.file, undefined, `CAS electrons ≤ NELEC=${fd.nelec} with an even number of core electrons`, `${electrons} electrons`);
  }
  const ncore = ncore2 / 2;
  if (ncore + orbitals > fd.norb || orbitals < 1) {
    throw new FcidumpError(fd.file, undefined, `core (${ncore}) + active orbitals ≤ NORB=${fd.norb}`, `${orbitals} active orbitals`);
  }
  const order = orbitalsByEnergy(orbitalEnergies(fd));
  const core = explicit.core ?? order.slice(0, ncore);
  const active = explicit.active ?? order.slice(ncore, ncore + orbitals);
  if (core.length !== ncore) throw new FcidumpError(fd.file, undefined, `${ncore} core orbitals`, `${core.length}`);
  if (active.length !== orbitals) throw new FcidumpError(fd.file, undefined, `${orbitals} active orbitals`, `${active.length}`);
  const seen = new Set<number>();
  for (const p of [...core, ...active]) {
    if (!Number.isInteger(p) || p < 0 || p >= fd.norb || seen.has(p)) {
      throw new FcidumpError(fd.file, undefined, `distinct orbital indices in 0..${fd.norb - 1}`, `orbital ${p}`);
    }
    seen.add(p);
  }
  return { core: [...core].sort((a, b) => a - b), active: [...active].sort((a, b) => a - b) };
}

/**
 * The effective Hamiltonian over the active orbitals with the core doubly occupied:
 * E_c' = E_c + Σ_c 2h_cc + Σ_cd [2(cc|dd) − (cd|dc)],
 * h'_pq = h_pq + Σ_c [2(pq|cc) − (pc|cq)], (pq|rs) restricted to active indices.
 * Frozen virtuals are dropped. Cost O(ncore · nact² + nact⁴).
 * @example
 * const cas = freezeOrbitals(fd, chooseActiveSpace(fd, 10, 8));
 */
export function freezeOrbitals(fd: Fcidump, choice: ActiveSpaceChoice): Fcidump {
  const n = fd.norb;
  const { core, active } = choice;
  const m = active.length;
  const g = (i: number, j: number, k: number, l: number) => fd.eri[((i * n + j) * n + k) * n + l]!;
  let ecore = fd.ecore;
  for (const c of core) {
    ecore += 2 * fd.h1[c * n + c]!;
    for (const d of core) ecore += 2 * g(c, c, d, d) - g(c, d, d, c);
  }
  const h1 = new Float64Array(m * m);
  for (let a = 0; a < m; a++) {
    for (let b = 0; b < m; b++) {
      const p = active[a]!;
      const q = active[b]!;
      let s = fd.h1[p * n + q]!;
      for (const c of core) s += 2 * g(p, q, c, c) - g(p, c, c, q);
      h1[a * m + b] = s;
    }
  }
  const eri = new Float64Array(m * m * m * m);
  for (let a = 0; a < m; a++)
    for (let b = 0; b < m; b++)
      for (let c = 0; c < m; c++)
        for (let d = 0; d < m; d++) eri[((a * m + b) * m + c) * m + d] = g(active[a]!, active[b]!, active[c]!, active[d]!);
  const orbsym = Int32Array.from(active, (p) => fd.orbsym[p]!);
  const eps = fd.orbitalEnergies ? Float64Array.from(active, (p) => fd.orbitalEnergies![p]!) : undefined;
  return {
    ...fd,
    norb: m,
    nelec: fd.nelec - 2 * core.length,
    orbsym,
    h1,
    eri,
    ecore,
    orbitalEnergies: eps,
    notes: [...fd.notes, `CAS(${fd.nelec - 2 * core.length},${m}): core [${core.join(',')}] frozen into the constant, active [${active.join(',')}]`],
  };
}
