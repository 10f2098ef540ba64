/**
 * WGSL of the CG iteration's last pass: the search-direction update fused with the end of the
 * ⟨r, r⟩ reduction, so that one CG iteration after the product is three dispatches (dot stage 1
 * of ⟨p, q⟩, the fused x / r update with ⟨r, r⟩'s stage 1, this pass) instead of four.
 * @module
 */
import { entryArgs, preamble, SCALAR_OPERAND, type WgslBinding, workgroupSum } from '../kernels/wgsl/index';
import { DOT_CHUNK, DOT_ITEMS, f32arr, everyGroupShare, WG } from './shaders';

/** Bindings of `cgDirectionWgsl`: scalar slots, the ⟨r, r⟩ partials, r, p. */
export const CG_DIRECTION_BINDINGS: WgslBinding[] = [f32arr('sc', 'w'), f32arr('partial', 'r'), f32arr('r', 'r'), f32arr('p', 'w')];

/**
 * p = r + β·p with β = ⟨r, r⟩ / ρ: every workgroup sums the stage-1 partials of ⟨r, r⟩
 * (`count` of them from `first`) in dot stage 2's order — the same bits as the stage-2 dispatch
 * it replaces — and workgroup 0 stores the sum in slot `slot`; ρ is a scalar operand. β is
 * formed as the solvers' derived scalar ρ'/ρ is (1·ρ' then / ρ), and the update as axpby's
 * (1·r + β·p; β = 0 ignores p, even NaN), so the pass gives the bits of dot stage 2 + axpby.
 * Correct for any workgroup count: no workgroup reads what another writes in this pass.
 */
export function cgDirectionWgsl(): string {
  return `${preamble(
    [
      ['n', 'u32'],
      ['groups', 'u32'],
      ['count', 'u32'],
      ['first', 'u32'],
      ['slot', 'u32'],
      ['rho_num', 'i32'],
      ['rho_den', 'i32'],
      ['rho_k', 'f32'],
    ],
    CG_DIRECTION_BINDINGS,
  )}
${SCALAR_OPERAND}
${workgroupSum('red', WG)}
@compute @workgroup_size(${WG})
fn main(${entryArgs()}) {
${everyGroupShare()}
  let rr = red_sum(lid, ps);
  if (g == 0u && lid == 0u) { sc[u.slot] = rr; }
  var beta = 1.0 * rr;
  beta = beta / operand(u.rho_num, u.rho_den, u.rho_k);
  let base = g * ${DOT_CHUNK}u + lid;
  for (var k = 0u; k < ${DOT_ITEMS}u; k++) {
    let i = base + k * ${WG}u;
    if (i < u.n) {
      if (beta == 0.0) { p[i] = 1.0 * r[i]; } else { p[i] = 1.0 * r[i] + beta * p[i]; }
    }
  }
}`;
}
