// SPDX-License-Identifier: Apache-2.0
// mig_reconfigure: planning MIG layout changes on four A100-40GB GPUs so that pending work gets
// instances to run on, while disturbing as little as possible.
//
// What it shows:
//  - an idle instance that already has the wanted profile is used as it is (no operation);
//  - free slices are used before idle instances are destroyed, and MIG is enabled only on a
//    GPU with nothing running on it;
//  - placement geometry matters: a 3g.20gb instance needs slice 0 or 4 free, not just four
//    free slices anywhere;
//  - busy instances are never destroyed unless the operator allows preemption; then the plan
//    lists whose work it stops, and still prefers GPUs where nothing runs.
#include <cstdio>
#include <string>
#include <vector>

#include <gpusched/gpusched.hpp>

namespace gs = gpusched;

namespace {

const gs::gpu_catalog catalog = gs::mig_catalog();
const gs::mig_geometry& a100 = catalog[catalog.id("A100-SXM4-40GB")].mig;

const gs::mig_profile* prof(const char* name) { return a100.find(name); }

std::string layout_text(const gs::mig_gpu_layout& l) {
  if (!l.mig_enabled) return l.idle ? "MIG off, idle" : "MIG off, running a whole-GPU job";
  if (l.instances.empty()) return "MIG on, no instances";
  std::string s;
  for (const auto& in : l.instances) {
    if (!s.empty()) s += ", ";
    s += in.placement.profile->name + "@" + std::to_string(in.placement.start);
    s += in.busy ? " (busy: job " + std::to_string(in.owner.value()) + ")" : " (idle)";
  }
  return s;
}

void show(const char* title, const std::vector<gs::mig_gpu_layout>& gpus) {
  std::printf("%s\n", title);
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    std::printf("  gpu %zu: %s\n", i, layout_text(gpus[i]).c_str());
  }
}

std::string demand_text(const std::vector<gs::mig_demand>& d) {
  std::string s;
  for (const auto& x : d) {
    if (!s.empty()) s += " + ";
    s += std::to_string(x.count) + " x " + x.profile->name;
  }
  return s;
}

void plan_and_print(const std::vector<gs::mig_gpu_layout>& gpus,
                    const std::vector<gs::mig_demand>& want, bool preempt) {
  std::printf("\ndemand %s, preemption %s\n", demand_text(want).c_str(),
              preempt ? "allowed" : "not allowed");
  const auto plan = gs::plan_mig_reconfiguration(a100, gpus, want, {.allow_preemption = preempt});
  std::printf("  plan (%d operations, %s):\n", plan.operations(),
              plan.exact ? "optimal" : "greedy");
  if (plan.actions.empty()) std::printf("    nothing to change\n");
  for (const auto& a : plan.actions) std::printf("    %s\n", gs::describe(a).c_str());
  if (plan.satisfied()) {
    std::printf("  demand met\n");
  } else {
    std::printf("  not met: %s (no layout reachable without %s has room)\n",
                demand_text(plan.unmet).c_str(),
                preempt ? "more GPUs" : "destroying busy instances");
  }
  if (!plan.preempted.empty()) {
    std::string who;
    for (const auto j : plan.preempted) {
      who += ' ';
      who += std::to_string(j.value());
    }
    std::printf("  preempts jobs:%s\n", who.c_str());
  }
  show("  layouts after the plan:", gs::apply_mig_plan(a100, gpus, plan));
}

}  // namespace

int main() {
  const std::vector<gs::mig_gpu_layout> gpus = {
      {.instances = {{.placement = {.profile = prof("7g.40gb"), .start = 0},
                      .busy = true,
                      .owner = gs::job_id{11}}}},
      {.instances = {{.placement = {.profile = prof("3g.20gb"), .start = 0},
                      .busy = true,
                      .owner = gs::job_id{12}},
                     {.placement = {.profile = prof("1g.5gb"), .start = 4}}}},
      {.instances = {{.placement = {.profile = prof("4g.20gb"), .start = 0}}}},
      {.mig_enabled = false, .instances = {}},  // MIG off, idle
  };
  show("current layouts:", gpus);

  // Two notebooks (1g) and one inference server (3g).
  plan_and_print(
      gpus, {{.profile = prof("1g.5gb"), .count = 2}, {.profile = prof("3g.20gb"), .count = 1}},
      false);
  // Six 3g instances: without touching running work, five are reachable (gpu 1's right
  // half after its idle 1g goes, gpu 2 after its idle 4g goes, gpu 3 once MIG is on).
  plan_and_print(gpus, {{.profile = prof("3g.20gb"), .count = 6}}, false);
  // The same, with preemption allowed: exactly one busy instance goes, and the plan says whose.
  plan_and_print(gpus, {{.profile = prof("3g.20gb"), .count = 6}}, true);
  return 0;
}
