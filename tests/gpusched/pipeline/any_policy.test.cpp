// SPDX-License-Identifier: Apache-2.0
// The static-vs-erased property of the type-erased wrappers (pipeline/any_policy.hpp): over a
// seeded sample of the cross product of all five slots (every built-in name of every family,
// plus one "witness" policy per family with hooks), the any_pipeline the registry builds and a
// pipeline of closed-set static wrappers (a std::variant of the concrete policies, dispatched
// without the any_* wrappers) make the same decisions, cycle after cycle, on the same random
// workload; the sample reaches the free-quota reclaim path (checked). The witnesses make every
// hook observable: each hook call changes a hash that their decisions depend on, so dropping any
// forwarded hook of the wrappers changes decisions. The mutation check: compiling this file with
// -DGPUSCHED_MUTATE_ANY_POLICY=N (N = 1..13, `detail::forwarded`) drops one forwarded hook, and
// the property case must fail (CMake option GPUSCHED_MUTATION_TESTS builds and runs the 13).
// Seed: GPUSCHED_SEED; samples: GPUSCHED_SAMPLES; cycles per sample: GPUSCHED_CYCLES.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <gpusched/check/invariants.hpp>
#include <gpusched/pipeline/registry.hpp>

#include "generators.hpp"

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace pipeline_any_policy_test {

namespace gs = gpusched;

namespace {
long from_env(const char* var, long fallback) {
  if (const char* s = std::getenv(var)) return std::atol(s);  // NOLINT
  return fallback;
}

/// Mixes one hook call (`code`, `x`) into `h`.
void mix(std::uint64_t& h, std::uint64_t code, std::uint64_t x) {
  h = (h ^ (code * 0x9E3779B97F4A7C15ULL + x)) * 0x100000001B3ULL;
}

// ---- witnesses: every hook call changes what they decide next ---------------------------------

/// DRF, then the order rotated by a hash of the incremental hook calls.
struct witness_ordering {
  using policy_category = gs::ordering_tag;
  using hooks = gs::hook_list<gs::hook::incremental>;
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "witness"; }
  void order(const gs::schedule_context& c, std::span<const gs::job_spec*> jobs) {
    inner.order(c, jobs);
    if (jobs.size() > 1) {
      std::rotate(jobs.begin(), jobs.begin() + static_cast<std::ptrdiff_t>(h % jobs.size()),
                  jobs.end());
    }
  }
  void on_admitted(const gs::schedule_context& c, const gs::job_spec& j,
                   std::span<const gs::task_allocation> g) {
    inner.on_admitted(c, j, g);
    mix(h, 1, j.id.value() + g.size());
  }
  void on_released(const gs::schedule_context& c, const gs::job_spec& j,
                   std::span<const gs::task_allocation> g) {
    inner.on_released(c, j, g);
    mix(h, 2, j.id.value() + g.size());
  }
  gs::drf_ordering inner{};
  std::uint64_t h = 0;
};

/// Quota admission (the run's tree) that also defers a job when a hash of every hook call says
/// so.
struct witness_admission {
  using policy_category = gs::admission_tag;
  using hooks = gs::admission_hooks;
  explicit witness_admission(const gs::policy_inputs& in) : inner(*in.quotas) {}
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "witness"; }
  gs::admission_verdict admit(const gs::schedule_context& c, const gs::job_spec& j) {
    if ((h + j.id.value()) % 11 == 0) return {gs::verdict::defer, gs::reason::backoff_cycles(1, 0)};
    return inner.admit(c, j);
  }
  gs::queue_action on_unplaced(const gs::schedule_context& c, const gs::job_spec& j,
                               const gs::reason& why, const gs::admission_tools& t) {
    return inner.on_unplaced(c, j, why, t);
  }
  void begin_cycle(const gs::schedule_context& c) {
    inner.begin_cycle(c);
    mix(h, 3, static_cast<std::uint64_t>(c.now().time_since_epoch().count()));
  }
  gs::admission_verdict approve(const gs::schedule_context& c, const gs::job_spec& j,
                                gs::ledger::transaction& tx, const gs::admission_tools& t) {
    mix(h, 4, j.id.value());
    return inner.approve(c, j, tx, t);
  }
  std::optional<gs::reclaim_scope> reclaim_for(const gs::schedule_context& c, const gs::job_spec& j,
                                               const gs::reason& why) {
    mix(h, 5, j.id.value());
    return inner.reclaim_for(c, j, why);
  }
  gs::admission_verdict approve_reclaim(const gs::schedule_context& c, const gs::job_spec& j,
                                        gs::ledger::transaction& tx, const gs::admission_tools& t) {
    mix(h, 6, j.id.value());
    return inner.approve_reclaim(c, j, tx, t);
  }
  void on_committed(const gs::schedule_context& c, const gs::decision& d) {
    mix(h, 7, d.job.value());
    inner.on_committed(c, d);
  }
  void on_admitted(const gs::schedule_context& c, const gs::job_spec& j) {
    mix(h, 8, j.id.value());
    inner.on_admitted(c, j);
  }
  gs::admission_verdict approve_growth(const gs::schedule_context& c, const gs::running_job& r,
                                       std::span<const gs::task_allocation> added) {
    mix(h, 9, r.spec.id.value() + added.size());
    return inner.approve_growth(c, r, added);
  }
  void on_grown(const gs::schedule_context& c, const gs::running_job& r,
                std::span<const gs::task_allocation> added) {
    mix(h, 10, r.spec.id.value() + added.size());
    inner.on_grown(c, r, added);
  }
  gs::quota_admission<> inner;
  std::uint64_t h = 0;
};

/// Checkpoint-aware preemption with quota reclaim and thrash protection (so `on_preempted`
/// matters) that also refuses to preempt when a hash of every hook call says so.
struct witness_preemption {
  using policy_category = gs::preemption_tag;
  using hooks = gs::preemption_hooks;
  witness_preemption() : inner(options()) {}
  static gs::checkpoint_aware_options options() {
    gs::checkpoint_aware_options o;
    o.reclaim = true;
    o.thrash_window = gs::seconds(300);
    return o;
  }
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "witness"; }
  void begin_cycle(const gs::schedule_context& c) {
    mix(h, 11, static_cast<std::uint64_t>(c.now().time_since_epoch().count()));
  }
  gs::preemption_plan select(const gs::schedule_context& c, const gs::job_spec& j,
                             gs::fit_probe probe) {
    if ((h + j.id.value()) % 7 == 0) {
      gs::preemption_plan none;
      none.why = gs::reason::no_victims();
      return none;
    }
    return inner.select(c, j, probe);
  }
  void on_preempted(const gs::schedule_context& c, const gs::job_spec& j,
                    const gs::preemption_plan& plan) {
    mix(h, 12, j.id.value() + plan.victims.size());
    inner.on_preempted(c, j, plan);
  }
  gs::preemption_plan select_reclaim(const gs::schedule_context& c, const gs::job_spec& j,
                                     const gs::reclaim_scope& scope, gs::fit_probe probe) {
    mix(h, 13, j.id.value());
    return inner.select_reclaim(c, j, scope, probe);
  }
  gs::checkpoint_aware_preemption inner;
  std::uint64_t h = 0;
};

// ---- closed-set static wrappers: a variant of the concrete policies of a family ---------------

template <class E>
using made_t = std::remove_cvref_t<decltype(std::declval<const E&>().make(
    std::declval<const gs::policy_inputs&>()))>;

template <class Tag, class Table, class... Extra>
struct variant_of;
template <class Tag, class... E, class... Extra>
struct variant_of<Tag, std::tuple<E...>, Extra...> {
  using type = std::variant<made_t<E>..., Extra...>;
};

/// The variant of family `Tag`'s built-in policy types, then `Extra...`.
template <class Tag, class... Extra>
using closed_variant =
    typename variant_of<Tag, decltype(gs::builtin_policies<Tag>()), Extra...>::type;

constexpr std::string_view witness_name = "witness";

/// The variant holding the built-in policy `name` of family `Tag` (or the witness `W`).
template <class Tag, class V, class W = void>
V make_closed(std::string_view name, const gs::policy_inputs& in) {
  auto table = gs::builtin_policies<Tag>();
  constexpr std::size_t n = std::tuple_size_v<decltype(table)>;
  std::optional<V> out;
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (void)((std::get<I>(table).name == name
                ? (out.emplace(std::in_place_index<I>, std::get<I>(table).make(in)), true)
                : false) ||
           ...);
  }(std::make_index_sequence<n>{});
  if constexpr (!std::is_void_v<W>) {
    if (!out && name == witness_name) {
      if constexpr (std::is_constructible_v<W, const gs::policy_inputs&>) {
        out.emplace(std::in_place_index<n>, W(in));
      } else {
        out.emplace(std::in_place_index<n>, W{});
      }
    }
  }
  REQUIRE_MESSAGE(out.has_value(), name);
  return std::move(*out);
}

/// What every closed wrapper has: the variant, the held policy's name and declared hooks.
template <class V>
struct closed_base {
  using variant_type = V;
  V v;
  [[nodiscard]] std::string_view name() const {
    return std::visit([](const auto& p) -> std::string_view { return p.name(); }, v);
  }
  [[nodiscard]] std::uint32_t held_hooks() const noexcept {
    return std::visit(
        [](const auto& p) { return gs::declared_hook_mask<std::remove_cvref_t<decltype(p)>>; }, v);
  }
};

template <class P, class H>
constexpr bool has_hook = gs::declares_hook<std::remove_cvref_t<P>, H>;

struct closed_ordering : closed_base<closed_variant<gs::ordering_tag, witness_ordering>> {
  using policy_category = gs::ordering_tag;
  using hooks = gs::ordering_hooks;
  void order(const gs::schedule_context& c, std::span<const gs::job_spec*> j) {
    std::visit([&](auto& p) { p.order(c, j); }, v);
  }
  void on_admitted(const gs::schedule_context& c, const gs::job_spec& j,
                   std::span<const gs::task_allocation> g) {
    std::visit(
        [&](auto& p) {
          if constexpr (has_hook<decltype(p), gs::hook::incremental>) p.on_admitted(c, j, g);
        },
        v);
  }
  void on_released(const gs::schedule_context& c, const gs::job_spec& j,
                   std::span<const gs::task_allocation> g) {
    std::visit(
        [&](auto& p) {
          if constexpr (has_hook<decltype(p), gs::hook::incremental>) p.on_released(c, j, g);
        },
        v);
  }
};

struct closed_admission : closed_base<closed_variant<gs::admission_tag, witness_admission>> {
  using policy_category = gs::admission_tag;
  using hooks = gs::admission_hooks;
  gs::admission_verdict admit(const gs::schedule_context& c, const gs::job_spec& j) {
    return std::visit([&](auto& p) { return p.admit(c, j); }, v);
  }
  gs::queue_action on_unplaced(const gs::schedule_context& c, const gs::job_spec& j,
                               const gs::reason& r, const gs::admission_tools& t) {
    return std::visit(
        [&](auto& p) {
          if constexpr (requires { p.on_unplaced(c, j, r, t); }) {
            return p.on_unplaced(c, j, r, t);
          } else {
            return p.on_unplaced(c, j, r);
          }
        },
        v);
  }
  void begin_cycle(const gs::schedule_context& c) {
    std::visit(
        [&](auto& p) {
          if constexpr (has_hook<decltype(p), gs::hook::begin_cycle>) p.begin_cycle(c);
        },
        v);
  }
  gs::admission_verdict approve(const gs::schedule_context& c, const gs::job_spec& j,
                                gs::ledger::transaction& tx, const gs::admission_tools& t) {
    return std::visit(
        [&](auto& p) -> gs::admission_verdict {
          if constexpr (has_hook<decltype(p), gs::hook::approve>) {
            return gs::hook::approve::call(p, c, j, tx, t);
          } else {
            return {};
          }
        },
        v);
  }
  std::optional<gs::reclaim_scope> reclaim_for(const gs::schedule_context& c, const gs::job_spec& j,
                                               const gs::reason& why) {
    return std::visit(
        [&](auto& p) -> std::optional<gs::reclaim_scope> {
          if constexpr (has_hook<decltype(p), gs::hook::reclaim>) {
            return p.reclaim_for(c, j, why);
          } else {
            return std::nullopt;
          }
        },
        v);
  }
  gs::admission_verdict approve_reclaim(const gs::schedule_context& c, const gs::job_spec& j,
                                        gs::ledger::transaction& tx, const gs::admission_tools& t) {
    return std::visit(
        [&](auto& p) -> gs::admission_verdict {
          if constexpr (has_hook<decltype(p), gs::hook::reclaim>) {
            return p.approve_reclaim(c, j, tx, t);
          } else {
            return approve(c, j, tx, t);
          }
        },
        v);
  }
  void on_committed(const gs::schedule_context& c, const gs::decision& d) {
    std::visit(
        [&](auto& p) {
          if constexpr (has_hook<decltype(p), gs::hook::on_committed>) p.on_committed(c, d);
        },
        v);
  }
  void on_admitted(const gs::schedule_context& c, const gs::job_spec& j) {
    std::visit(
        [&](auto& p) {
          if constexpr (has_hook<decltype(p), gs::hook::on_admitted>) p.on_admitted(c, j);
        },
        v);
  }
  gs::admission_verdict approve_growth(const gs::schedule_context& c, const gs::running_job& r,
                                       std::span<const gs::task_allocation> added) {
    return std::visit(
        [&](auto& p) -> gs::admission_verdict {
          if constexpr (has_hook<decltype(p), gs::hook::approve_growth>) {
            return p.approve_growth(c, r, added);
          } else {
            return {};
          }
        },
        v);
  }
  void on_grown(const gs::schedule_context& c, const gs::running_job& r,
                std::span<const gs::task_allocation> added) {
    std::visit(
        [&](auto& p) {
          if constexpr (has_hook<decltype(p), gs::hook::on_grown>) p.on_grown(c, r, added);
        },
        v);
  }
};

struct closed_packing : closed_base<closed_variant<gs::packing_tag>> {
  using policy_category = gs::packing_tag;
  [[nodiscard]] std::optional<gs::task_allocation> fit(const gs::schedule_context& c,
                                                       gs::node_index n,
                                                       const gs::task_request& r) const {
    return std::visit([&](const auto& p) { return p.fit(c, n, r); }, v);
  }
  [[nodiscard]] std::optional<gs::task_allocation> pack(const gs::schedule_context& c,
                                                        const gs::task_request& r) const {
    return std::visit([&](const auto& p) { return p.pack(c, r); }, v);
  }
};

struct closed_placement : closed_base<closed_variant<gs::placement_tag>> {
  using policy_category = gs::placement_tag;
  gs::placement_outcome place(const gs::schedule_context& c, const gs::job_spec& j,
                              gs::packing_ref pk, gs::ledger::transaction& tx) {
    return std::visit([&](auto& p) { return p.place(c, j, pk, tx); }, v);
  }
};

struct closed_preemption : closed_base<closed_variant<gs::preemption_tag, witness_preemption>> {
  using policy_category = gs::preemption_tag;
  using hooks = gs::preemption_hooks;
  void begin_cycle(const gs::schedule_context& c) {
    std::visit(
        [&](auto& p) {
          if constexpr (has_hook<decltype(p), gs::hook::begin_cycle>) p.begin_cycle(c);
        },
        v);
  }
  gs::preemption_plan select(const gs::schedule_context& c, const gs::job_spec& j,
                             gs::fit_probe f) {
    return std::visit([&](auto& p) { return p.select(c, j, f); }, v);
  }
  void on_preempted(const gs::schedule_context& c, const gs::job_spec& j,
                    const gs::preemption_plan& pl) {
    std::visit(
        [&](auto& p) {
          if constexpr (has_hook<decltype(p), gs::hook::on_preempted>) p.on_preempted(c, j, pl);
        },
        v);
  }
  gs::preemption_plan select_reclaim(const gs::schedule_context& c, const gs::job_spec& j,
                                     const gs::reclaim_scope& s, gs::fit_probe f) {
    auto plan = std::visit(
        [&](auto& p) -> gs::preemption_plan {
          if constexpr (has_hook<decltype(p), gs::hook::select_reclaim>) {
            return p.select_reclaim(c, j, s, f);
          } else {
            return {};
          }
        },
        v);
    if (!plan.empty() && reclaims != nullptr) ++*reclaims;
    return plan;
  }
  std::size_t* reclaims = nullptr;  // counts plans of the reclaim path
};

using closed_pipeline = gs::pipeline<closed_ordering, closed_admission, closed_packing,
                                     closed_placement, closed_preemption>;

// ---- the workload ------------------------------------------------------------------------------

/// Four tenants in one cohort, 4 whole GPUs (milli-GPU) of nominal quota each: less than most
/// clusters of the workload have, so the cohort's quota runs out while GPUs are free (the
/// free-quota reclaim path).
gs::quota_tree four_teams(const gs::gpu_catalog& cat) {
  gs::quota_tree::builder b(cat);
  b.cohort("all");
  for (unsigned t = 0; t < 4; ++t) {
    b.queue("team-" + std::to_string(t), gs::tenant_id{t}, "all")
        .nominal(gs::quota_resource::gpu_milli(), 4000);
  }
  return b.build();
}

/// The factories' inputs: a GPU-time prior and the run's trees.
gs::policy_inputs inputs() {
  gs::policy_inputs in;
  in.prior = std::make_shared<const gs::gpu_time_prior>(
      std::vector<double>{30, 120, 600, 3600, 7200, 36000, 86400});
  in.quotas = std::make_shared<const gs::quota_tree>(four_teams(gs::basic_catalog()));
  const gs::tenant_id a{100}, b{101};
  in.tenants = std::make_shared<const gs::tenant_tree>(
      std::vector<gs::tenant_spec>{{a, "acct-a", gs::tenant_id::invalid(), 1.0, 0},
                                   {b, "acct-b", gs::tenant_id::invalid(), 2.0, 0},
                                   {gs::tenant_id{0}, "team-0", a, 1.0, 0},
                                   {gs::tenant_id{1}, "team-1", a, 3.0, 0},
                                   {gs::tenant_id{2}, "team-2", b, 2.0, 0},
                                   {gs::tenant_id{3}, "team-3", b, 4.0, 0}});
  return in;
}

/// The registry of the erased side: the built-in names and the witnesses.
gs::policy_registry witness_registry() {
  gs::policy_registry reg;
  reg.add(std::string(witness_name), "test: DRF rotated by a hash of its hook calls",
          [](const gs::policy_inputs&) { return witness_ordering{}; });
  reg.add(std::string(witness_name), "test: quota admission deferring by a hash of its hooks",
          [](const gs::policy_inputs& in) { return witness_admission(in); });
  reg.add(std::string(witness_name), "test: checkpoint-aware (reclaim, thrash) refusing by hash",
          [](const gs::policy_inputs&) { return witness_preemption{}; });
  return reg;
}

/// A random job, sometimes elastic, sometimes checkpointing, over tenants 0..3.
gs::job_spec workload_job(gs::random_engine& g, const gs::gpu_catalog& cat, gs::job_id id,
                          gs::sim_time now) {
  auto j = gs::testing::random_job(g, cat, id, now);
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

/// Runs the closed (static) and the erased pipeline in lock step on two copies of one random
/// cluster with one job stream; false (with a message) at the first difference.
bool lockstep(closed_pipeline a, gs::any_pipeline b, std::uint64_t seed, long cycles,
              const std::string& label) {
  gs::random_engine g(seed);
  gs::random_engine ga(seed + 1), gb(seed + 1);
  const auto cat = gs::basic_catalog();
  gs::ledger book_a(gs::cluster(cat, gs::testing::random_nodes(g, 3 + gs::uniform_index(g, 6))));
  gs::ledger book_b = book_a;
  std::vector<gs::job_spec> pending;
  unsigned next_id = 1;
  for (long c = 0; c < cycles; ++c) {
    const auto now = gs::at(gs::seconds(10 * c));
    for (auto k = gs::uniform_index(g, 3); k > 0; --k) {
      pending.push_back(workload_job(g, cat, gs::job_id{next_id++}, now));
    }
    std::vector<gs::job_id> finishing;
    for (const auto& r : book_a.running()) {
      if (gs::uniform_index(g, 6) == 0) finishing.push_back(r.spec.id);
    }
    for (auto id : finishing) {
      a.release(book_a, id, now, ga);
      b.release(book_b, id, now, gb);
    }
    const auto ra = a.schedule(book_a, pending, now, ga);
    const auto rb = b.schedule(book_b, pending, now, gb);
    bool same = ra.decisions == rb.decisions && ra.grown == rb.grown &&
                book_a.running().size() == book_b.running().size();
    for (std::size_t i = 0; same && i < book_a.running().size(); ++i) {
      same = book_a.running()[i].spec.id == book_b.running()[i].spec.id &&
             book_a.running()[i].tasks == book_b.running()[i].tasks;
    }
    if (!same) {
      std::string first;
      for (std::size_t i = 0; i < std::min(ra.decisions.size(), rb.decisions.size()); ++i) {
        if (ra.decisions[i] == rb.decisions[i]) continue;
        first = ", decision " + std::to_string(i) + ": static '" +
                gs::describe(ra.decisions[i], book_a.state()) + "' vs erased '" +
                gs::describe(rb.decisions[i], book_b.state()) + "'";
        break;
      }
      MESSAGE(label << ", seed " << seed << ": differ at cycle " << c << first);
      return false;
    }
    REQUIRE(gs::check_invariants(book_a).ok());
    std::vector<gs::job_id> gone;
    for (const auto& d : ra.decisions) {
      if (d.kind != gs::verdict::defer) gone.push_back(d.job);
    }
    std::erase_if(pending, [&](const gs::job_spec& j) {
      return std::find(gone.begin(), gone.end(), j.id) != gone.end();
    });
    if (pending.size() > 30) pending.erase(pending.begin(), pending.begin() + 10);
  }
  return true;
}

/// The names of family `Tag` to sample from: the built-in ones, and the witness when the family
/// has hooks.
template <class Tag>
std::vector<std::string_view> sample_names() {
  auto n = gs::builtin_names<Tag>();
  if constexpr (std::same_as<Tag, gs::ordering_tag> || std::same_as<Tag, gs::admission_tag> ||
                std::same_as<Tag, gs::preemption_tag>) {
    n.push_back(witness_name);
  }
  return n;
}
}  // namespace

TEST_SUITE("pipeline/any_policy") {
  TEST_CASE(
      "static and erased pipelines decide alike over a seeded sample of all five slots, reclaim "
      "included") {
    const auto seed = gs::seed_from_env(3401);
    const long samples = from_env("GPUSCHED_SAMPLES", 48);
    const long cycles = from_env("GPUSCHED_CYCLES", 80);
    INFO("seed = " << seed);
    const auto in = inputs();
    const auto reg = witness_registry();
    const auto ord = sample_names<gs::ordering_tag>();
    const auto adm = sample_names<gs::admission_tag>();
    const auto pak = sample_names<gs::packing_tag>();
    const auto pla = sample_names<gs::placement_tag>();
    const auto pre = sample_names<gs::preemption_tag>();
    gs::random_engine pick(seed);
    const auto any_of = [&](const std::vector<std::string_view>& v) {
      return v[gs::uniform_index(pick, v.size())];
    };
    std::size_t reclaims = 0, differing = 0;
    for (long s = 0; s < samples; ++s) {
      gs::pipeline_config cfg{std::string(any_of(ord)), std::string(any_of(adm)),
                              std::string(any_of(pak)), std::string(any_of(pla)),
                              std::string(any_of(pre))};
      // every other sample: a quota admission and a preemption with select_reclaim, so the
      // free-quota reclaim path is reached (its plans are counted below)
      if (s % 2 == 1) {
        cfg.admission = gs::uniform_index(pick, 2) == 0 ? "quota" : std::string(witness_name);
        const char* reclaimers[] = {"checkpoint-aware-reclaim", "priority", "witness"};
        cfg.preemption = reclaimers[gs::uniform_index(pick, 3)];
      }
      const std::string label = cfg.ordering + "/" + cfg.admission + "/" + cfg.packing + "/" +
                                cfg.placement + "/" + cfg.preemption;
      closed_pipeline closed(
          closed_ordering{
              {make_closed<gs::ordering_tag, closed_ordering::variant_type, witness_ordering>(
                  cfg.ordering, in)}},
          closed_admission{
              {make_closed<gs::admission_tag, closed_admission::variant_type, witness_admission>(
                  cfg.admission, in)}},
          closed_packing{
              {make_closed<gs::packing_tag, closed_packing::variant_type>(cfg.packing, in)}},
          closed_placement{
              {make_closed<gs::placement_tag, closed_placement::variant_type>(cfg.placement, in)}},
          closed_preemption{
              {make_closed<gs::preemption_tag, closed_preemption::variant_type, witness_preemption>(
                  cfg.preemption, in)},
              &reclaims});
      closed.environment().quotas = in.quotas;
      closed.environment().tenants = in.tenants;
      auto erased = reg.make_pipeline(cfg, in);
      CHECK(closed.ordering().name() == erased.ordering().name());
      CHECK(closed.admission().name() == erased.admission().name());
      CHECK(closed.preemption().name() == erased.preemption().name());
      // every third sample grows elastic jobs even while others wait, so the growth hooks
      // (approve_growth, on_grown) are called often
      if (s % 3 == 2) {
        const gs::pipeline_options grow{
            .grow = true, .max_grown_tasks = -1, .grow_while_waiting = true};
        closed.set_options(grow);
        erased.set_options(grow);
      }
      if (!lockstep(std::move(closed), std::move(erased), seed + static_cast<std::uint64_t>(s),
                    cycles, label)) {
        ++differing;
      }
    }
    MESSAGE("seed " << seed << ": " << samples << " compositions, " << reclaims
                    << " plans of the free-quota reclaim path, " << differing << " differing");
    CHECK(differing == 0);
    CHECK(reclaims > 0);  // the sample reached the reclaim path
  }
}

}  // namespace pipeline_any_policy_test
