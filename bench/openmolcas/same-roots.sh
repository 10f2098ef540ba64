#!/usr/bin/env bash
# The same roots in both codes (issue 19's host target): `gpusparse ci --backend cpu --sigma direct`
# against OpenMolcas CASCI (RASSCF CIOnly, every orbital active = FCI), 2 threads each, alternating
# in every round, on FCIDUMPs that OpenMolcas writes from the same orbitals (RASSCF DMPOnly):
#
#   h2o-s  H2O/6-31G (13 orbitals, 10 electrons), 3 singlets in each of the four C2v irreps (12 roots)
#   ch2-s  CH2/6-31G (13 orbitals, 8 electrons),   3 singlets in each irrep (12 roots)
#   ch2-t  CH2/6-31G,                              3 triplets in each irrep (12 roots; ours at MS2 = 0, odd S)
#
#   bench/openmolcas/same-roots.sh [repeats=3] [cases="h2o-s ch2-s ch2-t"] [extra gpusparse args...]
#
# OpenMolcas: one pymolcas process per case (four &RASSCF sections, h2o-631g.same-s.input etc.;
# each section copies its rasscf.h5 to roots.<irrep>.h5, whose ROOT_ENERGIES give full-precision
# energies). Ours: one CLI process per case and stop rule (`--irrep 1,2,3,4 --nroots 3
# --multiplicity 1|3`), right after OpenMolcas: `bound` (the default: certified 0 ≤ E − λ ≤ 1e-8 Eh by the
# Lehmann–Temple bound with ‖H v − E v‖ ≤ 1e-4, docs/guides/ci.md), `residual` (`--tol-residual 1e-8`:
# ‖H v − E v‖ ≤ 1e-8 Eh) and `energy` (`--energy-change 1e-8`: OpenMolcas' own rule, its RASSCF energy
# threshold 1e-8, not certified); STOPS="bound" runs only the first.
# Both under /usr/bin/time: wall, user, system, peak RSS. Energies compared root by root (irrep by
# irrep); a run whose largest |ΔE| exceeds 1e-8 Eh, or whose ⟨S²⟩ is off the multiplicity by
# > 1e-6, is flagged `MISMATCH`. Run `pnpm build` first (the bin runs dist/ unless a src/ is newer).
#
# Prints one TSV line per run (who, case, round, load average before the run, wall s, user s,
# system s, peak RSS kB, ours/OpenMolcas wall and CPU ratios for ours, max |ΔE|, iterations per
# irrep), then the medians per case and code. RAW=file also keeps the lines.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
repeats="${1:-3}"
cases="${2:-h2o-s ch2-s ch2-t}"
shift $(( $# > 2 ? 2 : $# ))
py="${PYMOLCAS_PYTHON:-/usr/bin/python3}"
command -v pymolcas >/dev/null || { echo "pymolcas not found (Debian package openmolcas 22.10)" >&2; exit 3; }
pymolcas=("$py" "$(command -v pymolcas)")
work="$(mktemp -d /tmp/same-roots.XXXXXX)"
export OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores; OpenMolcas $(dpkg-query -W -f '${Version}' openmolcas 2>/dev/null || echo '?'); node $(node --version); cases $cases; work $work" >&2

# stage 1 per molecule, untimed: SCF orbitals and the FCIDUMP over all of them
prepare() { # mol
  local d="$work/$1"
  mkdir -p "$d/wd"
  cp "$here/$1-631g.scf.input" "$here/$1-631g.fcidump.input" "$here"/"$1"-631g.same-*.input "$d/"
  (cd "$d" && export MOLCAS_WORKDIR="$d/wd" MOLCAS_PROJECT="$1" Project="$1" && "${pymolcas[@]}" "$1-631g.scf.input" >scf.log 2>&1 && "${pymolcas[@]}" "$1-631g.fcidump.input" >fcidump.log 2>&1) ||
    { echo "OpenMolcas stage 1 failed: $d/scf.log, $d/fcidump.log" >&2; exit 4; }
  cp "$d/$1.FciDmp" "$d/$1.FCIDUMP"
}
for mol in $(for c in $cases; do echo "${c%%-*}"; done | sort -u); do prepare "$mol"; done

molcas_run() { # case round -> prints the row, leaves energies in $d/molcas.e (irrep root E per line)
  local c="$1" mol="${1%%-*}" spin="${1##*-}" d="$work/${1%%-*}"
  local load; load=$(cut -d' ' -f1 /proc/loadavg)
  rm -f "$d"/roots.*.h5
  (cd "$d" && export MOLCAS_WORKDIR="$d/wd" MOLCAS_PROJECT="$mol" Project="$mol" &&
    /usr/bin/time -f '%e\t%U\t%S\t%M' -o molcas.t "${pymolcas[@]}" "$mol-631g.same-$spin.input" >"same-$spin.log" 2>&1) || true
  grep -q '_RC_ALL_IS_WELL_' "$d/same-$spin.log" || { echo "OpenMolcas CASCI failed: $d/same-$spin.log" >&2; exit 4; }
  : >"$d/molcas.e"
  for s in 1 2 3 4; do
    # the dataset's DATA block only (the DESCRIPTION attribute has a DATA block of its own after it)
    h5dump -d ROOT_ENERGIES -m '%.12f' "$d/roots.$s.h5" |
      awk -v s="$s" '/^ *DATA \{/ { on = 1; next } on && /}/ { exit } on { gsub(/\([0-9]+\):/, ""); n = split($0, a, /[ ,]+/); for (i = 1; i <= n; i++) if (a[i] != "") print s, k++, a[i] }' >>"$d/molcas.e"
  done
  printf 'openmolcas\t%s\t%s\t%s\t%s\n' "$c" "$2" "$load" "$(cat "$d/molcas.t")"
}

ours_run() { # case round stop extra... -> prints the row with ratios to the OpenMolcas run just before
  local c="$1" round="$2" mol="${1%%-*}" spin="${1##*-}" d="$work/${1%%-*}"
  shift 2
  local m=1; [ "$spin" = t ] && m=3
  local stop=() rule="$1"
  shift
  [ "$rule" = energy ] && stop=(--energy-change 1e-8)
  [ "$rule" = residual ] && stop=(--tol-residual 1e-8)
  local load; load=$(cut -d' ' -f1 /proc/loadavg)
  (cd "$root" && /usr/bin/time -f '%e\t%U\t%S\t%M' -o "$d/ours.t" node --conditions=gpusparse-dist packages/cli/bin/gpusparse.mjs ci "$d/$mol.FCIDUMP" \
    --backend cpu --sigma direct --irrep 1,2,3,4 --nroots 3 --multiplicity "$m" --json "${stop[@]}" "$@" >"$d/ours.json" 2>"$d/ours.err") || { echo "ours failed: $d/ours.err" >&2; exit 4; }
  local cmp
  cmp=$(node -e '
    const fs = require("fs");
    const [json, molcas, mt, ot, mult] = process.argv.slice(1);
    const m = Number(mult);
    const j = JSON.parse(fs.readFileSync(json, "utf8"));
    const ref = fs.readFileSync(molcas, "utf8").trim().split("\n").map((l) => l.split(" ").map(Number));
    const target = ((m - 1) / 2) * ((m + 1) / 2);
    let de = 0, ds = 0, count = 0;
    for (const [s, k, e] of ref) {
      const run = j.irreps.find((r) => r.irrep === s);
      de = Math.max(de, Math.abs(run.energies[k] - e));
      ds = Math.max(ds, Math.abs(run.s2[k] - target));
      count++;
    }
    const [mw, mu, ms] = fs.readFileSync(mt, "utf8").split("\t").map(Number);
    const [ow, ou, os] = fs.readFileSync(ot, "utf8").split("\t").map(Number);
    const flag = de > 1e-8 || ds > 1e-6 || count !== 12 ? "MISMATCH" : "ok";
    console.log([(ow / mw).toFixed(2), ((ou + os) / (mu + ms)).toFixed(2), de.toExponential(1), flag + " " + count + " roots, max |dS2| " + ds.toExponential(1) + ", iterations " + j.irreps.map((r) => r.solver.iterations).join("/")].join("\t"));
  ' "$d/ours.json" "$d/molcas.e" "$d/molcas.t" "$d/ours.t" "$m")
  printf 'gpusparse-%s\t%s\t%s\t%s\t%s\t%s\n' "$rule" "$c" "$round" "$load" "$(cat "$d/ours.t")" "$cmp"
}

raw="${RAW:-$work/raw.tsv}"
printf 'who\tcase\tround\tload1\twall_s\tuser_s\tsys_s\tmaxrss_kB\twall_ratio\tcpu_ratio\tmax_dE\tcheck\n' | tee "$raw"
for round in $(seq 1 "$repeats"); do
  for c in $cases; do
    molcas_run "$c" "$round" | tee -a "$raw"
    for rule in ${STOPS:-bound residual energy}; do ours_run "$c" "$round" "$rule" "$@" | tee -a "$raw"; done
  done
done
# medians per case and code: wall, CPU (user + sys), RSS; and of the per-round ratios
awk -F'\t' 'NR > 1 { k = $2 "\t" $1; w[k] = w[k] " " $5; u[k] = u[k] " " ($6 + $7); r[k] = r[k] " " $8; if ($1 ~ /^gpusparse/) { wr[k] = wr[k] " " $9; cr[k] = cr[k] " " $10 } }
  function med(s,   a, n, i, j, t) { n = split(s, a, " "); for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t } return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
  END { print "# medians: case, code, wall s, CPU s, peak RSS MB; ours/OpenMolcas per round (wall; CPU)"; for (k in w) { split(k, p, "\t"); printf "# %s\t%s\t%.2f\t%.2f\t%.0f%s\n", p[1], p[2], med(w[k]), med(u[k]), med(r[k]) / 1024, p[2] ~ /^gpusparse/ ? "\twall ratios" wr[k] " (median " med(wr[k]) "); CPU ratios" cr[k] " (median " med(cr[k]) ")" : "" } }' "$raw" | sort
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg); work dir $work" >&2
