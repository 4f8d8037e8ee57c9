// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include <gpusched/core/random.hpp>
#include <gpusched/resource/mig_catalog.hpp>
#include <gpusched/resource/mig_reconfigure.hpp>

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace resource_mig_reconfigure_test {

namespace gs = gpusched;

namespace {

const gs::mig_geometry& a100() {
  static const gs::gpu_catalog c = gs::mig_catalog();
  return c[c.id("A100-SXM4-40GB")].mig;
}
const gs::mig_profile* prof(const char* name) {
  const auto* p = a100().find(name);
  REQUIRE(p != nullptr);
  return p;
}
gs::mig_instance idle(const char* name, std::uint8_t start) { return {{prof(name), start}}; }
gs::mig_instance busy(const char* name, std::uint8_t start, unsigned owner) {
  return {{prof(name), start}, true, gs::job_id{owner}};
}
gs::mig_gpu_layout mig_on(std::vector<gs::mig_instance> in = {}) {
  return {true, true, std::move(in)};
}

/// Idle instances of `p` over all `gpus`.
int idle_count(const std::vector<gs::mig_gpu_layout>& gpus, const gs::mig_profile* p) {
  int n = 0;
  for (const auto& l : gpus) {
    for (const auto& in : l.instances) n += (!in.busy && in.placement.profile == p) ? 1 : 0;
  }
  return n;
}

std::vector<std::string> lines(const gs::mig_reconfig_plan& plan) {
  std::vector<std::string> out;
  for (const auto& a : plan.actions) out.push_back(gs::describe(a));
  return out;
}

}  // namespace

TEST_SUITE("resource/mig_reconfigure") {
  TEST_CASE("an empty MIG GPU gets the demanded instances created and nothing else") {
    const std::vector<gs::mig_gpu_layout> gpus = {mig_on()};
    const std::vector<gs::mig_demand> want = {{prof("3g.20gb"), 2}};
    const auto plan = gs::plan_mig_reconfiguration(a100(), gpus, want);
    CHECK(plan.satisfied());
    CHECK(plan.exact);
    CHECK(lines(plan) == std::vector<std::string>{"gpu 0: create 3g.20gb at slice 0",
                                                  "gpu 0: create 3g.20gb at slice 4"});
  }

  TEST_CASE("an idle instance of a demanded profile is used as it is") {
    const std::vector<gs::mig_gpu_layout> gpus = {mig_on({idle("3g.20gb", 4)})};
    const std::vector<gs::mig_demand> want = {{prof("3g.20gb"), 1}};
    const auto plan = gs::plan_mig_reconfiguration(a100(), gpus, want);
    CHECK(plan.satisfied());
    CHECK(plan.operations() == 0);
  }

  TEST_CASE("an idle 7g instance is destroyed to make two 3g instances") {
    const std::vector<gs::mig_gpu_layout> gpus = {mig_on({idle("7g.40gb", 0)})};
    const std::vector<gs::mig_demand> want = {{prof("3g.20gb"), 2}};
    const auto plan = gs::plan_mig_reconfiguration(a100(), gpus, want);
    CHECK(plan.satisfied());
    CHECK(lines(plan) == std::vector<std::string>{"gpu 0: destroy idle 7g.40gb at slice 0",
                                                  "gpu 0: create 3g.20gb at slice 0",
                                                  "gpu 0: create 3g.20gb at slice 4"});
  }

  TEST_CASE("busy instances are never destroyed unless preemption is allowed, then listed") {
    const std::vector<gs::mig_gpu_layout> gpus = {mig_on({busy("4g.20gb", 0, 42)})};
    const std::vector<gs::mig_demand> want = {{prof("3g.20gb"), 2}};
    const auto keep = gs::plan_mig_reconfiguration(a100(), gpus, want);
    CHECK_FALSE(keep.satisfied());
    REQUIRE(keep.unmet.size() == 1);
    CHECK(keep.unmet[0] == gs::mig_demand{prof("3g.20gb"), 1});
    CHECK(keep.busy_destroyed == 0);
    CHECK(lines(keep) == std::vector<std::string>{"gpu 0: create 3g.20gb at slice 4"});

    const auto take = gs::plan_mig_reconfiguration(a100(), gpus, want, {.allow_preemption = true});
    CHECK(take.satisfied());
    CHECK(take.busy_destroyed == 1);
    CHECK(take.preempted == std::vector<gs::job_id>{gs::job_id{42}});
    CHECK(lines(take) ==
          std::vector<std::string>{"gpu 0: destroy busy 4g.20gb at slice 0 (preempts job 42)",
                                   "gpu 0: create 3g.20gb at slice 0",
                                   "gpu 0: create 3g.20gb at slice 4"});
  }

  TEST_CASE("with preemption allowed the plan still prefers a GPU where nothing runs") {
    const std::vector<gs::mig_gpu_layout> gpus = {mig_on({busy("7g.40gb", 0, 1)}),
                                                  mig_on({idle("7g.40gb", 0)})};
    const std::vector<gs::mig_demand> want = {{prof("3g.20gb"), 2}};
    const auto plan = gs::plan_mig_reconfiguration(a100(), gpus, want, {.allow_preemption = true});
    CHECK(plan.satisfied());
    CHECK(plan.busy_destroyed == 0);
    CHECK(lines(plan) == std::vector<std::string>{"gpu 1: destroy idle 7g.40gb at slice 0",
                                                  "gpu 1: create 3g.20gb at slice 0",
                                                  "gpu 1: create 3g.20gb at slice 4"});
  }

  TEST_CASE("the fewest operations win: free slices are used before idle instances are destroyed") {
    // GPU 0: an idle 4g that would have to go. GPU 1: a busy 4g and free slices 4-7.
    const std::vector<gs::mig_gpu_layout> gpus = {mig_on({idle("4g.20gb", 0)}),
                                                  mig_on({busy("4g.20gb", 0, 7)})};
    const std::vector<gs::mig_demand> want = {{prof("3g.20gb"), 1}};
    const auto plan = gs::plan_mig_reconfiguration(a100(), gpus, want);
    CHECK(lines(plan) == std::vector<std::string>{"gpu 1: create 3g.20gb at slice 4"});
  }

  TEST_CASE("MIG is enabled on an idle GPU but never on a busy one") {
    const std::vector<gs::mig_gpu_layout> gpus = {{false, false, {}}, {false, true, {}}};
    const std::vector<gs::mig_demand> want = {{prof("1g.5gb"), 3}};
    const auto plan = gs::plan_mig_reconfiguration(a100(), gpus, want);
    CHECK(plan.satisfied());
    CHECK(lines(plan) == std::vector<std::string>{
                             "gpu 1: enable MIG", "gpu 1: create 1g.5gb at slice 0",
                             "gpu 1: create 1g.5gb at slice 1", "gpu 1: create 1g.5gb at slice 2"});
    const auto after = gs::apply_mig_plan(a100(), gpus, plan);
    CHECK_FALSE(after[0].mig_enabled);
    CHECK(after[1].mig_enabled);
    CHECK(idle_count(after, prof("1g.5gb")) == 3);
  }

  TEST_CASE("placement order matters: a 3g needs slice 0 or 4 free, not any four slices") {
    // Busy 1g at slices 0 and 4: four slices are free on each half, but no 3g start is free.
    const std::vector<gs::mig_gpu_layout> gpus = {
        mig_on({busy("1g.5gb", 0, 1), busy("1g.5gb", 4, 2)})};
    const std::vector<gs::mig_demand> want = {{prof("3g.20gb"), 1}};
    const auto plan = gs::plan_mig_reconfiguration(a100(), gpus, want);
    CHECK_FALSE(plan.satisfied());
    CHECK(plan.operations() == 0);
  }

  TEST_CASE("only one +me instance per GPU") {
    const std::vector<gs::mig_gpu_layout> gpus = {mig_on()};
    const std::vector<gs::mig_demand> want = {{prof("1g.5gb+me"), 2}};
    const auto plan = gs::plan_mig_reconfiguration(a100(), gpus, want);
    REQUIRE(plan.unmet.size() == 1);
    CHECK(plan.unmet[0].count == 1);
  }

  TEST_CASE("bad input is rejected naming the GPU or demand and the field") {
    const auto message = [](auto&& f) {
      try {
        f();
      } catch (const gs::invalid_value_error& e) {
        return std::string(e.what());
      }
      return std::string("no error");
    };
    const std::vector<gs::mig_gpu_layout> ok = {mig_on()};
    const std::vector<gs::mig_demand> negative = {{prof("1g.5gb"), -1}};
    CHECK(message([&] {
            (void)gs::plan_mig_reconfiguration(a100(), ok, negative);
          }).find("mig demand #0: field 'count' = -1") != std::string::npos);
    static const gs::gpu_catalog c = gs::mig_catalog();
    const auto* h100 = c[c.id("H100-SXM5-80GB")].mig.find("1g.10gb");
    const std::vector<gs::mig_demand> foreign = {{h100, 1}};
    CHECK(message([&] {
            (void)gs::plan_mig_reconfiguration(a100(), ok, foreign);
          }).find("mig demand #0: field 'profile' = 1g.10gb") != std::string::npos);
    const std::vector<gs::mig_demand> want = {{prof("1g.5gb"), 1}};
    const std::vector<gs::mig_gpu_layout> overlap = {
        mig_on({idle("3g.20gb", 0), idle("2g.10gb", 2)})};
    CHECK(message([&] {
            (void)gs::plan_mig_reconfiguration(a100(), overlap, want);
          }).find("mig gpu #0: field 'instances[1].start' = 2: 2g.10gb overlaps") !=
          std::string::npos);
    const std::vector<gs::mig_gpu_layout> bad_start = {mig_on(), mig_on({idle("3g.20gb", 2)})};
    CHECK(message([&] {
            (void)gs::plan_mig_reconfiguration(a100(), bad_start, want);
          }).find("mig gpu #1: field 'instances[0].start' = 2") != std::string::npos);
    const std::vector<gs::mig_gpu_layout> off_with_instances = {{false, true, {idle("1g.5gb", 0)}}};
    CHECK(message([&] {
            (void)gs::plan_mig_reconfiguration(a100(), off_with_instances, want);
          }).find("mig gpu #0: field 'instances'") != std::string::npos);
  }
}

// ---- brute force ------------------------------------------------------------------------------

namespace {

struct outcome {
  std::int64_t met = 0;  // weighted demand met
  int busy = 0;
  int ops = 0;
  friend bool operator==(const outcome&, const outcome&) = default;
  friend doctest::String toString(const outcome& o) {
    return ("met " + std::to_string(o.met) + " busy " + std::to_string(o.busy) + " ops " +
            std::to_string(o.ops))
        .c_str();
  }
  [[nodiscard]] bool better(const outcome& o) const {
    return std::tuple(-met, busy, ops) < std::tuple(-o.met, o.busy, o.ops);
  }
};

/// Every final layout of one GPU: which instances survive, plus any set of new instances of
/// any profile (not only demanded ones). Yields (idle count per demanded profile, busy, ops).
struct per_gpu {
  std::vector<int> counts;
  int busy = 0;
  int ops = 0;
};

void add_new(const gs::mig_geometry& g, std::uint8_t used, bool media, unsigned from,
             std::vector<int>& counts, const std::vector<const gs::mig_profile*>& demanded,
             int busy, int ops, std::vector<per_gpu>& out) {
  out.push_back({counts, busy, ops});
  for (unsigned s = from; s < 8; ++s) {
    for (const auto& p : g.profiles) {
      if (((p.placement_starts >> s) & 1u) == 0 || (used & p.slots_at(s)) != 0) continue;
      if (p.media_extension && media) continue;
      const auto it = std::find(demanded.begin(), demanded.end(), &p);
      if (it != demanded.end()) ++counts[static_cast<std::size_t>(it - demanded.begin())];
      add_new(g, static_cast<std::uint8_t>(used | p.slots_at(s)), media || p.media_extension, s + 1,
              counts, demanded, busy, ops + 1, out);
      if (it != demanded.end()) --counts[static_cast<std::size_t>(it - demanded.begin())];
    }
  }
}

std::vector<per_gpu> all_layouts(const gs::mig_geometry& g, const gs::mig_gpu_layout& l,
                                 const std::vector<const gs::mig_profile*>& demanded,
                                 bool preempt) {
  std::vector<per_gpu> out;
  std::vector<int> counts(demanded.size(), 0);
  if (!l.mig_enabled) {
    out.push_back({counts, 0, 0});
    if (l.idle) add_new(g, 0, false, 0, counts, demanded, 0, 1, out);
    return out;
  }
  const auto n = l.instances.size();
  for (unsigned keep = 0; keep < (1u << n); ++keep) {
    std::fill(counts.begin(), counts.end(), 0);
    std::uint8_t used = 0;
    bool media = false;
    int busy = 0;
    int ops = 0;
    bool ok = true;
    for (std::size_t k = 0; k < n; ++k) {
      const auto& in = l.instances[k];
      if (((keep >> k) & 1u) == 0) {
        ok = ok && (!in.busy || preempt);
        busy += in.busy ? 1 : 0;
        ++ops;
        continue;
      }
      used = static_cast<std::uint8_t>(used | in.placement.slots());
      media = media || in.placement.profile->media_extension;
      const auto it = std::find(demanded.begin(), demanded.end(), in.placement.profile);
      if (!in.busy && it != demanded.end())
        ++counts[static_cast<std::size_t>(it - demanded.begin())];
    }
    if (ok) add_new(g, used, media, 0, counts, demanded, busy, ops, out);
  }
  // Identical outcomes need no second look: keep one of each.
  const auto key = [](const per_gpu& p) { return std::tie(p.counts, p.busy, p.ops); };
  std::sort(out.begin(), out.end(),
            [&](const per_gpu& x, const per_gpu& y) { return key(x) < key(y); });
  out.erase(std::unique(out.begin(), out.end(),
                        [&](const per_gpu& x, const per_gpu& y) { return key(x) == key(y); }),
            out.end());
  return out;
}

/// The demand merged per profile (a profile may be listed twice).
std::vector<gs::mig_demand> merged(const std::vector<gs::mig_demand>& want) {
  std::vector<gs::mig_demand> out;
  for (const auto& d : want) {
    const auto it = std::find_if(out.begin(), out.end(),
                                 [&](const gs::mig_demand& m) { return m.profile == d.profile; });
    if (it == out.end()) {
      out.push_back(d);
    } else {
      it->count += d.count;
    }
  }
  return out;
}

outcome score(const std::vector<gs::mig_gpu_layout>& after, const std::vector<gs::mig_demand>& want,
              const gs::mig_reconfig_plan& plan) {
  outcome o;
  for (const auto& d : merged(want)) {
    o.met += static_cast<std::int64_t>(std::min(idle_count(after, d.profile), d.count)) *
             d.profile->memory_slices;
  }
  o.busy = plan.busy_destroyed;
  o.ops = plan.operations();
  return o;
}

/// A random valid layout: random instances placed first-free, some busy; sometimes MIG off.
gs::mig_gpu_layout random_layout(gs::random_engine& rng, unsigned& next_owner) {
  const auto& g = a100();
  if (gs::uniform_index(rng, 6) == 0) return {false, gs::uniform_index(rng, 2) == 0, {}};
  gs::mig_gpu_layout l = mig_on();
  std::uint8_t used = 0;
  bool media = false;
  const auto tries = gs::uniform_index(rng, 5);
  for (std::size_t t = 0; t < tries; ++t) {
    const auto& p = g.profiles[gs::uniform_index(rng, g.profiles.size())];
    if (p.media_extension && media) continue;
    for (unsigned s = 0; s < 8; ++s) {
      if (((p.placement_starts >> s) & 1u) == 0 || (used & p.slots_at(s)) != 0) continue;
      const bool is_busy = gs::uniform_index(rng, 2) == 0;
      l.instances.push_back({{&p, static_cast<std::uint8_t>(s)},
                             is_busy,
                             is_busy ? gs::job_id{++next_owner} : gs::job_id{}});
      used = static_cast<std::uint8_t>(used | p.slots_at(s));
      media = media || p.media_extension;
      break;
    }
  }
  return l;
}

std::vector<gs::mig_demand> random_demand(gs::random_engine& rng) {
  const auto& g = a100();
  std::vector<gs::mig_demand> want;
  const auto k = 1 + gs::uniform_index(rng, 3);
  for (std::size_t i = 0; i < k; ++i) {
    want.push_back({&g.profiles[gs::uniform_index(rng, g.profiles.size())],
                    static_cast<int>(gs::uniform_index(rng, 4))});
  }
  return want;
}

}  // namespace

TEST_SUITE("resource/mig_reconfigure") {
  TEST_CASE("the plan is optimal: it matches brute force over every pair of final layouts") {
    const auto seed = gs::seed_from_env(20261202);
    MESSAGE("seed " << seed << " (set GPUSCHED_SEED to repeat)");
    gs::random_engine rng(seed);
    int satisfied = 0;
    int preempting = 0;
    constexpr int instances = 300;
    for (int i = 0; i < instances; ++i) {
      unsigned owner = 0;
      const std::vector<gs::mig_gpu_layout> gpus = {random_layout(rng, owner),
                                                    random_layout(rng, owner)};
      const auto want = random_demand(rng);
      const bool preempt = gs::uniform_index(rng, 3) == 0;
      CAPTURE(i);
      const auto plan =
          gs::plan_mig_reconfiguration(a100(), gpus, want, {.allow_preemption = preempt});
      REQUIRE(plan.exact);
      const auto after = gs::apply_mig_plan(a100(), gpus, plan);  // throws if invalid
      const auto got = score(after, want, plan);

      // Brute force over the product of both GPUs' final layouts.
      std::vector<const gs::mig_profile*> demanded;
      std::vector<int> need;
      for (const auto& d : merged(want)) {
        demanded.push_back(d.profile);
        need.push_back(d.count);
      }
      const auto a = all_layouts(a100(), gpus[0], demanded, preempt);
      const auto b = all_layouts(a100(), gpus[1], demanded, preempt);
      outcome best{-1, 0, 0};
      for (const auto& x : a) {
        for (const auto& y : b) {
          outcome o{0, x.busy + y.busy, x.ops + y.ops};
          for (std::size_t j = 0; j < demanded.size(); ++j) {
            o.met += static_cast<std::int64_t>(std::min(x.counts[j] + y.counts[j], need[j])) *
                     demanded[j]->memory_slices;
          }
          if (best.met < 0 || o.better(best)) best = o;
        }
      }
      CHECK(got == best);
      // Busy instances survive unless listed as preempted.
      for (std::size_t gi = 0; gi < gpus.size(); ++gi) {
        for (const auto& in : gpus[gi].instances) {
          if (!in.busy) continue;
          const bool kept = std::find(after[gi].instances.begin(), after[gi].instances.end(), in) !=
                            after[gi].instances.end();
          const bool listed = std::find(plan.preempted.begin(), plan.preempted.end(), in.owner) !=
                              plan.preempted.end();
          CHECK(kept != listed);
        }
      }
      // `unmet` is exactly what the final layouts lack.
      for (std::size_t j = 0; j < demanded.size(); ++j) {
        const auto it =
            std::find_if(plan.unmet.begin(), plan.unmet.end(),
                         [&](const gs::mig_demand& u) { return u.profile == demanded[j]; });
        const int missing = it == plan.unmet.end() ? 0 : it->count;
        CHECK(missing == std::max(0, need[j] - idle_count(after, demanded[j])));
      }
      satisfied += plan.satisfied() ? 1 : 0;
      preempting += plan.busy_destroyed > 0 ? 1 : 0;
    }
    MESSAGE(satisfied << " of " << instances << " demands fully met; " << preempting
                      << " plans preempt");
    CHECK(satisfied > 0);
    CHECK(satisfied < instances);
    CHECK(preempting > 0);
  }

  TEST_CASE("the greedy fallback gives valid plans and its gap to the exact plan is measured") {
    const auto seed = gs::seed_from_env(7);
    MESSAGE("seed " << seed << " (set GPUSCHED_SEED to repeat)");
    gs::random_engine rng(seed);
    int worse = 0;
    std::int64_t exact_met = 0;
    std::int64_t greedy_met = 0;
    constexpr int instances = 200;
    for (int i = 0; i < instances; ++i) {
      unsigned owner = 0;
      std::vector<gs::mig_gpu_layout> gpus;
      for (int k = 0; k < 6; ++k) gpus.push_back(random_layout(rng, owner));
      auto want = random_demand(rng);
      for (auto& d : want) d.count *= 2;
      const auto exact = gs::plan_mig_reconfiguration(a100(), gpus, want);
      const auto greedy = gs::plan_mig_reconfiguration(a100(), gpus, want, {.max_exact_cells = 1});
      REQUIRE(exact.exact);
      REQUIRE_FALSE(greedy.exact);
      const auto after_exact = gs::apply_mig_plan(a100(), gpus, exact);
      const auto after_greedy = gs::apply_mig_plan(a100(), gpus, greedy);
      const auto e = score(after_exact, want, exact);
      const auto g = score(after_greedy, want, greedy);
      CHECK_FALSE(g.better(e));  // the exact plan is never beaten
      CHECK(greedy.busy_destroyed == 0);
      worse += e.better(g) ? 1 : 0;
      exact_met += e.met;
      greedy_met += g.met;
    }
    MESSAGE("greedy worse than exact on " << worse << " of " << instances
                                          << " instances; demand met (weighted) " << greedy_met
                                          << " vs " << exact_met);
  }
}

}  // namespace resource_mig_reconfigure_test
