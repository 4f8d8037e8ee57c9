#!/usr/bin/env bash
# Live scenarios of gpusched-slurm against a throw-away local Slurm (tests/slurm/local-slurm.sh).
#
#   tests/slurm/live.sh GPUSCHED_SLURM_BINARY WORK_DIR [SCENARIO...]
#
# Starts munge, slurmctld and four slurmd in WORK_DIR/cluster, runs the scenarios (all by
# default: gang dry-run drf backfill preempt checkpoint topology interval partitions array
# failing-scontrol down), and stops every daemon on exit
# (also on failure or interrupt). Exit 0: all passed; 1: a scenario failed; 77: skipped because
# Slurm is not installed or we are not root (CTest reports it as skipped).
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin="${1:?usage: live.sh GPUSCHED_SLURM_BINARY WORK_DIR [SCENARIO...]}"
work="${2:?usage: live.sh GPUSCHED_SLURM_BINARY WORK_DIR [SCENARIO...]}"
shift 2
scenarios=("$@")
[[ ${#scenarios[@]} -gt 0 ]] ||
  scenarios=(gang dry-run drf backfill preempt checkpoint topology interval partitions array failing-scontrol down)

for b in munged slurmctld slurmd sbatch squeue sinfo scontrol scancel; do
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
cd "${work}" # job output files (slurm-N.out) land here
cluster="${work}/cluster"
cleanup() { "${here}/local-slurm.sh" stop "${cluster}"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
"${here}/local-slurm.sh" start "${cluster}" 4 || { echo "FAIL: the local Slurm did not start"; exit 1; }
export SLURM_CONF="${cluster}/slurm.conf"
topo="${cluster}/topology.conf"

failures=0
passed=()
current=""
fail() {
  echo "FAIL [${current}]: $*"
  failures=$((failures + 1))
  return 1
}
check() { # check DESCRIPTION COMMAND...
  local what="$1"
  shift
  if "$@"; then echo "  ok: ${what}"; else fail "${what}"; fi
}

# submit ARGS...: a held batch job; prints its id
submit() { sbatch -H --parsable "$@" | cut -d';' -f1; }
state() { squeue -h -j "$1" -o '%T' 2>/dev/null | head -n1; }
reason() { squeue -h -j "$1" -o '%r' 2>/dev/null | head -n1; }
nodes_of() { scontrol show hostnames "$(squeue -h -j "$1" -o '%N' | head -n1)" | paste -sd, -; }
# wait_state JOB STATE [SECONDS]
wait_state() {
  local t=$((${3:-15} * 5))
  for _ in $(seq 1 "${t}"); do
    [[ "$(state "$1")" == "$2" ]] && return 0
    sleep 0.2
  done
  echo "  (job $1 is '$(state "$1")', reason '$(reason "$1")', expected $2)"
  return 1
}
# the nodes gpusched-slurm printed for JOB ("admit job N ... on n1[gpu0-3], n3[...]"), sorted
# as `scontrol show hostnames` lists them
printed_nodes() {
  grep -E "^admit job $1 " "$2" | sed -E 's/.* on //; s/\[[^]]*\]//g; s/, /\n/g' | sort -u -V |
    paste -sd, -
}
gs() { "${bin}" --once --timeout 15 "$@"; }
reset() {
  scancel --quiet -u root 2>/dev/null || true
  for _ in $(seq 1 100); do
    [[ -z "$(squeue -h -o %i 2>/dev/null)" ]] && return 0
    sleep 0.2
  done
  echo "  (jobs did not finish: $(squeue -h -o '%i %T' | paste -sd' ' -))"
  return 1
}
run_job() { echo "sleep 600"; }

scenario_gang() {
  local a b out="${work}/gang.out"
  a=$(submit -J gang2 -N2 --ntasks-per-node=1 --gpus-per-node=4 -A teama -t 10 --wrap "sleep 600")
  b=$(submit -J gang3 -N3 --ntasks-per-node=1 --gpus-per-node=8 -A teama -t 10 --wrap "sleep 600")
  gs --policy ordering=fifo,admission=gang,placement=topology --topology "${topo}" >"${out}" 2>&1 ||
    { cat "${out}"; fail "gpusched-slurm failed"; return; }
  cat "${out}"
  local chosen
  chosen="$(printed_nodes "${a}" "${out}")"
  check "the 2-node gang was admitted on two nodes (${chosen})" \
    test "$(echo "${chosen}" | tr ',' '\n' | wc -l)" = 2
  check "the 2-node gang runs" wait_state "${a}" RUNNING
  check "it runs exactly on the nodes the library chose" test "$(nodes_of "${a}")" = "${chosen}"
  check "the 3-node gang waits whole (still held)" test "$(state "${b}")" = PENDING
  check "nothing of the 3-node gang was released" test "$(squeue -h -j "${b}" -o '%r')" = JobHeldUser
  check "its reason is printed" grep -qE "^defer job ${b} 'gang3': " "${out}"
}

scenario_dry_run() {
  local a out="${work}/dry.out"
  a=$(submit -J dry -N1 --gpus-per-node=2 -A teama -t 5 --wrap "sleep 600")
  gs --dry-run >"${out}" 2>&1 || { cat "${out}"; fail "gpusched-slurm --dry-run failed"; return; }
  cat "${out}"
  check "the commands are printed" grep -q "^would run: scontrol update JobId=${a} NodeList=" "${out}"
  check "the release is printed" grep -q "^would run: scontrol release ${a}$" "${out}"
  check "nothing ran" bash -c "! grep -q '^run: ' '${out}'"
  sleep 1
  check "the job is still held" test "$(reason "${a}")" = JobHeldUser
  check "no node list was set" test -z "$(squeue -h -j "${a}" -o '%n' | tr -d ' ')"
}

scenario_drf() {
  # teama already runs 3 whole nodes; one node is left. teama's job was submitted first, but
  # DRF serves teamb, the lighter account.
  local r x y out="${work}/drf.out"
  r=$(sbatch --parsable -J a-running -N3 --gpus-per-node=8 -A teama -t 10 --wrap "sleep 600")
  wait_state "${r}" RUNNING || { fail "the pre-existing job did not start"; return; }
  x=$(submit -J a-next -N1 --gpus-per-node=8 -A teama -t 10 --wrap "sleep 600")
  sleep 1.1
  y=$(submit -J b-first -N1 --gpus-per-node=8 -A teamb -t 10 --wrap "sleep 600")
  gs --policy ordering=drf,admission=gang >"${out}" 2>&1 || { cat "${out}"; fail "gpusched-slurm failed"; return; }
  cat "${out}"
  check "the lighter account's job starts" wait_state "${y}" RUNNING
  check "the heavier account's earlier job waits" test "$(state "${x}")" = PENDING
}

scenario_backfill() {
  # a 3-node job runs 10 min; a 4-node gang waits for it (the reservation); of two 1-node
  # jobs that fit now on the free node, the 60-min one would delay the gang, the 5-min one not.
  local r big long short out="${work}/backfill.out"
  r=$(sbatch --parsable -J running -N3 --gpus-per-node=8 -A teama -t 10 --wrap "sleep 600")
  wait_state "${r}" RUNNING || { fail "the pre-existing job did not start"; return; }
  big=$(submit -J big -N4 --ntasks-per-node=1 --gpus-per-node=8 -A teama -t 10 --wrap "sleep 600")
  long=$(submit -J long -N1 --gpus-per-node=8 -A teama -t 60 --wrap "sleep 600")
  short=$(submit -J short -N1 --gpus-per-node=8 -A teama -t 5 --wrap "sleep 600")
  gs --policy ordering=fifo,admission=gang-easy >"${out}" 2>&1 ||
    { cat "${out}"; fail "gpusched-slurm failed"; return; }
  cat "${out}"
  check "the short job is backfilled" wait_state "${short}" RUNNING
  check "the long job waits (it would delay the reservation)" test "$(state "${long}")" = PENDING
  check "the 4-node gang waits" test "$(state "${big}")" = PENDING
  check "the long job's reason names the reservation" \
    grep -qiE "^defer job ${long} 'long': .*reserv" "${out}"
}

scenario_preempt() {
  # four requeueable jobs fill the cluster; an urgent job (nice -100) preempts one of them by
  # signal-then-requeue; the victim got the signal, comes back pending, and runs again later.
  local v=() u out="${work}/preempt.out" k victim
  for k in 1 2 3 4; do
    v+=("$(sbatch --parsable -J low${k} -N1 --gpus-per-node=8 -A teama -t 30 --requeue \
      --wrap "trap 'touch ${work}/signalled.\${SLURM_JOB_ID}' USR1; while true; do sleep 0.2; done")")
  done
  for k in "${v[@]}"; do wait_state "${k}" RUNNING || { fail "a low job did not start"; return; }; done
  u=$(submit -J urgent -N1 --gpus-per-node=8 -A teamb -t 10 --nice=-100 --wrap "sleep 600")
  gs --policy ordering=priority,admission=gang,preemption=priority --grace 2 --signal USR1 \
    >"${out}" 2>&1 || { cat "${out}"; fail "gpusched-slurm failed"; return; }
  cat "${out}"
  victim="$(grep -oE '^run: scancel --signal=USR1 --full [0-9]+' "${out}" | awk '{print $NF}' | head -n1)"
  check "one victim was signalled" test -n "${victim}"
  [[ -n "${victim}" ]] || return
  check "the requeue came after the signal" \
    bash -c "grep -n '' '${out}' | grep -E 'scancel|requeuehold ${victim}' | head -n1 | grep -q scancel"
  check "the victim received the checkpoint signal" test -e "${work}/signalled.${victim}"
  check "the urgent job runs" wait_state "${u}" RUNNING
  check "the victim is back in the queue, held" test "$(state "${victim}")" = PENDING
  check "the urgent job took the victim's node" test "$(nodes_of "${u}")" = \
    "$(grep -oE "admit job ${u} 'urgent' on [a-z0-9]+" "${out}" | awk '{print $NF}')"
  scancel "${u}"
  for _ in $(seq 1 100); do
    [[ "$(state "${u}")" == RUNNING || "$(state "${u}")" == COMPLETING ]] || break
    sleep 0.2
  done
  gs --policy ordering=priority,admission=gang,preemption=priority >"${out}.2" 2>&1 || true
  cat "${out}.2"
  check "the victim runs again" wait_state "${victim}" RUNNING 20
}

scenario_checkpoint() {
  # checkpoint-aware preemption: four requeueable 8-GPU jobs fill the cluster, the last one
  # started a few seconds after the others, so evicting it loses the least work (no job
  # checkpoints: the work lost is its run time). The urgent job takes its node: signal, grace,
  # requeue held; the victim comes back and runs again once the urgent job is gone.
  local v=() u out="${work}/checkpoint.out" k victim
  for k in 1 2 3; do
    v+=("$(sbatch --parsable -J old${k} -N1 --gpus-per-node=8 -A teama -t 30 --requeue \
      --wrap "trap 'touch ${work}/ckpt.\${SLURM_JOB_ID}' USR1; while true; do sleep 0.2; done")")
  done
  for k in "${v[@]}"; do wait_state "${k}" RUNNING || { fail "an old job did not start"; return; }; done
  sleep 3
  v+=("$(sbatch --parsable -J young -N1 --gpus-per-node=8 -A teama -t 30 --requeue \
    --wrap "trap 'touch ${work}/ckpt.\${SLURM_JOB_ID}' USR1; while true; do sleep 0.2; done")")
  wait_state "${v[3]}" RUNNING || { fail "the young job did not start"; return; }
  u=$(submit -J urgent -N1 --gpus-per-node=8 -A teamb -t 10 --nice=-100 --wrap "sleep 600")
  gs --policy ordering=priority,admission=gang,preemption=checkpoint-aware --grace 2 --signal USR1 \
    >"${out}" 2>&1 || { cat "${out}"; fail "gpusched-slurm failed"; return; }
  cat "${out}"
  victim="$(grep -oE '^run: scancel --signal=USR1 --full [0-9]+' "${out}" | awk '{print $NF}')"
  check "one victim, the job with the least work to lose (${victim:-none}, young = ${v[3]})" \
    test "${victim}" = "${v[3]}"
  [[ -n "${victim}" ]] || return
  check "signal, then the requeue" \
    bash -c "grep -nE 'scancel|requeuehold ${victim}' '${out}' | head -n1 | grep -q scancel"
  check "the victim received the checkpoint signal" test -e "${work}/ckpt.${victim}"
  check "the urgent job runs" wait_state "${u}" RUNNING
  check "the urgent job took the victim's node" test "$(nodes_of "${u}")" = \
    "$(grep -oE "admit job ${u} 'urgent' on [a-z0-9]+" "${out}" | awk '{print $NF}')"
  check "the victim is back in the queue, held" test "$(state "${victim}")" = PENDING
  check "the old jobs still run" bash -c \
    "for j in ${v[0]} ${v[1]} ${v[2]}; do [[ \$(squeue -h -j \$j -o %T) == RUNNING ]] || exit 1; done"
  scancel "${u}"
  for _ in $(seq 1 100); do
    [[ "$(state "${u}")" == RUNNING || "$(state "${u}")" == COMPLETING ]] || break
    sleep 0.2
  done
  gs --policy ordering=priority,admission=gang,preemption=checkpoint-aware >"${out}.2" 2>&1 || true
  cat "${out}.2"
  check "the victim runs again" wait_state "${victim}" RUNNING 20
}

scenario_failing_scontrol() {
  # a fake scontrol first on PATH fails (or hangs on) one kind of command and passes the others
  # to Slurm's: whatever fails, the job is left held with no node list, nothing half-applied
  local a out="${work}/failing.out" rc fake="${work}/fakebin" start
  mkdir -p "${fake}"
  cat >"${fake}/scontrol" <<SH
#!/usr/bin/env bash
# fails the commands matching FAKE_FAIL, hangs on FAKE_HANG; Slurm's scontrol does the rest
if [[ -n "\${FAKE_FAIL:-}" && "\$*" == \${FAKE_FAIL} ]]; then
  echo "scontrol: error: fake failure of '\$*'" >&2
  exit 1
fi
if [[ -n "\${FAKE_HANG:-}" && "\$*" == \${FAKE_HANG} ]]; then exec sleep 120; fi
exec $(command -v scontrol) "\$@"
SH
  chmod +x "${fake}/scontrol"
  a=$(submit -J gang -N2 --ntasks-per-node=1 --gpus-per-node=4 -A teama -t 10 --wrap "sleep 600")
  held_clean() { [[ "$(reason "${a}")" == JobHeldUser && -z "$(squeue -h -j "${a}" -o '%n' | tr -d ' ')" ]]; }
  # the release fails: the node list is taken back
  PATH="${fake}:${PATH}" FAKE_FAIL='release *' gs --policy ordering=fifo,admission=gang >"${out}.release" 2>&1
  rc=$?
  cat "${out}.release"
  check "a failed release: exit status 1 (${rc})" test "${rc}" = 1
  check "it names the command" grep -q "'scontrol release ${a}' failed: scontrol: error: fake failure" "${out}.release"
  check "the node list was cleared" grep -q "^run: scontrol update JobId=${a} NodeList=$" "${out}.release"
  check "the job is held as before, no node list" held_clean
  # setting the node list fails: nothing is released
  PATH="${fake}:${PATH}" FAKE_FAIL='update *' gs --policy ordering=fifo,admission=gang >"${out}.update" 2>&1
  rc=$?
  cat "${out}.update"
  check "a failed update: exit status 1 (${rc})" test "${rc}" = 1
  check "no release was tried" bash -c "! grep -q '^run: scontrol release' '${out}.update'"
  check "the job is still held, no node list" held_clean
  # the update hangs: killed after --timeout, nothing released, no hang
  start=${SECONDS}
  PATH="${fake}:${PATH}" FAKE_HANG='update *' "${bin}" --once --timeout 2 \
    --policy ordering=fifo,admission=gang >"${out}.hang" 2>&1
  rc=$?
  cat "${out}.hang"
  check "a hanging update: exit status 1 (${rc}) within $((SECONDS - start)) s" \
    bash -c "[[ ${rc} == 1 && $((SECONDS - start)) -le 15 ]]"
  check "it says it did not answer" grep -q "did not answer in time" "${out}.hang"
  check "no release was tried" bash -c "! grep -q '^run: scontrol release' '${out}.hang'"
  check "the job is still held, no node list" held_clean
  # the reads fail: nothing at all is run
  PATH="${fake}:${PATH}" FAKE_FAIL='--all --oneliner show partition' gs >"${out}.read" 2>&1
  rc=$?
  cat "${out}.read"
  check "a failed read: exit status 1 (${rc}), nothing changed" \
    bash -c "[[ ${rc} == 1 ]] && grep -q 'nothing was changed' '${out}.read' && ! grep -q '^run: ' '${out}.read'"
  # Slurm's scontrol again: the job starts
  gs --policy ordering=fifo,admission=gang >"${out}" 2>&1 || { cat "${out}"; fail "gpusched-slurm failed"; return; }
  check "with Slurm's scontrol the gang starts" wait_state "${a}" RUNNING
}

scenario_topology() {
  # leaf1 = n1,n3 and leaf2 = n2,n4 (local-slurm.sh): a 2-node gang lands under one leaf
  local a out="${work}/topology.out" chosen
  a=$(submit -J leafgang -N2 --ntasks-per-node=1 --gpus-per-node=8 -A teama -t 10 --wrap "sleep 600")
  gs --policy ordering=fifo,admission=gang,placement=topology --topology "${topo}" >"${out}" 2>&1 ||
    { cat "${out}"; fail "gpusched-slurm failed"; return; }
  cat "${out}"
  check "the gang runs" wait_state "${a}" RUNNING
  chosen="$(nodes_of "${a}")"
  check "under one leaf switch (${chosen})" bash -c "[[ '${chosen}' == n1,n3 || '${chosen}' == n2,n4 ]]"
}

scenario_interval() {
  # --interval: cycles until SIGTERM, which ends it cleanly between cycles
  local a out="${work}/interval.out" pid rc
  "${bin}" --interval 1 --timeout 15 >"${out}" 2>&1 &
  pid=$!
  sleep 0.5
  a=$(submit -J later -N1 --gpus-per-node=1 -A teama -t 5 --wrap "sleep 600")
  check "a job submitted while it loops is started by a later cycle" wait_state "${a}" RUNNING
  kill -TERM "${pid}"
  wait "${pid}"
  rc=$?
  cat "${out}"
  check "SIGTERM ends it with status 0 (${rc})" test "${rc}" = 0
  check "it says so" grep -qE "stopped after [0-9]+ cycles" "${out}"
}

scenario_down() {
  local a out="${work}/down.out" rc start
  a=$(submit -J waits -N1 --gpus-per-node=1 -A teama -t 5 --wrap "sleep 600")
  local ctld
  ctld="$(cat "${cluster}/run/slurmctld.pid")"
  kill "${ctld}"
  for _ in $(seq 1 100); do kill -0 "${ctld}" 2>/dev/null || break; sleep 0.1; done
  start=${SECONDS}
  "${bin}" --once --timeout 5 >"${out}" 2>&1
  rc=$?
  cat "${out}"
  check "non-zero exit (${rc})" test "${rc}" -ne 0
  check "a clear error" grep -qE "(squeue --json|sinfo --json|scontrol --all --oneliner show partition).*(controller reported|did not answer|failed).*nothing was changed" "${out}"
  check "no hang ($((SECONDS - start)) s)" test $((SECONDS - start)) -le 30
  check "no command was run" bash -c "! grep -q '^run: ' '${out}'"
  slurmctld >>"${cluster}/log/slurmctld.out" 2>&1  # restart with its state
  for _ in $(seq 1 100); do squeue -h >/dev/null 2>&1 && break; sleep 0.2; done
  check "the job is still held after the controller is back" test "$(reason "${a}")" = JobHeldUser
}

scenario_partitions() {
  # two partitions beside gpu (all nodes): pa = n1,n2 with MaxNodes=1, pb = n3,n4. Two jobs
  # fill pa, one job in pb, a job naming both (pa is full: it runs in pb, the partition it
  # names second), a job above pa's MaxNodes (left held); one cycle schedules them all; an
  # unknown --partition is an error.
  local a a2 b c d out="${work}/partitions.out" rc nodes
  scontrol create PartitionName=pa Nodes=n1,n2 MaxNodes=1 State=UP &&
    scontrol create PartitionName=pb Nodes=n3,n4 State=UP ||
    { fail "could not create the partitions"; return; }
  a=$(submit -J in-pa -p pa -N1 --gpus-per-node=8 -A teama -t 10 --wrap "sleep 600")
  a2=$(submit -J in-pa2 -p pa -N1 --gpus-per-node=8 -A teama -t 10 --wrap "sleep 600")
  b=$(submit -J in-pb -p pb -N1 --gpus-per-node=8 -A teamb -t 10 --wrap "sleep 600")
  c=$(submit -J both -p pa,pb -N1 --gpus-per-node=4 -A teama -t 10 --wrap "sleep 600")
  d=$(submit -J too-wide -p pa -N2 --ntasks-per-node=1 --gpus-per-node=1 -A teama -t 10 --wrap "sleep 600")
  "${bin}" --once --timeout 15 --partition otehr >"${out}.unknown" 2>&1
  rc=$?
  cat "${out}.unknown"
  check "an unknown partition: exit status 2 (${rc})" test "${rc}" = 2
  check "it is named, with the partitions there are" \
    grep -q "otehr: no such partition in Slurm (partitions: gpu, pa, pb)" "${out}.unknown"
  check "nothing was changed" test "$(reason "${a}")" = JobHeldUser
  gs --policy ordering=fifo,admission=gang >"${out}" 2>&1 || { cat "${out}"; fail "gpusched-slurm failed"; return; }
  cat "${out}"
  check "the jobs of pa run" wait_state "${a}" RUNNING && wait_state "${a2}" RUNNING
  check "the job of pb runs" wait_state "${b}" RUNNING
  check "the job naming both runs" wait_state "${c}" RUNNING
  check "pa's jobs on pa's nodes ($(nodes_of "${a}") $(nodes_of "${a2}"))" \
    test "$(printf '%s\n' "$(nodes_of "${a}")" "$(nodes_of "${a2}")" | sort | paste -sd' ' -)" = "n1 n2"
  nodes="$(nodes_of "${b}")"
  check "pb's job on a node of pb (${nodes})" bash -c "[[ '${nodes}' == n3 || '${nodes}' == n4 ]]"
  nodes="$(nodes_of "${c}")"
  check "the job naming both, on the other node of pb (${nodes})" \
    bash -c "[[ '${nodes}' != '$(nodes_of "${b}")' && ('${nodes}' == n3 || '${nodes}' == n4) ]]"
  check "it was moved to pb" test "$(squeue -h -j "${c}" -o %P)" = pb
  check "the job above MaxNodes is left held, with its reason" \
    grep -q "job ${d} 'too-wide': field 'node_count': 2 nodes, above MaxNodes=1 in partition 'pa'" "${out}"
  check "and is still held" test "$(reason "${d}")" = JobHeldUser
  reset
  scontrol delete PartitionName=pa
  scontrol delete PartitionName=pb
}

scenario_array() {
  # a held array of 6 tasks, at most 2 at once (%2), 4 GPUs each, and a merge job after it
  # (afterok): the bridge splits each task off by its ARRAY_TASK name, never runs more than 2,
  # and releases the merge once every task completed; all run to completion
  local a m out="${work}/array.out" pid rc k
  a=$(submit -J sweep --array=1-6%2 -N1 --gpus-per-node=4 -A teama -t 5 --wrap "sleep 2")
  m=$(submit -J merge -N1 --gpus-per-node=1 -A teama -t 5 --dependency="afterok:${a}" --wrap "sleep 1")
  "${bin}" --interval 1 --timeout 15 --policy ordering=fifo,admission=gang >"${out}" 2>&1 &
  pid=$!
  for _ in $(seq 1 300); do
    [[ -z "$(squeue -h -t PD,R,CG -o %i 2>/dev/null)" ]] && break
    sleep 0.2
  done
  kill -TERM "${pid}"
  wait "${pid}"
  rc=$?
  grep -E '^(run|issue):' "${out}"
  check "the bridge ended cleanly (${rc})" test "${rc}" = 0
  check "every job finished" test -z "$(squeue -h -t PD,R,CG -o %i)"
  for k in 1 2 3 4 5 6; do
    check "task ${k} was released once as ${a}_${k}" \
      test "$(grep -cE "^run: scontrol release ${a}_${k}$" "${out}")" = 1
  done
  check "no command named the array by its bare id" bash -c "! grep -qE '^run: .*(JobId=| )${a}( |$)' '${out}'"
  check "the tasks beyond %2 waited, named" grep -qE "^issue: job ${a}_[3-6] 'sweep': field 'array_max_tasks': array ${a} runs at most 2" "${out}"
  check "the merge waited for the array" grep -qE "^issue: job ${m} 'merge': field 'dependency': waits for its dependency, afterok:${a}_\*" "${out}"
  check "no command failed" bash -c "! grep -qE 'failed|did not answer' '${out}'"
  # Slurm's own records: every job completed, never more than 2 tasks at once, the merge last
  squeue --json | python3 -c '
import json, sys
a, m = int(sys.argv[1]), int(sys.argv[2])
jobs = json.load(sys.stdin)["jobs"]
tasks = [j for j in jobs if j["array_job_id"] == a]
merge = [j for j in jobs if j["job_id"] == m]
assert sorted(j["array_task_id"] for j in tasks) == [1, 2, 3, 4, 5, 6], tasks
assert all(j["job_state"] == "COMPLETED" for j in tasks + merge), [j["job_state"] for j in tasks + merge]
most = max(sum(1 for u in tasks if u["start_time"] <= t["start_time"] < u["end_time"]) for t in tasks)
assert most <= 2, most
assert merge[0]["start_time"] >= max(t["end_time"] for t in tasks)
print("  6 tasks completed, at most %d at once; the merge started after the last task" % most)
' "${a}" "${m}" || fail "the array and the merge as Slurm recorded them"
}

for s in "${scenarios[@]}"; do
  current="${s}"
  echo "== scenario ${s}"
  start=${SECONDS}
  before=${failures}
  reset || fail "could not empty the queue"
  "scenario_${s//-/_}"
  if [[ ${failures} == "${before}" ]]; then passed+=("${s}"); fi
  echo "== scenario ${s}: $([[ ${failures} == "${before}" ]] && echo passed || echo FAILED) in $((SECONDS - start)) s"
done
echo "passed: ${passed[*]:-none}"
if ((failures > 0)); then
  echo "live Slurm tests: ${failures} failure(s); logs in ${cluster}/log"
  exit 1
fi
echo "live Slurm tests: all ${#scenarios[@]} scenarios passed"
