#!/usr/bin/env bash
# Time to solution: OpenMolcas CASCI (RASSCF CIONLY, every orbital active = FCI) vs our host-only
# FCI (ciEnergies: float64 CSR assembly + Davidson) on the same molecules, same machine, CPU only.
# Installs nothing. Prints a markdown table and writes the raw measurements to $OUT_DIR/raw.tsv.
#
#   bench/openmolcas/run.sh [repeats=3] [systems="h4 h8 h10 n2 n2-bse"] [threads="1 2"]
#
# OpenMolcas side, per system, thread count and repeat: stage 1 (gateway, seward, scf) and stage 2
# (rasscf CIONLY) of the *.input file are run as two pymolcas calls on one WorkDir, so that the
# CASCI step is timed on its own: "rasscf module s" = Total of RASSCF's own Timings table (wall,
# MOLCAS_PRINT=VERBOSE), "rasscf run s" = wall of the stage-2 pymolcas call (driver start-up
# included), "whole s" = stage 1 + stage 2 walls. The best (lowest rasscf module time) repeat is kept.
# Our side: `pnpm -s tsx bench/openmolcas/ours.ts FCIDUMP --workers 0|auto` (0 = one thread,
# auto = 1 worker on 2 cores); assembly and solve from its timings, "process s" = wall of the whole
# node process (tsx start-up and FCIDUMP read included). Best of the repeats by assembly + solve.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
repeats="${1:-3}"
systems="${2:-h4 h8 h10 n2 n2-bse}"
threads="${3:-1 2}"
fcidumps="${FCIDUMP_DIR:-$root/../shared/data/fcidump}"
[ -d "$fcidumps" ] || fcidumps=/work/shared/data/fcidump

if ! command -v pymolcas >/dev/null 2>&1; then
  echo "pymolcas not found. Install OpenMolcas (Debian bookworm package openmolcas 22.10):" >&2
  echo "  sudo apt-get update && sudo apt-get install -y openmolcas   # optional: hdf5-tools (h5dump, full-precision energies)" >&2
  exit 3
fi
# pymolcas 22.10 parses its input with pyparsing; a newer pyparsing (3.3 in a pyenv/venv python3
# first on PATH) makes it fail with a SyntaxError traceback. Run it with Debian's python3
# (python3-pyparsing 3.0.9) unless PYMOLCAS_PYTHON says otherwise.
py="${PYMOLCAS_PYTHON:-/usr/bin/python3}"
pymolcas=("$py" "$(command -v pymolcas)")
have_h5dump=0
command -v h5dump >/dev/null 2>&1 && have_h5dump=1

declare -A fcidump=(
  [h4]=H4_sto6g_R1.8_block2.FCIDUMP [h8]=H8_sto6g_R1.8_block2.FCIDUMP [h10]=H10_sto6g_R1.8_block2.FCIDUMP
  [n2]=N2_sto3g_R1.1A_block2.FCIDUMP [n2-bse]=N2_sto3g_R1.1A_block2.FCIDUMP
)

work="$(mktemp -d /tmp/openmolcas-bench.XXXXXX)"
OUT_DIR="${OUT_DIR:-$work}"
mkdir -p "$OUT_DIR"
raw="$OUT_DIR/raw.tsv"
: >"$raw"
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

echo "# $(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
echo "# OpenMolcas $(dpkg-query -W -f '${Version}' openmolcas 2>/dev/null || echo '(version unknown)'), pymolcas run by $py; node $(node --version); h5dump: $have_h5dump" >&2

for sys in $systems; do
  input="$here/$sys.input"
  [ -f "$input" ] || { echo "missing $input" >&2; exit 2; }
  awk '/^&RASSCF/ { exit } { print }' "$input" >"$work/$sys.s1.input"
  awk '/^&RASSCF/ { p = 1 } p' "$input" >"$work/$sys.s2.input"
  for nt in $threads; do
    for rep in $(seq 1 "$repeats"); do
      wd="$work/wd"
      rm -rf "$wd" && mkdir -p "$wd"
      export MOLCAS_WORKDIR="$wd" MOLCAS_PRINT=VERBOSE Project="$sys" OMP_NUM_THREADS="$nt" OPENBLAS_NUM_THREADS="$nt"
      (cd "$work" && t0=$(now) && "${pymolcas[@]}" "$sys.s1.input" >"$sys.s1.log" 2>&1 && secs "$t0" "$(now)" >"$sys.s1.t")
      (cd "$work" && t0=$(now) && "${pymolcas[@]}" "$sys.s2.input" >"$sys.s2.log" 2>&1 && secs "$t0" "$(now)" >"$sys.s2.t")
      log="$work/$sys.s2.log"
      grep -q '_RC_ALL_IS_WELL_' "$log" || { echo "OpenMolcas failed on $sys; log: $log" >&2; exit 4; }
      e=$(awk '/RASSCF root number  1 Total energy:/ { print $NF }' "$log")
      if [ "$have_h5dump" = 1 ]; then
        e=$(h5dump -m '%.15g' -d ROOT_ENERGIES "$wd/$sys/$sys.rasscf.h5" | awk '/\(0\):/ { print $2; exit }')
      fi
      module=$(awk '/^ +Total +:/ { print $3; exit }' "$log")
      ciopt=$(awk '/- CI optimization +:/ { print $5; exit }' "$log")
      csf=$(awk '/Number of CSFs/ { print $NF; exit }' "$log")
      det=$(awk '/Number of determinants/ { print $NF; exit }' "$log")
      printf 'molcas\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$sys" "$nt" "$rep" "$e" "$module" "$ciopt" \
        "$(cat "$work/$sys.s2.t")" "$(cat "$work/$sys.s1.t")" "$csf" "$det" >>"$raw"
      tail -1 "$raw" >&2
    done
  done
done

for sys in $systems; do
  f="$fcidumps/${fcidump[$sys]}"
  for w in 0 auto; do
    for rep in $(seq 1 "$repeats"); do
      t0=$(now)
      json=$(cd "$root" && pnpm -s tsx bench/openmolcas/ours.ts "$f" --workers "$w")
      printf 'ours\t%s\t%s\t%s\t%s\t%s\n' "$sys" "$w" "$rep" "$(secs "$t0" "$(now)")" "$json" >>"$raw"
      tail -1 "$raw" | cut -c1-200 >&2
    done
  done
done
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

python3 - "$raw" "$systems" <<'EOF'
import json, sys
raw, systems = sys.argv[1], sys.argv[2].split()
mol, ours = {}, {}
for line in open(raw):
    f = line.rstrip('\n').split('\t')
    if f[0] == 'molcas':
        _, s, nt, rep, e, module, ciopt, s2, s1, csf, det = f
        r = dict(e=float(e), module=float(module), ciopt=float(ciopt), run=float(s2), whole=float(s1) + float(s2), csf=csf, det=det)
        k = (s, nt)
        if k not in mol or r['module'] < mol[k]['module']:
            mol[k] = r
    else:
        _, s, w, rep, proc, js = f
        j = json.loads(js)
        r = dict(e=j['energy'], asm=j['timings']['assembly'] / 1e3, solve=j['timings']['solve'] / 1e3, call=j['wallMs'] / 1e3,
                 proc=float(proc), workers=j['workers'], dets=j['determinants'], nnz=j['nnz'], iters=j['iterations'])
        k = (s, w)
        if k not in ours or r['asm'] + r['solve'] < ours[k]['asm'] + ours[k]['solve']:
            ours[k] = r
print('| system | determinants (ours; OpenMolcas CSFs / dets) | OpenMolcas energy (Eh) | our energy (Eh) | abs dE | OpenMolcas threads | OpenMolcas rasscf module s (CI opt) | rasscf run s / whole s | ours workers | ours assembly + solve s | ours ciEnergies s / process s | ratio ours (asm+solve) / OpenMolcas module | ratio ours process / OpenMolcas whole |')
print('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
for s in systems:
    nts = sorted({k[1] for k in mol if k[0] == s})
    ws = [k[1] for k in ours if k[0] == s]
    for nt, w in zip(nts, ws):
        m, o = mol[(s, nt)], ours[(s, w)]
        ao = o['asm'] + o['solve']
        print(f"| {s} | {o['dets']} ({m['csf']} / {m['det']}) | {m['e']:.12f} | {o['e']:.12f} | {abs(m['e'] - o['e']):.1e} | {nt} | {m['module']:.2f} ({m['ciopt']:.2f}) | {m['run']:.2f} / {m['whole']:.2f} | {o['workers']} ({w}) | {o['asm']:.2f} + {o['solve']:.2f} = {ao:.2f} | {o['call']:.2f} / {o['proc']:.2f} | {ao / m['module']:.1f} | {o['proc'] / m['whole']:.1f} |")
EOF
echo "# raw measurements: $raw" >&2
