#!/usr/bin/env bash
# The communication model (sim/communication.hpp) switched on from gpusched-replay, on cases
# computed by hand (issue #39). A job of n GPUs iterates `c` ms of computation then a ring
# all-reduce of S bytes taking 2 (n - 1) / n x S / B for its slowest link B; the trace's
# duration holds at B = --reference-gbps (25), so the job runs at
#   rate = (c + ar(25)) / (c + ar(B)),   JCT = duration / rate.
# With --comm-profile 100:1000 (c = 100 ms, S = 1e9 bytes), duration 1000 s:
#   8 GPUs on two 4-GPU nodes, NIC 12.5 GB/s:   ar(25) = 70 ms, ar(12.5) = 140 ms,
#     rate 170/240, JCT 1411.765 s; with --nic-gbps 5: ar(5) = 350 ms, JCT 2647.059 s;
#   16 GPUs on four nodes, leaves of 2 nodes at 4:1 (uplink 2 x 12.5 / 4 = 6.25 GB/s):
#     ar(25) = 75 ms, ar(6.25) = 300 ms, rate 175/400, JCT 2285.714 s; non-blocking leaves
#     (uplink 25 GB/s) leave the NIC the bottleneck: ar(12.5) = 150 ms, JCT 1428.571 s;
#   two 6-GPU jobs on 3 x 4 GPUs (first fit: nodes 0+1 and 1+2), both crossing node 1's NIC:
#     each alone at 12.5 GB/s: ar(25) = 66.67 ms, ar(12.5) = 133.33 ms, JCT 1400 s; sharing
#     that NIC max-min (6.25 GB/s each): ar = 266.67 ms, JCT 2200 s.
# Off (the default), every job runs for its trace duration. (The simulator keeps rates in
# parts per million, so a figure may differ from the exact one in its last printed digit.)
#
#   replay-comm.sh REPLAY WORK
set -uo pipefail
rep="$1" work="$2"
rm -rf "${work}" && mkdir -p "${work}" && cd "${work}" || exit 1
fail=0
H='job_id,num_gpu,submit_time,iterations,model_name,duration,interval'
printf '%s\n0,8,0,1,x,1000,1\n1,4,0,1,x,1000,1\n' "${H}" >t8.csv
printf '%s\n0,16,0,1,x,1000,1\n' "${H}" >t16.csv
printf '%s\n0,6,0,1,x,1000,1\n1,6,0,1,x,1000,1\n' "${H}" >t6.csv
P=(--policy c:preemption=none,placement=first-fit --comm-profile 100:1000 --quiet)
jct() {  # jct NAME JOB WANT -- replay options...: job JOB's jct_s in NAME/c/jobs.csv is WANT
  local name="$1" job="$2" want="$3"
  shift 4
  if ! "${rep}" "$@" --out "${name}" >"${name}.log" 2>&1; then
    echo "FAIL ${name}: the run failed:"; head -5 "${name}.log"; fail=1; return
  fi
  local got
  got=$(awk -F, -v j="${job}" 'NR > 1 && $1 == j { print $7 }' "${name}/c/jobs.csv")
  if [[ "${got}" != "${want}" ]]; then
    echo "FAIL ${name}: job ${job} jct_s ${got}, want ${want}"; fail=1
  else
    echo "ok   ${name}: job ${job} jct_s ${got}"
  fi
}
jct off 0 1000.000 -- --trace tiresias:t8.csv --cluster 3x4 "${P[@]}"
jct two-nodes 0 1411.766 -- --trace tiresias:t8.csv --cluster 3x4 --comm "${P[@]}"
jct one-node 1 1000.000 -- --trace tiresias:t8.csv --cluster 3x4 --comm "${P[@]}"
jct slow-nic 0 2647.058 -- --trace tiresias:t8.csv --cluster 3x4 --comm --nic-gbps 5 "${P[@]}"
jct oversubscribed-leaves 0 2285.715 -- --trace tiresias:t16.csv --cluster 4x4 --leaf-nodes 2 \
  --oversubscription 4 --comm "${P[@]}"
jct nonblocking-leaves 0 1428.572 -- --trace tiresias:t16.csv --cluster 4x4 --leaf-nodes 2 \
  --comm "${P[@]}"
jct nic-alone 1 1400.000 -- --trace tiresias:t6.csv --cluster 3x4 --comm "${P[@]}"
jct nic-shared 1 2200.003 -- --trace tiresias:t6.csv --cluster 3x4 --comm --comm-share-links \
  "${P[@]}"
# run.json records every setting of the model, given or not.
want='"communication": {"enabled": true, "share_links": true, "nic_gbps": 12.5, "intra_node_gbps": 25, "reference_gbps": 25, "leaf_nodes": 0, "leaf_oversubscription": 1, "profile": {"compute_ms": 100, "gradient_mb": 1000}}'
if grep -qF -- "${want}" nic-shared/run.json; then echo "ok   run.json"; else
  echo "FAIL run.json lacks: ${want}"; grep communication nic-shared/run.json; fail=1; fi
grep -qF '"communication": {"enabled": false' off/run.json && echo "ok   run.json off" ||
  { echo "FAIL run.json off"; fail=1; }
# A setting of the model that does nothing in a run says so; a bad value is named.
note() {  # note WANT -- replay options...: stderr holds WANT
  local want="$1"
  shift 2
  local out
  out=$("${rep}" "$@" 2>&1 >/dev/null)
  if grep -qF -- "${want}" <<<"${out}"; then echo "ok   ${want}"; else
    echo "FAIL want: ${want}; got:"; echo "${out}" | head -3; fail=1; fi
}
B=(--trace tiresias:t8.csv --cluster 3x4 --quiet)
note "--nic-gbps (the command line) does nothing in this run: the communication model is off (it needs --comm)" -- "${B[@]}" --nic-gbps 5
note "--comm-share-links (the command line) does nothing in this run: the communication model is off" -- "${B[@]}" --comm-share-links
note "--comm-profile (the command line) does nothing in this run" -- "${B[@]}" --comm-profile 1:1
note "--oversubscription (the command line) does nothing in this run: no leaf uplink is modelled" -- "${B[@]}" --comm --oversubscription 2
note "--oversubscription: '0.5' is not a down:up ratio from 1 to 1000" -- "${B[@]}" --oversubscription 0.5
note "--nic-gbps: '0' is not a bandwidth above 0 and at most 1e6 GB/s" -- "${B[@]}" --nic-gbps 0
note "--comm-profile: '1:2:3' is not COMPUTE_MS:GRADIENT_MB" -- "${B[@]}" --comm-profile 1:2:3
note "--comm-profile: '0:5': the computation must be above 0" -- "${B[@]}" --comm-profile 0:5
exit "${fail}"
