#!/usr/bin/env python3
"""Write the OpenMolcas inputs of bench/openmolcas/ (run once; the *.input files are committed).

Hn: linear chain on the z axis, 1.8 bohr spacing, STO-6G (not in OpenMolcas' library: given inline,
the standard Hehre/Stewart/Pople H exponents and coefficients, as in Basis Set Exchange / PySCF).
N2: STO-3G (OpenMolcas library label N.STO-3G....), R = 1.1 Angstrom, all electrons.
Both: no symmetry (C1, native Gateway input without SYMMETRY), RHF, then RASSCF CIONLY with
every orbital active (CASCI = FCI in the full orbital space), singlet ground state.
"""

STO6G_H = [
    (35.52322122, 0.009163596281),
    (6.513143725, 0.04936149294),
    (1.822142904, 0.1685383049),
    (0.6259552659, 0.3705627997),
    (0.2430767471, 0.4164915298),
    (0.1001124280, 0.1303340841),
]

TAIL = """&SEWARD
&SCF
&RASSCF
  CIOnly
  Spin = 1
  nActEl = {nel} 0 0
  Inactive = 0
  Ras2 = {norb}
  CIMX = 200
"""


def h_chain(n: int, spacing_bohr: float = 1.8) -> str:
    lines = [f"* H{n} linear chain, {spacing_bohr} bohr spacing, STO-6G, C1: CASCI({n}e,{n}o) = FCI",
             "&GATEWAY", "Basis set", "H.STO-6G....    / inline", "  1.0   0", "  6   1"]
    lines += [f"  {a:.10f}" for a, _ in STO6G_H]
    lines += [f"  {c:.12f}" for _, c in STO6G_H]
    lines += [f"H{i + 1}  0.0  0.0  {i * spacing_bohr:.6f}" for i in range(n)]
    lines += ["End of basis"]
    return "\n".join(lines) + "\n" + TAIL.format(nel=n, norb=n)


# N STO-3G with the digits of Basis Set Exchange / PySCF (OpenMolcas' library file carries more
# digits for the same Hehre basis; the two differ by ~5e-8 Eh in the N2 RHF and FCI energies).
STO3G_N_S = [(99.1061690, 0.15432897, 0.0), (18.0523120, 0.53532814, 0.0), (4.8856602, 0.44463454, 0.0),
             (3.7804559, 0.0, -0.09996723), (0.8784966, 0.0, 0.39951283), (0.2857144, 0.0, 0.70011547)]
STO3G_N_P = [(3.7804559, 0.15591627), (0.8784966, 0.60768372), (0.2857144, 0.39195739)]


def n2_bse(r_ang: float = 1.1) -> str:
    lines = [f"* N2 STO-3G (BSE/PySCF digits, inline), R = {r_ang} Angstrom, all electrons, C1: CASCI(14e,10o) = FCI",
             "&GATEWAY", "Basis set", "N.STO-3G-BSE....    / inline", "  7.0   1", "  6   2"]
    lines += [f"  {a:.7f}" for a, _, _ in STO3G_N_S]
    lines += [f"  {c1:.8f}  {c2:.8f}" for _, c1, c2 in STO3G_N_S]
    lines += ["  3   1"] + [f"  {a:.7f}" for a, _ in STO3G_N_P] + [f"  {c:.8f}" for _, c in STO3G_N_P]
    lines += ["N1  0.0  0.0  0.0  angstrom", f"N2  0.0  0.0  {r_ang:.6f}  angstrom", "End of basis"]
    return "\n".join(lines) + "\n" + TAIL.format(nel=14, norb=10)


def n2(r_ang: float = 1.1) -> str:
    lines = [f"* N2 STO-3G, R = {r_ang} Angstrom, all electrons, C1: CASCI(14e,10o) = FCI",
             "&GATEWAY", "Basis set", "N.STO-3G....",
             "N1  0.0  0.0  0.0  angstrom",
             f"N2  0.0  0.0  {r_ang:.6f}  angstrom", "End of basis"]
    return "\n".join(lines) + "\n" + TAIL.format(nel=14, norb=10)


if __name__ == "__main__":
    for n in (4, 8, 10):
        with open(f"h{n}.input", "w") as f:
            f.write(h_chain(n))
    with open("n2.input", "w") as f:
        f.write(n2())
    with open("n2-bse.input", "w") as f:
        f.write(n2_bse())
