#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs one named experiment of benchmarks/README.md with gpusched-replay and writes its metrics
# under build/experiments/<name>/. Usage: benchmarks/run-experiment.sh <name>   (names: below)
# The program is $REPLAY when set, else the first found of build/bench, build/demo (Release),
# then any other build/*/ tree, then gpusched-replay on PATH.
#
# Adding a composition to an experiment is one more `LABEL:slot=name,...` item in its
# --compare list (policy names: pipeline/any_policy.hpp, policy_names).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
find_replay() {
  local c
  for c in build/bench build/demo build/*; do
    [[ -x ${c}/benchmarks/replay/gpusched-replay ]] && { echo "${c}/benchmarks/replay/gpusched-replay"; return; }
  done
  command -v gpusched-replay || true
}
replay=${REPLAY:-$(find_replay)}
philly=benchmarks/data/philly/philly.csv
prior=benchmarks/data/tiresias/yarn-gput1000.csv
# Tiresias (Gu et al., NSDI'19): FIFO and the SRSF oracle do not preempt (srsf-preemptive does); 2D-LAS and 2D-Gittins
# preempt across their attained-service queues (preemption=las), gracefully (--graceful-preemption,
# Tiresias' assumption: a preempted job keeps its progress).
tiresias="fifo:ordering=fifo,preemption=none;srsf:ordering=srsf,preemption=none"
tiresias+=";2d-las:ordering=las,preemption=las;2d-gittins:ordering=2d-gittins,preemption=las"
# SRSF as Tiresias ran it: the oracle order with remaining-service preemption.
tiresias+=";srsf-preemptive:ordering=srsf,preemption=srsf"
out=build/experiments/${1:-}
[[ -n ${replay} && -x ${replay} ]] || {
  echo "no gpusched-replay${REPLAY:+ at REPLAY=${REPLAY}}: build one (cmake --preset bench &&" \
       "cmake --build --preset bench --target gpusched-replay, or any preset that builds it)" \
       "or set REPLAY=/path/to/gpusched-replay" >&2
  exit 2
}
echo "using ${replay}" >&2

case "${1:-}" in
  philly-full-2000)  # speed: the whole Philly trace on 250 x 8 GPUs, default pipeline
    time ${replay} --trace "philly:${philly}" --cluster 250x8 --out "${out}" --progress ;;
  tiresias-n32g4)  # Tiresias-style, Philly VC b436b2 (7,423 jobs) on 32 x 4 GPUs
    ${replay} --trace "philly:${philly}" --tenant b436b2 --cluster 32x4 --out "${out}" --progress \
      --gittins-prior "${prior}" --graceful-preemption --compare "${tiresias}" ;;
  tiresias-6214e9)  # Tiresias-style, the busier Philly VC 6214e9 (41,226 jobs) on 32 x 4 GPUs
    ${replay} --trace "philly:${philly}" --tenant 6214e9 --cluster 32x4 --out "${out}" --progress \
      --gittins-prior "${prior}" --graceful-preemption --compare "${tiresias}" ;;
  tiresias-n256g8)  # Tiresias-style, the whole Philly trace on 256 x 8 GPUs
    ${replay} --trace "philly:${philly}" --cluster 256x8 --out "${out}" --progress \
      --gittins-prior "${prior}" --graceful-preemption --compare "${tiresias}" ;;
  tiresias-n256g8-scale-*)  # the same with inter-arrival times scaled, e.g. -scale-0.25 (4x load)
    ${replay} --trace "philly:${philly}" --cluster 256x8 --out "${out}" --progress \
      --arrival-scale "${1#tiresias-n256g8-scale-}" \
      --gittins-prior "${prior}" --graceful-preemption --compare "${tiresias}" ;;
  fair-share-vcs)  # Philly VCs as tenants on 64 x 8 GPUs: per-tenant share and Jain's index
    ${replay} --trace "philly:${philly}" --cluster 64x8 --out "${out}" --progress \
      --compare "fifo:ordering=fifo,preemption=none;drf:ordering=drf,preemption=none;multifactor:ordering=multifactor,preemption=none;multifactor-nofs:ordering=multifactor-nofs,preemption=none" ;;
  preemption-urgent)  # 5% of VC b436b2's jobs urgent (priority 100), hourly checkpoints
    ${replay} --trace "philly:${philly}" --tenant b436b2 --cluster 32x4 --out "${out}" --progress \
      --urgent-fraction 0.05 --urgent-priority 100 --seed 1 --checkpoint-interval-s 3600 \
      --checkpoint-cost-s 30 --restore-cost-s 60 \
      --compare "checkpoint-aware:preemption=checkpoint-aware;kube-default:preemption=kube-default;lowest-priority-newest:preemption=lowest-priority-newest;none:preemption=none" ;;
  topology-gangs)  # multi-GPU gangs of VC 6214e9 on 32 x 4 GPUs, leaves of 8 nodes
    ${replay} --trace "philly:${philly}" --tenant 6214e9 --cluster 32x4 --leaf-nodes 8 \
      --out "${out}" --progress \
      --compare "first-fit:placement=first-fit,preemption=none;gang:placement=gang,preemption=none;topology:placement=topology,preemption=none;topology+packing:placement=topology,packing=topology,preemption=none" ;;
  topology-gangs-comm | topology-gangs-comm-shared)  # the same with the communication model on:
    # NICs 12.5 GB/s and non-blocking leaves; or leaves at 4:1 with links shared max-min
    comm=(--comm)
    [[ "$1" == topology-gangs-comm-shared ]] && comm+=(--comm-share-links --oversubscription 4)
    ${replay} --trace "philly:${philly}" --tenant 6214e9 --cluster 32x4 --leaf-nodes 8 \
      "${comm[@]}" --out "${out}" --progress \
      --compare "first-fit:placement=first-fit,preemption=none;gang:placement=gang,preemption=none;topology:placement=topology,preemption=none;topology+packing:placement=topology,packing=topology,preemption=none" ;;
  failures-*)  # failures-<checkpoint interval s>: VC 11cb48 on 32 x 4, node MTBF 100 h
    ${replay} --trace "philly:${philly}" --tenant 11cb48 --cluster 32x4 --out "${out}" --progress \
      --node-mtbf-hours 100 --repair-hours 2 --checkpoint-interval-s "${1#failures-}" \
      --checkpoint-cost-s 30 --restore-cost-s 60 --seed 1 ;;
  gpu-failures-*)  # gpu-failures-<checkpoint interval s>: as failures-*, but single GPUs fail
    # (GPU MTBF 400 h: on 4-GPU nodes the same failure-event rate as a 100 h node MTBF)
    ${replay} --trace "philly:${philly}" --tenant 11cb48 --cluster 32x4 --out "${out}" --progress \
      --gpu-mtbf-hours 400 --gpu-repair-hours 2 --checkpoint-interval-s "${1#gpu-failures-}" \
      --checkpoint-cost-s 30 --restore-cost-s 60 --seed 1 ;;
  philly-gpu-failures-*)  # philly-gpu-failures-<checkpoint interval s>: the whole trace on
    # 250 x 8 GPUs, GPU MTBF 400 h; stops after 140 days (without checkpoints some jobs never end)
    ${replay} --trace "philly:${philly}" --cluster 250x8 --out "${out}" --progress \
      --gpu-mtbf-hours 400 --gpu-repair-hours 2 --checkpoint-interval-s "${1#philly-gpu-failures-}" \
      --checkpoint-cost-s 30 --restore-cost-s 60 --seed 1 --time-limit-days 140 ;;
  *)
    echo "usage: $0 philly-full-2000 | tiresias-n32g4 | tiresias-6214e9 | tiresias-n256g8 |" \
         "tiresias-n256g8-scale-<arrival scale> | fair-share-vcs |" \
         "preemption-urgent | topology-gangs | topology-gangs-comm | topology-gangs-comm-shared | failures-<checkpoint interval s, 0 = none> |" \
         "gpu-failures-<checkpoint interval s> | philly-gpu-failures-<checkpoint interval s>" >&2
    exit 2 ;;
esac
