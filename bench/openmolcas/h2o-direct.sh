#!/usr/bin/env bash
# `gpusparse ci --backend cpu --sigma direct --multiplicity 1` against OpenMolcas CASCI on H2O/6-31G
# (CheMPS2's FCIDUMP; OpenMolcas builds its own integrals from the same basis and geometry),
# interleaved on the same machine, 2 threads each, one ¹A1 root, repeated.
#
#   bench/openmolcas/h2o-direct.sh [repeats=3] [case=full|fc] [extra gpusparse args...]
#
# Ours runs twice per repeat, right after OpenMolcas: `residual` (the default stop, ‖H v − E v‖ ≤
# 1e-8 Eh) and `energy` (`--energy-change $ENERGY_CHANGE`, default 1e-8 Eh: OpenMolcas-style, see
# docs/guides/ci-direct.md for what it does not certify). Run `pnpm build` first: the bin then runs
# the built JavaScript (no tsx start-up) as long as no src/ is newer than its dist/.
#
# OpenMolcas: stage 1 (gateway, seward, scf) once, untimed; then per repeat the RASSCF CIOnly
# stage (h2o-631g.casci-<case>.input) under /usr/bin/time. Ours: the whole CLI process under
# /usr/bin/time (tsx start-up, FCIDUMP read, string tables, Davidson, ⟨S²⟩ included). Prints one
# TSV line per run: who, repeat, load average (1 min) before the run, wall s, user s, system s,
# peak RSS kB, energy.
#
# BUNDLE=1 (a what-if, not how the CLI ships): also runs the same built CLI bundled into one file by
# esbuild (tsx's copy in node_modules/.pnpm; `webgpu` left external), rows `bundled-<stop>`: what
# module resolution and linking of the ≈ 220 dist files cost against one file.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
repeats="${1:-3}"
case="${2:-full}"
shift $(( $# > 2 ? 2 : $# ))
fcidump="${FCIDUMP:-/work/shared/data/fcidump/H2O_631g_chemps2.FCIDUMP}"
space=()
[ "$case" = fc ] && space=(--space cas:8,12)
py="${PYMOLCAS_PYTHON:-/usr/bin/python3}"
pymolcas=("$py" "$(command -v pymolcas)")
work="$(mktemp -d /tmp/h2o-direct.XXXXXX)"
export MOLCAS_WORKDIR="$work/wd" MOLCAS_PROJECT=h2o Project=h2o OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2
mkdir -p "$MOLCAS_WORKDIR"
cp "$here/h2o-631g.scf.input" "$here/h2o-631g.casci-$case.input" "$work/"
(cd "$work" && "${pymolcas[@]}" h2o-631g.scf.input >scf.log 2>&1) || { echo "OpenMolcas SCF failed: $work/scf.log" >&2; exit 4; }
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores; OpenMolcas $(dpkg-query -W -f '${Version}' openmolcas 2>/dev/null || echo '?'); node $(node --version); case $case" >&2
# which code ours runs: the bin takes the sources through tsx (≈ 1.5 CPU s more start-up) when any src/ is newer than its dist/
cli_path() {
  local p
  for p in "$root"/packages/*/; do
    [ -d "$p/src" ] || continue
    if [ ! -f "$p/dist/index.js" ] || [ -n "$(find "$p/src" -newer "$p/dist/index.js" -print -quit)" ]; then echo "sources (tsx): $(basename "$p") has no build or src/ newer than dist/"; return; fi
  done
  echo "built dist/"
}
echo "# gpusparse CLI: $(cli_path)" >&2
runners=(gpusparse)
if [ "${BUNDLE:-0}" = 1 ]; then
  esb="$(ls -d "$root"/node_modules/.pnpm/esbuild@*/node_modules/esbuild/bin/esbuild 2>/dev/null | head -1)"
  [ -x "$esb" ] || { echo "BUNDLE=1: no esbuild under node_modules/.pnpm" >&2; exit 4; }
  "$esb" "$root/packages/cli/dist/main.js" --bundle --platform=node --format=esm --conditions=gpusparse-dist --external:webgpu \
    --banner:js="import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" --log-level=warning --outfile="$work/bundle/main.mjs"
  printf 'import { main } from "./main.mjs";\nprocess.exitCode = await main(process.argv.slice(2));\n' >"$work/bundle/run.mjs"
  runners+=(bundled)
fi
printf 'who\trep\tload1\twall_s\tuser_s\tsys_s\tmaxrss_kB\tenergy\n'
stops=(residual energy)
for rep in $(seq 1 "$repeats"); do
  load=$(cut -d' ' -f1 /proc/loadavg)
  (cd "$work" && /usr/bin/time -f '%e\t%U\t%S\t%M' -o molcas.t "${pymolcas[@]}" "h2o-631g.casci-$case.input" >casci.log 2>&1)
  grep -q '_RC_ALL_IS_WELL_' "$work/casci.log" || { echo "OpenMolcas CASCI failed: $work/casci.log" >&2; exit 4; }
  e=$(awk '/RASSCF root number  1 Total energy:/ { print $NF; exit }' "$work/casci.log")
  printf 'openmolcas\t%s\t%s\t%s\t%s\n' "$rep" "$load" "$(cat "$work/molcas.t")" "$e"
  for runner in "${runners[@]}"; do
    entry=(--conditions=gpusparse-dist packages/cli/bin/gpusparse.mjs)
    [ "$runner" = bundled ] && entry=("$work/bundle/run.mjs")
    for stop in "${stops[@]}"; do
      extra=()
      [ "$stop" = energy ] && extra=(--energy-change "${ENERGY_CHANGE:-1e-8}")
      load=$(cut -d' ' -f1 /proc/loadavg)
      (cd "$root" && /usr/bin/time -f '%e\t%U\t%S\t%M' -o "$work/ours.t" node "${entry[@]}" ci "$fcidump" --irrep 1 --backend cpu \
        --sigma direct --multiplicity 1 "${space[@]}" --json "${extra[@]}" "$@" >"$work/ours.json" 2>"$work/ours.err")
      e=$(node -e 'const j=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8")); console.log(j.energies[0].toFixed(10), "iters", j.solver?.iterations ?? j.iterations, "res", j.residualNorms[0].toExponential(1), "s2", j.s2[0].toExponential(1))' "$work/ours.json")
      printf '%s-%s\t%s\t%s\t%s\t%s\n' "$runner" "$stop" "$rep" "$load" "$(cat "$work/ours.t")" "$e"
    done
  done
done
echo "# gpusparse CLI at end: $(cli_path)" >&2
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg); work dir $work" >&2
