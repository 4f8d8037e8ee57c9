#!/usr/bin/env bash
# gpusched-experiment --slurm-array --submit on a throw-away local Slurm (local-slurm.sh): the
# array's tasks each run one (policy, seed) cell, the dependent merge builds the outputs, and
# they equal a local --jobs 1 run byte for byte (the table and every file, run.json aside).
#
#   tests/slurm/experiment-array.sh GPUSCHED_EXPERIMENT WORK_DIR NODE_CSV POD_CSV [GPUSCHED_SLURM]
#
# With GPUSCHED_SLURM, the cluster is one gpusched schedules: apps/slurm/job_submit.lua holds
# every job at submission (JobSubmitPlugins=lua) and `GPUSCHED_SLURM --interval 1` runs beside
# it, splitting the held array task by task (scontrol update JobId=<array>_<task>), releasing
# each, and releasing the merge job once its afterok dependency is satisfied (Slurm does not
# test a held job's dependency); it is stopped by SIGTERM once the queue is empty.
#
# Exit 0: equal; 1: a failure; 77: skipped (Slurm not installed, or not root).
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin="${1:?usage: experiment-array.sh GPUSCHED_EXPERIMENT WORK_DIR NODE_CSV POD_CSV}"
work="${2:?}"
nodes="${3:?}"
pods="${4:?}"
bridge="${5:-}"
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
bridge_pid=""
cleanup() {
  [[ -n "${bridge_pid}" ]] && kill -TERM "${bridge_pid}" 2>/dev/null && wait "${bridge_pid}"
  "${here}/local-slurm.sh" stop "${cluster}"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
if [[ -n "${bridge}" ]]; then
  export GPUSCHED_SLURM_JOB_SUBMIT="${here}/../../apps/slurm/job_submit.lua"
fi
"${here}/local-slurm.sh" start "${cluster}" 2 || { echo "FAIL: the local Slurm did not start"; exit 1; }
export SLURM_CONF="${cluster}/slurm.conf"
for _ in $(seq 1 100); do squeue -h >/dev/null 2>&1 && break; sleep 0.2; done

args=(packing --nodes "${nodes}" --pods "${pods}" --policy fgd,bestfit --seeds 1-3 --no-timing)
start=${SECONDS}
"${bin}" "${args[@]}" --slurm-array --submit --out "${work}/array" || { echo "FAIL: --submit"; exit 1; }
if [[ -n "${bridge}" ]]; then
  # job_submit.lua held everything: nothing runs until the bridge says so
  sleep 3
  held="$(squeue -h -o '%i %T %r' | paste -sd' ' -)"
  echo "queue before the bridge: ${held}"
  [[ -n "${held}" && -z "$(squeue -h -o '%T %r' | grep -vE '^PENDING JobHeld(User|Admin)$')" ]] ||
    { echo "FAIL: job_submit.lua did not hold every job: ${held}"; exit 1; }
  "${bridge}" --interval 1 --timeout 15 --policy ordering=fifo,admission=gang \
    >"${work}/bridge.out" 2>&1 &
  bridge_pid=$!
fi
# the merge job writes slurm/table.txt last; wait until no job of ours is left (at most 180 s)
for _ in $(seq 1 900); do
  [[ -z "$(squeue -h -o %i 2>/dev/null)" ]] && break
  sleep 0.2
done
if [[ -n "$(squeue -h -o %i 2>/dev/null)" ]]; then
  echo "FAIL: jobs still queued after 180 s:"; squeue; [[ -n "${bridge}" ]] && cat "${work}/bridge.out"; exit 1
fi
echo "array and merge finished in $((SECONDS - start)) s"
if [[ -n "${bridge}" ]]; then
  kill -TERM "${bridge_pid}"
  wait "${bridge_pid}"
  rc=$?
  bridge_pid=""
  grep -E '^(run|issue):' "${work}/bridge.out"
  [[ ${rc} == 0 ]] || { echo "FAIL: gpusched-slurm ended with status ${rc}"; cat "${work}/bridge.out"; exit 1; }
  grep -q 'stopped after [0-9]* cycles' "${work}/bridge.out" || { echo "FAIL: the bridge did not stop cleanly"; exit 1; }
  # every task was split off and released by its ARRAY_TASK name, each once; the merge once
  for t in 0 1 2 3 4 5; do
    [[ "$(grep -cE "^run: scontrol release [0-9]+_${t}$" "${work}/bridge.out")" == 1 ]] ||
      { echo "FAIL: task ${t} was not released once as <array>_${t}"; exit 1; }
  done
  [[ "$(grep -cE '^run: scontrol release [0-9]+$' "${work}/bridge.out")" == 1 ]] ||
    { echo "FAIL: the merge job was not released once"; exit 1; }
  ! grep -qE "failed|did not answer" "${work}/bridge.out" || { echo "FAIL: a command failed"; exit 1; }
  # afterok: the merge started only after every task had ended (Slurm's own record of it)
  squeue --json | python3 -c '
import json, sys
jobs = json.load(sys.stdin)["jobs"]
tasks = [j for j in jobs if j["array_job_id"]]
merge = [j for j in jobs if not j["array_job_id"]]
assert len(tasks) == 6 and len(merge) == 1, (len(tasks), len(merge))
assert all(j["job_state"] == "COMPLETED" for j in jobs), [j["job_state"] for j in jobs]
last_end = max(j["end_time"] for j in tasks)
assert merge[0]["start_time"] >= last_end, (merge[0]["start_time"], last_end)
print("merge started at %d, after the last task ended at %d" % (merge[0]["start_time"], last_end))
' || { echo "FAIL: the tasks and the merge, as Slurm recorded them"; exit 1; }
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
echo "PASS: 6 array tasks and the merge job on the local Slurm${bridge:+ scheduled by gpusched-slurm under job_submit.lua}; the table and ${n} files equal the local --jobs 1 run"
