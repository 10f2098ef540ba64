/**
 * Example: ground and excited states of water (STO-2G, full CI in the A1 irrep, 133
 * determinants) from the FCIDUMP shipped in packages/chem/data, with ⟨S²⟩ per root, then the
 * lowest singlets only (spin penalty), on WebGPU when an adapter exists.
 *
 *   pnpm tsx examples/ci-excited-states.ts
 */
import { type CiBackend, ciEnergies } from '@gpusparse/chem';
import { getFormat, HostOperator } from '@gpusparse/formats';
import { gpuOperatorFromCsr, kernels } from '@gpusparse/gpu';
import { exampleBackend } from './_backend';

const fcidump = new URL('../packages/chem/data/H2O_sto2g_hande.FCIDUMP', import.meta.url).pathname;
const be = await exampleBackend();
// H in the hybrid ELL+CSR format of seed 001 on the GPU; the host backend takes any format too
const backend: CiBackend<unknown, unknown> =
  be.kind === 'webgpu'
    ? {
        space: be.space as CiBackend<unknown, unknown>['space'],
        operator: (m, format) => gpuOperatorFromCsr(be.ctx, m, { kernel: kernels.find((k) => k.format === format)?.id ?? 'csr-vector' }) as never,
      }
    : { space: be.space as CiBackend<unknown, unknown>['space'], operator: (m, format) => HostOperator.fromFormat(getFormat(format), getFormat(format).fromCsr(m)) as never };

const all = await ciEnergies(fcidump, { space: 'fci', irrep: 'isym', nroots: 5, format: 'hybrid', backend, solver: 'davidson' });
console.log(`${all.space}: ${all.determinants} determinants, ${all.nnz} non-zeros, ${all.solver.method}`);
for (let r = 0; r < all.energies.length; r++) {
  console.log(`  root ${r}: E = ${all.energies[r]!.toFixed(10)} Eh   ‖Hv − Ev‖ = ${all.residualNorms[r]!.toExponential(1)}   <S^2> = ${all.s2[r]!.toFixed(4)}`);
}
const reference = -72.786196191345; // HANDE FCI benchmark, ground state
const err = Math.abs(all.energies[0]! - reference);
console.log(`ground state vs HANDE: |ΔE| = ${err.toExponential(2)} Eh`);

const singlets = await ciEnergies(fcidump, { space: 'fci', irrep: 'isym', nroots: 3, spin: { multiplicity: 1 }, backend, solver: 'davidson' });
console.log('lowest singlets (spin penalty):');
for (let r = 0; r < singlets.energies.length; r++) console.log(`  E = ${singlets.energies[r]!.toFixed(10)} Eh   <S^2> = ${singlets.s2[r]!.toFixed(4)}`);
be.kind === 'webgpu' && be.ctx.dispose();
if (err > 1e-8 || singlets.s2.some((s) => Math.abs(s) > 1e-3)) process.exit(1);
