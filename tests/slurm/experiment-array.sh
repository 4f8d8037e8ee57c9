#!/usr/bin/env bash
# gpusched-experiment --slurm-array --submit on a throw-away local Slurm (local-slurm.sh): the
# array's tasks each run one (policy, seed) cell, the dependent merge builds the outputs, and
# they equal a local --jobs 1 run byte for byte (the table and every file, run.json aside).
#
#   tests/slurm/experiment-array.sh GPUSCHED_EXPERIMENT WORK_DIR NODE_CSV POD_CSV
#
# Exit 0: equal; 1: a failure; 77: skipped (Slurm not installed, or not root).
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin="${1:?usage: experiment-array.sh GPUSCHED_EXPERIMENT WORK_DIR NODE_CSV POD_CSV}"
work="${2:?}"
nodes="${3:?}"
pods="${4:?}"
for b in munged slurmctld slurmd sbatch squeue scontrol; do
  if ! command -v "${b}" >/dev/null; then
    echo "SKIPPED: '${b}' not found; the live Slurm tests need the Debian packages slurm-wlm and munge"
    exit 77
  fi
done
if [[ "$(id -u)" != 0 ]]; then
  echo "SKIPPED: the live Slurm tests need root (slurmd runs the jobs as their owner)"
  exit 77
fi
rm -rf "${work}"
mkdir -p "${work}"
work="$(cd "${work}" && pwd)"
cd "${work}"
cluster="${work}/cluster"
cleanup() { "${here}/local-slurm.sh" stop "${cluster}"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
"${here}/local-slurm.sh" start "${cluster}" 2 || { echo "FAIL: the local Slurm did not start"; exit 1; }
export SLURM_CONF="${cluster}/slurm.conf"
for _ in $(seq 1 100); do squeue -h >/dev/null 2>&1 && break; sleep 0.2; done

args=(packing --nodes "${nodes}" --pods "${pods}" --policy fgd,bestfit --seeds 1-3 --no-timing)
"${bin}" "${args[@]}" --slurm-array --submit --out "${work}/array" || { echo "FAIL: --submit"; exit 1; }
# the merge job writes slurm/table.txt last; wait until no job of ours is left (at most 180 s)
for _ in $(seq 1 900); do
  [[ -z "$(squeue -h -o %i 2>/dev/null)" ]] && break
  sleep 0.2
done
if [[ -n "$(squeue -h -o %i 2>/dev/null)" ]]; then
  echo "FAIL: jobs still queued after 180 s:"; squeue; exit 1
fi
ls "${work}/array/cells" | sort -n | tr '\n' ' '; echo "<- cells written by the array tasks"
[[ -s "${work}/array/slurm/table.txt" ]] || {
  echo "FAIL: the merge job wrote no table"; cat "${work}/array/slurm/"*.out 2>/dev/null; exit 1
}
"${bin}" "${args[@]}" --jobs 1 --out "${work}/local" > "${work}/local.txt" || { echo "FAIL: local run"; exit 1; }
if ! diff <(sed "s|${work}/local|OUT|g" "${work}/local.txt") \
          <(sed "s|${work}/array|OUT|g" "${work}/array/slurm/table.txt"); then
  echo "FAIL: the merged table differs from the local run's"; exit 1
fi
n=0
for f in "${work}/local"/*; do
  name="$(basename "${f}")"
  [[ ${name} == run.json ]] && continue
  cmp "${f}" "${work}/array/${name}" || { echo "FAIL: ${name} differs"; exit 1; }
  n=$((n + 1))
done
[[ ${n} -gt 0 ]] || { echo "FAIL: nothing to compare"; exit 1; }
echo "PASS: 6 array tasks and the merge job on the local Slurm; the table and ${n} files equal the local --jobs 1 run"
