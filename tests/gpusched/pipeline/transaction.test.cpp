// SPDX-License-Identifier: Apache-2.0
// A cycle is all or nothing (pipeline::schedule's strong exception guarantee). A throwing
// wrapper around each of the five policies counts every call of every hook (before and after
// the wrapped call, so that a throw lands both before and after the policy changed its state)
// and throws at call k; for every k of a cycle, over seeded workloads and the registry's
// compositions (every admission x preemption pair, every ordering, packing and placement with
// the other slots at their defaults, and quota admission with every preemption), the test
// checks that the cycle threw, that the ledger, the engine and the cycle's output are as before,
// and that the cycle tried again, then the next one, give what a copy of the pipeline taken
// before gives (its policies' state is compared through what they decide). A second test
// makes the k-th memory allocation of a cycle fail (a replaced operator new), the ledger's
// included. Then the ledger's undo journal on its own.
// Seed: GPUSCHED_SEED.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include <gpusched/check/invariants.hpp>
#include <gpusched/pipeline/registry.hpp>
#include <gpusched/policy/admission/quota.hpp>

#include "generators.hpp"
#include "law_fixtures.hpp"

// ---- a failing allocation on demand ---------------------------------------------------------
// The k-th call of operator new after `arm(k)` throws std::bad_alloc (the test's own seam for "an
// allocation throws"; idle otherwise: one load per allocation). The replaced operators are
// global (they serve the whole test executable); their state has a namespace of its own.
namespace pipeline_transaction_alloc {
long alloc_countdown = -1;  // negative: idle
long alloc_calls = 0;       // calls since arm(), while counting
bool alloc_counting = false;
void* counted_alloc(std::size_t n) {
  if (alloc_counting) {
    ++alloc_calls;
    if (alloc_countdown == 0) {
      alloc_countdown = -1;
      throw std::bad_alloc();
    }
    if (alloc_countdown > 0) --alloc_countdown;
  }
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;  // NOLINT(cppcoreguidelines-no-malloc)
  throw std::bad_alloc();
}
/// Counts allocations from now on; the `k`-th (0-based) throws (never when negative).
void alloc_arm(long k) {
  alloc_calls = 0;
  alloc_countdown = k;
  alloc_counting = true;
}
void alloc_disarm() {
  alloc_counting = false;
  alloc_countdown = -1;
}
}  // namespace pipeline_transaction_alloc

void* operator new(std::size_t n) { return pipeline_transaction_alloc::counted_alloc(n); }
void* operator new[](std::size_t n) { return pipeline_transaction_alloc::counted_alloc(n); }
void operator delete(void* p) noexcept { std::free(p); }    // NOLINT(cppcoreguidelines-no-malloc)
void operator delete[](void* p) noexcept { std::free(p); }  // NOLINT(cppcoreguidelines-no-malloc)
void operator delete(void* p, std::size_t) noexcept { std::free(p); }    // NOLINT
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }  // NOLINT

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace pipeline_transaction_test {

namespace gs = gpusched;
using namespace pipeline_transaction_alloc;

namespace {

// ---- throwing wrappers ----------------------------------------------------------------------

struct injected {};  // what a wrapper throws

/// The calls of a cycle: `tick` counts one and throws `injected` at call `throw_at`.
struct fault {
  long calls = 0;
  long throw_at = -1;  // negative: never
  void tick() {
    if (calls++ == throw_at) throw injected{};
  }
};
using fault_ptr = std::shared_ptr<fault>;

struct faulty_ordering {
  using policy_category = gs::ordering_tag;
  using hooks = gs::ordering_hooks;
  gs::any_ordering_policy inner;
  fault_ptr f;
  [[nodiscard]] std::string_view name() const { return inner.name(); }
  [[nodiscard]] std::uint32_t held_hooks() const noexcept { return inner.held_hooks(); }
  void order(const gs::schedule_context& c, std::span<const gs::job_spec*> j) {
    f->tick();
    inner.order(c, j);
    f->tick();
  }
  void on_admitted(const gs::schedule_context& c, const gs::job_spec& j,
                   std::span<const gs::task_allocation> g) {
    f->tick();
    inner.on_admitted(c, j, g);
    f->tick();
  }
  void on_released(const gs::schedule_context& c, const gs::job_spec& j,
                   std::span<const gs::task_allocation> g) {
    f->tick();
    inner.on_released(c, j, g);
    f->tick();
  }
};

struct faulty_admission {
  using policy_category = gs::admission_tag;
  using hooks = gs::admission_hooks;
  gs::any_admission_policy inner;
  fault_ptr f;
  [[nodiscard]] std::string_view name() const { return inner.name(); }
  [[nodiscard]] std::uint32_t held_hooks() const noexcept { return inner.held_hooks(); }
  /// Calls `g` between two ticks.
  template <class G>
  decltype(auto) around(G&& g) {
    f->tick();
    if constexpr (std::is_void_v<decltype(g())>) {
      g();
      f->tick();
    } else {
      auto r = g();
      f->tick();
      return r;
    }
  }
  gs::admission_verdict admit(const gs::schedule_context& c, const gs::job_spec& j) {
    return around([&] { return inner.admit(c, j); });
  }
  gs::queue_action on_unplaced(const gs::schedule_context& c, const gs::job_spec& j,
                               const gs::reason& r, const gs::admission_tools& t) {
    return around([&] { return inner.on_unplaced(c, j, r, t); });
  }
  void begin_cycle(const gs::schedule_context& c) {
    around([&] { inner.begin_cycle(c); });
  }
  gs::admission_verdict approve(const gs::schedule_context& c, const gs::job_spec& j,
                                gs::ledger::transaction& tx, const gs::admission_tools& t) {
    return around([&] { return inner.approve(c, j, tx, t); });
  }
  std::optional<gs::reclaim_scope> reclaim_for(const gs::schedule_context& c, const gs::job_spec& j,
                                               const gs::reason& why) {
    return around([&] { return inner.reclaim_for(c, j, why); });
  }
  gs::admission_verdict approve_reclaim(const gs::schedule_context& c, const gs::job_spec& j,
                                        gs::ledger::transaction& tx, const gs::admission_tools& t) {
    return around([&] { return inner.approve_reclaim(c, j, tx, t); });
  }
  void on_committed(const gs::schedule_context& c, const gs::decision& d) {
    around([&] { inner.on_committed(c, d); });
  }
  void on_admitted(const gs::schedule_context& c, const gs::job_spec& j) {
    around([&] { inner.on_admitted(c, j); });
  }
  gs::admission_verdict approve_growth(const gs::schedule_context& c, const gs::running_job& r,
                                       std::span<const gs::task_allocation> added) {
    return around([&] { return inner.approve_growth(c, r, added); });
  }
  void on_grown(const gs::schedule_context& c, const gs::running_job& r,
                std::span<const gs::task_allocation> added) {
    around([&] { inner.on_grown(c, r, added); });
  }
};

struct faulty_packing {
  using policy_category = gs::packing_tag;
  gs::any_packing_policy inner;
  fault_ptr f;
  [[nodiscard]] std::string_view name() const { return inner.name(); }
  [[nodiscard]] std::optional<gs::task_allocation> fit(const gs::schedule_context& c,
                                                       gs::node_index n,
                                                       const gs::task_request& r) const {
    f->tick();
    auto a = inner.fit(c, n, r);
    f->tick();
    return a;
  }
  [[nodiscard]] std::optional<gs::task_allocation> pack(const gs::schedule_context& c,
                                                        const gs::task_request& r) const {
    f->tick();
    auto a = inner.pack(c, r);
    f->tick();
    return a;
  }
};

struct faulty_placement {
  using policy_category = gs::placement_tag;
  gs::any_placement_policy inner;
  fault_ptr f;
  [[nodiscard]] std::string_view name() const { return inner.name(); }
  gs::placement_outcome place(const gs::schedule_context& c, const gs::job_spec& j,
                              gs::packing_ref pk, gs::ledger::transaction& tx) {
    f->tick();
    auto o = inner.place(c, j, pk, tx);
    f->tick();
    return o;
  }
};

struct faulty_preemption {
  using policy_category = gs::preemption_tag;
  using hooks = gs::preemption_hooks;
  gs::any_preemption_policy inner;
  fault_ptr f;
  [[nodiscard]] std::string_view name() const { return inner.name(); }
  [[nodiscard]] std::uint32_t held_hooks() const noexcept { return inner.held_hooks(); }
  void begin_cycle(const gs::schedule_context& c) {
    f->tick();
    inner.begin_cycle(c);
    f->tick();
  }
  gs::preemption_plan select(const gs::schedule_context& c, const gs::job_spec& j,
                             gs::fit_probe probe) {
    f->tick();
    auto p = inner.select(c, j, probe);
    f->tick();
    return p;
  }
  void on_preempted(const gs::schedule_context& c, const gs::job_spec& j,
                    const gs::preemption_plan& p) {
    f->tick();
    inner.on_preempted(c, j, p);
    f->tick();
  }
  gs::preemption_plan select_reclaim(const gs::schedule_context& c, const gs::job_spec& j,
                                     const gs::reclaim_scope& s, gs::fit_probe probe) {
    f->tick();
    auto p = inner.select_reclaim(c, j, s, probe);
    f->tick();
    return p;
  }
};

using faulty_pipeline = gs::pipeline<faulty_ordering, faulty_admission, faulty_packing,
                                     faulty_placement, faulty_preemption>;

/// A composition by names (admission may be "quota": quota_admission over four teams).
struct composition {
  std::string ordering = "fifo", admission = "gang", packing = "first-fit", placement = "first-fit",
              preemption = "priority";
  [[nodiscard]] std::string label() const {
    return ordering + "/" + admission + "/" + packing + "/" + placement + "/" + preemption;
  }
};

/// Four tenants in one cohort, 6 whole GPUs of nominal quota each.
gs::quota_tree four_teams(const gs::gpu_catalog& cat) {
  gs::quota_tree::builder b(cat);
  b.cohort("all");
  for (unsigned t = 0; t < 4; ++t) {
    b.queue("team-" + std::to_string(t), gs::tenant_id{t}, "all")
        .nominal(gs::quota_resource::gpu_milli(), 6000);
  }
  return b.build();
}

/// The factories' inputs: a GPU-time prior, and the run's trees (the four teams' quota tree;
/// a flat tenant tree of the four teams) for the names that read them.
gs::policy_inputs test_inputs() {
  gs::policy_inputs in;
  in.prior = std::make_shared<const gs::gpu_time_prior>(
      std::vector<double>{30, 120, 600, 3600, 7200, 36000, 86400});
  in.quotas = std::make_shared<const gs::quota_tree>(four_teams(gs::basic_catalog()));
  std::vector<gs::tenant_spec> teams;
  for (unsigned t = 0; t < 4; ++t) {
    teams.push_back(
        {gs::tenant_id{t}, "team-" + std::to_string(t), gs::tenant_id::invalid(), 1.0 + t, 0});
  }
  in.tenants = std::make_shared<const gs::tenant_tree>(std::move(teams));
  return in;
}

faulty_pipeline make_faulty(const composition& c, const gs::gpu_catalog& cat, const fault_ptr& f) {
  const auto in = test_inputs();
  gs::any_admission_policy adm =
      c.admission == "quota" ? gs::any_admission_policy(gs::quota_admission<>(four_teams(cat)))
                             : gs::make_admission_policy(c.admission, in);
  gs::any_preemption_policy pre = gs::make_preemption_policy(c.preemption, in);
  if (c.admission == "quota" && c.preemption == "checkpoint-aware") {
    gs::checkpoint_aware_options reclaiming;
    reclaiming.reclaim = true;  // the free-quota reclaim path
    pre = gs::any_preemption_policy(gs::checkpoint_aware_preemption{reclaiming});
  }
  faulty_pipeline pipe(faulty_ordering{gs::make_ordering_policy(c.ordering, in), f},
                       faulty_admission{std::move(adm), f},
                       faulty_packing{gs::make_packing_policy(c.packing, in), f},
                       faulty_placement{gs::make_placement_policy(c.placement, in), f},
                       faulty_preemption{std::move(pre), f});
  pipe.environment().quotas = in.quotas;
  pipe.environment().tenants = in.tenants;
  return pipe;
}

/// A random job, sometimes elastic, sometimes checkpointing, spread over four tenants.
gs::job_spec workload_job(gs::random_engine& g, const gs::gpu_catalog& cat, gs::job_id id,
                          gs::sim_time now) {
  auto j = gs::testing::random_job(g, cat, id, now);
  j.tenant = gs::tenant_id{static_cast<gs::tenant_id::rep>(gs::uniform_index(g, 4))};
  if (gs::uniform_index(g, 3) == 0) {
    for (auto& grp : j.groups) grp.min_count = 1;
  }
  if (gs::uniform_index(g, 2) == 0) {
    j.checkpoint.interval = gs::seconds(60);
    j.checkpoint.last = now;
    j.checkpoint.checkpoint_cost = gs::seconds(5);
    j.checkpoint.restore_cost = gs::seconds(10);
  }
  if (gs::uniform_index(g, 2) == 0) j.expected_duration = gs::seconds(30 + 10 * id.value() % 300);
  return j;
}

/// A workload in progress: a cluster, its running jobs, a queue, the driver's engine.
struct workload {
  gs::random_engine g;
  gs::ledger book;
  std::vector<gs::job_spec> pending;
  unsigned next_id = 1;
  long cycle = 0;
};

workload make_workload(std::uint64_t seed, const gs::gpu_catalog& cat) {
  workload w{gs::random_engine(seed), {}, {}, 1, 0};
  w.book =
      gs::ledger(gs::cluster(cat, gs::testing::random_nodes(w.g, 3 + gs::uniform_index(w.g, 4))));
  return w;
}

[[nodiscard]] gs::sim_time now_of(const workload& w) { return gs::at(gs::seconds(10 * w.cycle)); }

/// Before a cycle: new arrivals, finished jobs released (through the pipeline, so an
/// incremental ordering follows), their service credited to the pipeline's history.
template <class P>
void arrive_and_finish(workload& w, P& pipe, const gs::gpu_catalog& cat, gs::random_engine& rng) {
  const auto now = now_of(w);
  for (auto k = gs::uniform_index(w.g, 3); k > 0; --k) {
    w.pending.push_back(workload_job(w.g, cat, gs::job_id{w.next_id++}, now));
  }
  std::vector<gs::job_id> finishing;
  for (const auto& r : w.book.running()) {
    pipe.history().service.add(r.spec.id, static_cast<double>(r.milli_gpus()) / 100.0,
                               gs::seconds(10));
    if (gs::uniform_index(w.g, 6) == 0) finishing.push_back(r.spec.id);
  }
  for (auto id : finishing) pipe.release(w.book, id, now, rng);
}

/// After a cycle: decided jobs leave the queue.
void settle(workload& w, const gs::cycle_result& res) {
  std::vector<gs::job_id> gone;
  for (const auto& d : res.decisions) {
    if (d.kind != gs::verdict::defer) gone.push_back(d.job);
  }
  std::erase_if(w.pending, [&](const gs::job_spec& j) {
    return std::find(gone.begin(), gone.end(), j.id) != gone.end();
  });
  if (w.pending.size() > 20) w.pending.erase(w.pending.begin(), w.pending.begin() + 6);
  ++w.cycle;
}

/// Totals of a property run.
struct tally {
  long trials = 0;    // throws injected
  long failures = 0;  // trials after which something differed
  long admitted = 0;  // admissions in the reference cycles (the workload does something)
};

/// Checks one injection: `pipe` (a copy of the state before), `book`, `rng` after the cycle
/// threw at call `k`; `ref_*` the reference (a copy that ran the cycle without a throw, then
/// the next one). False (and a message) when anything differs.
template <class P>
bool check_after_throw(P& pipe, gs::ledger& book, gs::random_engine& rng, const workload& w,
                       const gs::testing::ledger_snapshot& before, std::uint64_t version_before,
                       const gs::random_engine& rng_before, const gs::cycle_result& thrown_out,
                       const gs::cycle_result& ref_res,
                       const gs::testing::ledger_snapshot& ref_after,
                       const gs::cycle_result& ref_next,
                       const std::vector<gs::job_spec>& next_pending, const std::string& where) {
  const auto fail = [&](const char* what) {
    MESSAGE(where << ": " << what);
    return false;
  };
  if (!thrown_out.decisions.empty() || !thrown_out.grown.empty()) return fail("output not empty");
  if (gs::testing::ledger_snapshot::of(book) != before) return fail("ledger changed");
  if (book.version() != version_before) return fail("ledger version changed");
  if (!(rng == rng_before)) return fail("engine advanced");
  if (!gs::check_invariants(book).ok()) return fail("invariants broken");
  const auto now = now_of(w);
  const auto again = pipe.schedule(book, w.pending, now, rng);
  if (again != ref_res) return fail("the retried cycle differs from a fresh copy's");
  if (gs::testing::ledger_snapshot::of(book) != ref_after)
    return fail("ledger after retry differs");
  const auto next = pipe.schedule(book, next_pending, now + gs::seconds(10), rng);
  if (next != ref_next) return fail("the cycle after the retry differs");
  return true;
}

/// Runs `cycles` cycles of `c` on a seeded workload; at each cycle from `first_checked` on,
/// injects a throw at every call index of the cycle's hooks (`stride` apart, from `offset`).
tally run_property(const composition& c, std::uint64_t seed, long cycles, long first_checked,
                   long stride = 1) {
  const auto cat = gs::basic_catalog();
  auto f = std::make_shared<fault>();
  auto pipe = make_faulty(c, cat, f);
  workload w = make_workload(seed, cat);
  gs::random_engine rng(seed + 7);
  tally t;
  for (long cyc = 0; cyc < cycles; ++cyc) {
    f->throw_at = -1;
    arrive_and_finish(w, pipe, cat, rng);
    const auto now = now_of(w);
    if (cyc >= first_checked) {
      // the reference: a copy runs this cycle and the next without a throw
      auto ref_pipe = pipe;
      auto ref_book = w.book;
      auto ref_rng = rng;
      f->calls = 0;
      const auto ref_res = ref_pipe.schedule(ref_book, w.pending, now, ref_rng);
      const long calls = f->calls;
      const auto ref_after = gs::testing::ledger_snapshot::of(ref_book);
      workload after = w;
      settle(after, ref_res);
      const auto ref_next =
          ref_pipe.schedule(ref_book, after.pending, now + gs::seconds(10), ref_rng);
      t.admitted += static_cast<long>(ref_res.count(gs::verdict::admit));
      const auto before = gs::testing::ledger_snapshot::of(w.book);
      for (long k = static_cast<long>(seed % static_cast<std::uint64_t>(stride)); k < calls;
           k += stride) {
        auto p = pipe;
        auto book = w.book;
        auto r = rng;
        f->calls = 0;
        f->throw_at = k;
        gs::cycle_result out;
        out.decisions.emplace_back();  // must be cleared
        bool threw = false;
        try {
          p.schedule(book, w.pending, now, r, out);
        } catch (const injected&) {
          threw = true;
        }
        f->throw_at = -1;
        ++t.trials;
        if (!threw) {
          ++t.failures;
          MESSAGE(c.label() << " cycle " << cyc << ": call " << k << " of " << calls
                            << " did not throw");
          continue;
        }
        if (!check_after_throw(p, book, r, w, before, w.book.version(), rng, out, ref_res,
                               ref_after, ref_next, after.pending,
                               c.label() + " seed " + std::to_string(seed) + " cycle " +
                                   std::to_string(cyc) + " throw at call " + std::to_string(k) +
                                   " of " + std::to_string(calls)))
          ++t.failures;
      }
    }
    f->calls = 0;
    const auto res = pipe.schedule(w.book, w.pending, now, rng);
    REQUIRE(gs::check_invariants(w.book).ok());
    settle(w, res);
  }
  return t;
}

std::vector<composition> registry_compositions() {
  std::vector<composition> out;
  for (const auto adm : gs::builtin_names<gs::admission_tag>()) {
    for (const auto pre : gs::builtin_names<gs::preemption_tag>()) {
      composition c;
      c.admission = adm;
      c.preemption = pre;
      out.push_back(c);
    }
  }
  for (const auto pre : gs::builtin_names<gs::preemption_tag>()) {
    composition c;
    c.admission = "quota";
    c.preemption = pre;
    out.push_back(c);
  }
  for (const auto o : gs::builtin_names<gs::ordering_tag>()) {
    composition c;
    c.ordering = o;
    c.admission = "gang-easy";
    c.preemption = "checkpoint-aware";
    out.push_back(c);
  }
  for (const auto p : gs::builtin_names<gs::packing_tag>()) {
    composition c;
    c.packing = p;
    out.push_back(c);
  }
  for (const auto p : gs::builtin_names<gs::placement_tag>()) {
    composition c;
    c.placement = p;
    c.preemption = "las";
    out.push_back(c);
  }
  // stateful policies of every family together
  out.push_back({"drf", "quota", "fgd-best-fit", "gang", "checkpoint-aware"});
  out.push_back({"multifactor", "gang-conservative", "best-fit", "topology", "las"});
  return out;
}

}  // namespace

TEST_SUITE("pipeline/transaction") {
  TEST_CASE("a hook that throws at any call of a cycle leaves everything as before the cycle") {
    const auto seed = gs::seed_from_env(2203);
    tally all;
    for (const auto& c : registry_compositions()) {
      for (std::uint64_t s = seed; s < seed + 2; ++s) {
        const tally t = run_property(c, s, 14, 8);
        all.trials += t.trials;
        all.failures += t.failures;
        all.admitted += t.admitted;
        CHECK_MESSAGE(t.failures == 0, c.label() << " seed " << s << ": " << t.failures << " of "
                                                 << t.trials << " injected throws left a trace");
      }
    }
    MESSAGE("throws injected: " << all.trials << ", left a trace: " << all.failures
                                << ", admissions in the reference cycles: " << all.admitted);
    CHECK(all.trials > 10000);
    CHECK(all.admitted > 100);
  }

  TEST_CASE("an allocation that fails at any point of a cycle leaves everything as before") {
    // every allocation of the cycle (policies' copies, the journal, the ledger's commit, the
    // policies' own buffers, the output) fails in turn
    const auto seed = gs::seed_from_env(2204);
    const auto cat = gs::basic_catalog();
    long trials = 0, failures = 0;
    for (const composition& c :
         {composition{}, composition{"drf", "quota", "best-fit", "gang", "checkpoint-aware"},
          composition{"las", "gang-easy", "first-fit", "topology", "las"},
          composition{"multifactor", "gang-conservative", "fgd-best-fit", "first-fit",
                      "kube-default"}}) {
      auto f = std::make_shared<fault>();
      auto pipe = make_faulty(c, cat, f);
      workload w = make_workload(seed, cat);
      gs::random_engine rng(seed + 7);
      for (long cyc = 0; cyc < 16; ++cyc) {
        arrive_and_finish(w, pipe, cat, rng);
        const auto now = now_of(w);
        if (cyc >= 6) {
          auto ref_pipe = pipe;
          auto ref_book = w.book;
          auto ref_rng = rng;
          alloc_arm(-1);
          const auto ref_res = ref_pipe.schedule(ref_book, w.pending, now, ref_rng);
          const long allocs = alloc_calls;
          alloc_disarm();
          const auto ref_after = gs::testing::ledger_snapshot::of(ref_book);
          workload after = w;
          settle(after, ref_res);
          const auto ref_next =
              ref_pipe.schedule(ref_book, after.pending, now + gs::seconds(10), ref_rng);
          const auto before = gs::testing::ledger_snapshot::of(w.book);
          for (long k = 0; k < allocs; ++k) {
            auto p = pipe;
            auto book = w.book;
            auto r = rng;
            gs::cycle_result out;
            bool threw = false;
            alloc_arm(k);
            try {
              p.schedule(book, w.pending, now, r, out);
            } catch (const std::bad_alloc&) {
              threw = true;
            }
            alloc_disarm();
            ++trials;
            if (!threw) {
              ++failures;
              MESSAGE(c.label() << ": allocation " << k << " of " << allocs << " did not throw");
              continue;
            }
            if (!check_after_throw(p, book, r, w, before, w.book.version(), rng, out, ref_res,
                                   ref_after, ref_next, after.pending,
                                   c.label() + " cycle " + std::to_string(cyc) + " allocation " +
                                       std::to_string(k) + " of " + std::to_string(allocs)))
              ++failures;
          }
        }
        const auto res = pipe.schedule(w.book, w.pending, now, rng);
        settle(w, res);
      }
    }
    MESSAGE("failed allocations injected: " << trials << ", left a trace: " << failures);
    CHECK(failures == 0);
    CHECK(trials > 500);
  }

  TEST_CASE("the ledger's undo journal restores running jobs, their order, the cluster, version") {
    const auto seed = gs::seed_from_env(2205);
    const auto cat = gs::basic_catalog();
    for (std::uint64_t s = seed; s < seed + 20; ++s) {
      gs::random_engine g(s);
      gs::ledger book(gs::cluster(cat, gs::testing::random_nodes(g, 6)));
      gs::testing::law_running(g, book, cat, 12, gs::at(gs::seconds(7200)), true);
      const auto before = gs::testing::ledger_snapshot::of(book);
      const auto version = book.version();
      std::vector<gs::job_id> order;
      for (const auto& r : book.running()) order.push_back(r.spec.id);
      book.begin_undo();
      unsigned id = 500;
      // evictions, shrinks, grows and admissions in several commits
      for (int step = 0; step < 8; ++step) {
        auto tx = book.begin();
        const auto running = book.running();
        if (!running.empty() && gs::uniform_index(g, 2) == 0) {
          const auto& r = running[gs::uniform_index(g, running.size())];
          bool shrunk = false;
          for (std::size_t gi = 0; gi < r.spec.groups.size() && !shrunk; ++gi) {
            const auto runs = r.tasks_in_group(gi);
            if (r.spec.groups[gi].elastic() && runs > r.spec.groups[gi].minimum()) {
              tx.shrink({r.spec.id, static_cast<std::uint16_t>(gi), runs - 1});
              shrunk = true;
            }
          }
          if (!shrunk) tx.evict(r.spec.id);
        }
        const auto j = workload_job(g, cat, gs::job_id{id++}, gs::sim_time{});
        gs::first_fit_placement place;
        const gs::first_fit_packing pack;
        const gs::schedule_context ctx(book, gs::sim_time{}, g);
        const auto sp = tx.mark();
        if (place.place(ctx, j, pack, tx).placed) {
          tx.commit(j, gs::sim_time{});
        } else {
          tx.rollback_to(sp);  // the partial placement; the eviction or shrink stays
          tx.commit();
        }
      }
      CHECK(gs::testing::ledger_snapshot::of(book) != before);
      book.undo();
      CHECK(gs::testing::ledger_snapshot::of(book) == before);
      CHECK(book.version() == version);
      std::vector<gs::job_id> order_after;
      for (const auto& r : book.running()) {
        order_after.push_back(r.spec.id);
        CHECK(book.find(r.spec.id) == &r);
      }
      CHECK(order_after == order);
      CHECK(gs::check_invariants(book).ok());
      CHECK_FALSE(book.undo_open());
      // a copy of a ledger does not carry a journal
      book.begin_undo();
      const gs::ledger copy = book;
      CHECK_FALSE(copy.undo_open());
      book.end_undo();
    }
  }
}

}  // namespace pipeline_transaction_test
