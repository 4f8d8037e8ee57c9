// SPDX-License-Identifier: Apache-2.0
/// @file
/// Policies by name: the library's built-in policies in one table per family, and
/// `policy_registry`, an open registry (a value: no global state) that starts with the built-in
/// names and takes a user's own policies, for command lines, config files and the replay tool.
///
/// - `builtin_policies<Tag>()`: the table of family `Tag` (`ordering_tag`, ...): name, summary,
///   factory. Every other by-name facility below is derived from it.
/// - `with_builtin_policy<Tag>(name, inputs, f)`: calls `f` with the concrete policy (not
///   type-erased), e.g. to build a static pipeline from a name.
/// - `make_ordering_policy(name)`, ... and `make_pipeline(pipeline_config)`: type-erased.
/// - `policy_registry`: `add(name, summary, factory)` registers a user's policy (its family
///   from its tag), `make_*`/`make_pipeline` build from either kind, `names(tag)` lists them.
///
/// The non-generic factories (`make_ordering`, `make_pipeline(config)`, ...) are templates with
/// a defaulted parameter only so that including this header instantiates no policy until one is
/// made (about 1 s of g++ parse time for the umbrella header); call them as plain functions.
///
/// Unknown or duplicate names throw `invalid_value_error` (`unknown_name`, `duplicate_id`)
/// naming the family, the name and the known names.
#pragma once

#include <algorithm>  // std::find_if
#include <functional>
#include <memory>  // std::shared_ptr, std::make_shared
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>  // std::move, std::forward
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/pipeline/any_policy.hpp"
#include "gpusched/pipeline/pipeline.hpp"
#include "gpusched/policy/admission/gang.hpp"
#include "gpusched/policy/admission/quota.hpp"
#include "gpusched/policy/concepts.hpp"
#include "gpusched/policy/ordering/drf.hpp"
#include "gpusched/policy/ordering/fair_tree.hpp"
#include "gpusched/policy/ordering/fifo.hpp"
#include "gpusched/policy/ordering/kueue_share.hpp"
#include "gpusched/policy/ordering/las.hpp"
#include "gpusched/policy/ordering/multifactor.hpp"
#include "gpusched/policy/ordering/themis.hpp"
#include "gpusched/policy/packing/best_fit.hpp"
#include "gpusched/policy/packing/fgd.hpp"
#include "gpusched/policy/packing/first_fit.hpp"
#include "gpusched/policy/packing/mig_aware.hpp"
#include "gpusched/policy/packing/topology_aware.hpp"
#include "gpusched/policy/placement/first_fit.hpp"
#include "gpusched/policy/placement/gang.hpp"
#include "gpusched/policy/placement/topology_aware.hpp"
#include "gpusched/policy/preemption/checkpoint_aware.hpp"
#include "gpusched/policy/preemption/kube_default.hpp"
#include "gpusched/policy/preemption/las.hpp"
#include "gpusched/policy/preemption/priority.hpp"
#include "gpusched/topology/fabric.hpp"
#include "gpusched/workload/quota.hpp"
#include "gpusched/workload/tenant.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// @brief Configuration some factories use (all optional). History (attained service, last
/// placements) is not configuration: policies read it from the context.
///
/// The run's trees (`quotas`, `tenants`) are given here once: the factories that keep state in
/// them take a copy (`admission=quota` copies the quota tree, whose usage it keeps), and the
/// registry's `make_pipeline` installs both in the pipeline's environment
/// (`pipeline::environment()`), where every policy reads them through the context
/// (`schedule_context::quotas()`, `tenants()`: `preemption=checkpoint-aware-reclaim`,
/// `ordering=kueue-drs`, `ordering=fair-tree`). A name that needs a tree it was not given is
/// refused when it is built, naming the name and the input.
struct policy_inputs {
  /// The cluster's topology model: `placement=topology` uses it (and then prefers a requeued
  /// job's previous domain); without one, fewest nodes and best fit only.
  std::shared_ptr<const topology_model> topology{};
  /// The GPU-time distribution `ordering=2d-gittins` needs (e.g. Tiresias' yarn prior).
  std::shared_ptr<const gpu_time_prior> prior{};
  /// The run's quota tree (Kueue cohorts and queues): `admission=quota`, `ordering=kueue-drs`,
  /// `preemption=checkpoint-aware-reclaim` need it (`read_quota_file` reads one).
  std::shared_ptr<const quota_tree> quotas{};
  /// The run's tenant tree (accounts and users with weights): `ordering=fair-tree` needs it;
  /// `kueue-drs` and the checkpoint-aware preemption read tenants' weights from it.
  std::shared_ptr<const tenant_tree> tenants{};
};

/// One row of a built-in table: a name, a one-line summary and a factory
/// `P(const policy_inputs&)`.
template <class Make>
struct builtin_entry {
  /// The policy's registry name (`drf`, `gang-easy`).
  std::string_view name;
  /// One line on what it does (`--help` and `names()` listings).
  std::string_view summary;
  /// Makes the policy from the run's inputs.
  Make make;
};
/// Deduces the factory type of a table row.
template <class Make>
builtin_entry(std::string_view, std::string_view, Make) -> builtin_entry<Make>;

namespace detail {
inline std::shared_ptr<const topology_model> topology_or_empty(const policy_inputs& in) {
  return in.topology ? in.topology : std::make_shared<const topology_model>();
}
/// @throws invalid_value_error naming `family=name` and the input when `present` is false.
inline void needs_input(bool present, const char* family, const char* name, const char* input) {
  if (!present) {
    throw invalid_value_error(error_id::invalid_value, "policy registry", family, name,
                              std::string("needs the run's ") + input +
                                  " (policy_inputs::" + input + "; gpusched-replay --quotas FILE)");
  }
}
}  // namespace detail

/// @brief The built-in policies of family `Tag`, as a tuple of `builtin_entry`. The one list of
/// built-in names and what each builds.
template <class Tag>
[[nodiscard]] inline auto builtin_policies() {
  using in = const policy_inputs&;
  if constexpr (std::same_as<Tag, ordering_tag>) {
    return std::tuple{
        builtin_entry{"fifo", "first come, first served (submit time, then id)",
                      [](in) { return fifo_ordering{}; }},
        builtin_entry{"priority", "higher priority first, then FIFO",
                      [](in) { return priority_ordering{}; }},
        builtin_entry{"drf", "weighted DRF by progressive filling, incremental",
                      [](in) { return drf_ordering{}; }},
        builtin_entry{
            "drf-snapshot", "DRF on the cycle's snapshot (no progressive filling)",
            [](in) { return drf_ordering{drf_options{.progressive = false, .history = {}}}; }},
        builtin_entry{"las", "Tiresias 2D-LAS: queues over attained GPU-time (split 3,600 GPU-s)",
                      [](in) { return las_ordering{}; }},
        builtin_entry{"las-time", "1D LAS over executed time (split 3,600 s)",
                      [](in) { return las_ordering{{3600.0}, service_measure::time}; }},
        builtin_entry{"2d-gittins",
                      "Tiresias 2D-Gittins: LAS queues, Gittins index inside (needs a prior)",
                      [](in i) {
                        if (!i.prior) {
                          throw invalid_value_error(
                              error_id::invalid_value, "policy registry", "ordering", "2d-gittins",
                              "needs a GPU-time prior (policy_inputs::prior)");
                        }
                        return gittins_ordering{i.prior};
                      }},
        builtin_entry{"srtf", "shortest remaining time first (oracle: known durations)",
                      [](in) { return srtf_ordering{}; }},
        builtin_entry{"srsf", "shortest remaining service (time x GPUs) first (oracle)",
                      [](in) { return srtf_ordering{true}; }},
        builtin_entry{"themis", "Themis finish-time fairness",
                      [](in) { return finish_time_fairness_ordering{}; }},
        // Slurm multifactor: classic fair share 2^(-U/S) on its own decayed usage (half-life 7
        // days, equal shares per tenant) weighted 10000, as the QOS factor, over age 1000 (max
        // age 7 days) and job size 100: fair share decides between tenants, age and size
        // within one.
        builtin_entry{
            "multifactor", "Slurm multifactor: fair share 10000, age 1000, size 100, QOS 10000",
            [](in) {
              return make_multifactor(
                  weighted(decayed_fair_share_factor{}, 10000.0), weighted(age_factor{}, 1000.0),
                  weighted(job_size_factor{}, 100.0), weighted(qos_factor{10}, 10000.0));
            }},
        builtin_entry{"multifactor-nofs", "Slurm multifactor without fair share",
                      [](in) {
                        return make_multifactor(weighted(age_factor{}, 1000.0),
                                                weighted(job_size_factor{}, 100.0),
                                                weighted(qos_factor{10}, 10000.0));
                      }},
        builtin_entry{
            "fair-tree", "Slurm Fair Tree over the run's tenant tree, own decayed usage (7 days)",
            [](in i) {
              detail::needs_input(i.tenants != nullptr, "ordering", "fair-tree", "tenants");
              return fair_tree_ordering{};
            }},
        builtin_entry{"kueue-drs",
                      "Kueue fair sharing: lowest dominant share of borrowed quota first",
                      [](in i) {
                        detail::needs_input(i.quotas != nullptr, "ordering", "kueue-drs", "quotas");
                        return kueue_share_ordering{};
                      }}};
  } else if constexpr (std::same_as<Tag, admission_tag>) {
    return std::tuple{
        builtin_entry{"gang", "all or nothing, best effort (later jobs go on)",
                      [](in) { return gang_admission{}; }},
        builtin_entry{"gang-strict", "all or nothing, strict FIFO (the head blocks the queue)",
                      [](in) { return gang_admission{queueing::strict_fifo}; }},
        builtin_entry{"gang-easy", "all or nothing, EASY backfill",
                      [](in) { return gang_admission{queueing::easy_backfill}; }},
        builtin_entry{"gang-conservative", "all or nothing, conservative backfill",
                      [](in) { return gang_admission{queueing::conservative_backfill}; }},
        builtin_entry{"quota", "Kueue quotas of the run's quota tree in front of gang admission",
                      [](in i) {
                        detail::needs_input(i.quotas != nullptr, "admission", "quota", "quotas");
                        return quota_admission<gang_admission>(*i.quotas);
                      }}};
  } else if constexpr (std::same_as<Tag, packing_tag>) {
    return std::tuple{
        builtin_entry{"first-fit", "first node and GPUs that fit",
                      [](in) { return first_fit_packing{}; }},
        // Without the inputs' fabric, as the replay tool has always built it (passing the
        // fabric would change the published topology-gangs table; see the changelog note).
        builtin_entry{
            "topology", "topology-aware: NVLink-close GPUs within a node",
            [](in) { return topology_packing(std::make_shared<const topology_model>()); }},
        builtin_entry{"mig-aware", "MIG slots that keep the largest profiles placeable",
                      [](in) { return mig_aware_packing{}; }},
        builtin_entry{"best-fit", "the node with the least room left after the task",
                      [](in) { return best_fit_packing{}; }},
        builtin_entry{"worst-fit", "the node with the most room left after the task",
                      [](in) { return worst_fit_packing{}; }},
        builtin_entry{"random", "a random node that fits (FGD paper baseline)",
                      [](in) { return random_packing{}; }},
        builtin_entry{"dotprod", "dot product of demand and free vectors (FGD baseline)",
                      [](in) { return dotprod_packing{}; }},
        builtin_entry{"gpu-clustering", "GPU clustering (FGD baseline)",
                      [](in) { return gpu_clustering_packing{}; }},
        builtin_entry{"gpu-packing", "GPU packing (FGD baseline)",
                      [](in) { return gpu_packing_packing{}; }},
        builtin_entry{"fgd-best-fit", "fragmentation gradient descent, best fit tie-break",
                      [](in) { return fgd_best_fit_packing{}; }}};
  } else if constexpr (std::same_as<Tag, placement_tag>) {
    return std::tuple{
        builtin_entry{"first-fit", "each task on the first node that fits",
                      [](in) { return first_fit_placement{}; }},
        builtin_entry{"gang", "exact for small gangs, elastic sizing",
                      [](in) { return gang_placement{}; }},
        // without a topology model: fewest nodes, best fit
        builtin_entry{"topology", "topology-aware: NVLink, NVSwitch, leaf/spine distance",
                      [](in i) {
                        topology_aware_placement p(detail::topology_or_empty(i));
                        if (i.topology) p.prefer_previous();  // requeued gangs go back
                        return p;
                      }}};
  } else {
    static_assert(std::same_as<Tag, preemption_tag>, "builtin_policies: not a family tag");
    return std::tuple{
        builtin_entry{"priority", "lowest priority, most recent start first",
                      [](in) { return priority_preemption{}; }},
        builtin_entry{"none", "never preempt", [](in) { return no_preemption{}; }},
        builtin_entry{"checkpoint-aware", "least lost work since the last checkpoint",
                      [](in) { return checkpoint_aware_preemption{}; }},
        builtin_entry{"checkpoint-aware-reclaim",
                      "checkpoint-aware, also reclaiming quota from borrowers of the run's tree",
                      [](in i) {
                        detail::needs_input(i.quotas != nullptr, "preemption",
                                            "checkpoint-aware-reclaim", "quotas");
                        checkpoint_aware_options o;
                        o.reclaim = true;
                        return checkpoint_aware_preemption{std::move(o)};
                      }},
        builtin_entry{"kube-default", "kube-scheduler's default preemption",
                      [](in) { return kube_default_preemption{}; }},
        builtin_entry{"las", "Tiresias: higher attained-service queues preempt lower ones",
                      [](in) { return las_preemption{}; }},
        builtin_entry{"srtf", "preemptive shortest remaining time (oracle)",
                      [](in) { return srtf_preemption{}; }},
        builtin_entry{"srsf", "preemptive shortest remaining service (oracle)",
                      [](in) { return srtf_preemption{true}; }},
        // "lowest priority, most recent start": exactly `priority_preemption`'s rule
        builtin_entry{"lowest-priority-newest", "alias of priority",
                      [](in) { return priority_preemption{}; }}};
  }
}

/// The family's name in messages.
template <class Tag>
[[nodiscard]] constexpr std::string_view family_name() noexcept {
  if constexpr (std::same_as<Tag, ordering_tag>) return "ordering";
  if constexpr (std::same_as<Tag, admission_tag>) return "admission";
  if constexpr (std::same_as<Tag, packing_tag>) return "packing";
  if constexpr (std::same_as<Tag, placement_tag>) return "placement";
  if constexpr (std::same_as<Tag, preemption_tag>) return "preemption";
}

/// The type-erased wrapper of family `Tag`.
template <class Tag>
using any_policy_of = std::conditional_t<
    std::same_as<Tag, ordering_tag>, any_ordering_policy,
    std::conditional_t<
        std::same_as<Tag, admission_tag>, any_admission_policy,
        std::conditional_t<std::same_as<Tag, packing_tag>, any_packing_policy,
                           std::conditional_t<std::same_as<Tag, placement_tag>,
                                              any_placement_policy, any_preemption_policy>>>>;

/// The built-in names of family `Tag`, in table order. O(entries).
template <class Tag>
[[nodiscard]] std::vector<std::string_view> builtin_names() {
  return std::apply([](const auto&... e) { return std::vector<std::string_view>{e.name...}; },
                    builtin_policies<Tag>());
}

/// @brief Calls `f(policy)` with the built-in policy `name` of family `Tag` (its concrete type)
/// and returns the result, or nullopt when no built-in has that name. `f` must return the same
/// non-void type for every policy of the family. O(entries) name comparisons.
template <class Tag, class F>
auto with_builtin_policy(std::string_view name, const policy_inputs& inputs, F&& f) {
  auto table = builtin_policies<Tag>();
  using result = std::invoke_result_t<F&, decltype(std::get<0>(table).make(inputs))>;
  std::optional<result> out;
  std::apply(
      [&](const auto&... e) {
        (void)((e.name == name ? (out.emplace(f(e.make(inputs))), true) : false) || ...);
      },
      table);
  return out;
}

/// @brief Names for each slot of a run-time pipeline; defaults are the library defaults.
struct pipeline_config {
  /// The ordering policy's name.
  std::string ordering = "fifo";
  /// The admission policy's name.
  std::string admission = "gang";
  /// The packing policy's name.
  std::string packing = "first-fit";
  /// The placement policy's name.
  std::string placement = "first-fit";
  /// The preemption policy's name.
  std::string preemption = "priority";
};

/// @brief An open by-name registry: the built-in policies plus the user's own. A value (copy it
/// to extend it in one place without changing another); no global state.
///
/// @code
/// gpusched::policy_registry reg;   // the built-in names
/// reg.add("deadline-first", "earliest deadline first",
///         [](const gpusched::policy_inputs&) { return deadline_first{}; });
/// auto pipe = reg.make_pipeline({.ordering = "deadline-first", .admission = "gang-easy"});
/// @endcode
class policy_registry {
 public:
  /// A factory of a user's policy.
  template <class Tag>
  using factory = std::function<any_policy_of<Tag>(const policy_inputs&)>;

  /// Registers `make` under `name` in the family of the policy it returns (its tag).
  /// @throws invalid_value_error (duplicate_id) when the family has `name` already (built-in or
  /// added), or (invalid_value) when `name` is empty; nothing changes then. O(names).
  template <class F>
    requires std::invocable<F&, const policy_inputs&>
  void add(std::string name, std::string summary, F make) {
    using P = std::remove_cvref_t<std::invoke_result_t<F&, const policy_inputs&>>;
    static_assert(detail::diagnose_policy<P>(), "see the message above");
    if constexpr (enable_ordering_policy<P>) {
      add_to<ordering_tag>(ordering_, std::move(name), std::move(summary), std::move(make));
    } else if constexpr (enable_admission_policy<P>) {
      add_to<admission_tag>(admission_, std::move(name), std::move(summary), std::move(make));
    } else if constexpr (enable_packing_policy<P>) {
      add_to<packing_tag>(packing_, std::move(name), std::move(summary), std::move(make));
    } else if constexpr (enable_placement_policy<P>) {
      add_to<placement_tag>(placement_, std::move(name), std::move(summary), std::move(make));
    } else {
      add_to<preemption_tag>(preemption_, std::move(name), std::move(summary), std::move(make));
    }
  }

  /// Every name of family `Tag`: the built-in ones in table order, then the added ones in the
  /// order they were added.
  template <class Tag>
  [[nodiscard]] std::vector<std::string_view> names() const {
    auto out = builtin_names<Tag>();
    for (const auto& e : added<Tag>()) out.push_back(e.name);
    return out;
  }
  /// The one-line summary of `name` in family `Tag` (empty when unknown).
  template <class Tag>
  [[nodiscard]] std::string_view summary(std::string_view name) const {
    std::string_view out;
    std::apply([&](const auto&... e) { ((e.name == name ? (out = e.summary, 0) : 0), ...); },
               builtin_policies<Tag>());
    for (const auto& e : added<Tag>()) {
      if (e.name == name) out = e.summary;
    }
    return out;
  }
  /// Whether family `Tag` has `name`.
  template <class Tag>
  [[nodiscard]] bool contains(std::string_view name) const {
    const auto n = names<Tag>();
    return std::find(n.begin(), n.end(), name) != n.end();
  }

  /// Makes the policy `name` of family `Tag`, type-erased.
  /// @throws invalid_value_error (unknown_name) listing the known names.
  template <class Tag>
  [[nodiscard]] any_policy_of<Tag> make(std::string_view name,
                                        const policy_inputs& inputs = {}) const {
    if (auto p = with_builtin_policy<Tag>(
            name, inputs, [](auto policy) { return any_policy_of<Tag>(std::move(policy)); })) {
      return std::move(*p);
    }
    for (const auto& e : added<Tag>()) {
      if (e.name == name) return e.make(inputs);
    }
    unknown<Tag>(name);
  }
  /// `make<ordering_tag>(n, in)`.
  template <class = void>
  [[nodiscard]] any_ordering_policy make_ordering(std::string_view n,
                                                  const policy_inputs& in = {}) const {
    return make<ordering_tag>(n, in);
  }
  /// `make<admission_tag>(n, in)`.
  template <class = void>
  [[nodiscard]] any_admission_policy make_admission(std::string_view n,
                                                    const policy_inputs& in = {}) const {
    return make<admission_tag>(n, in);
  }
  /// `make<packing_tag>(n, in)`.
  template <class = void>
  [[nodiscard]] any_packing_policy make_packing(std::string_view n,
                                                const policy_inputs& in = {}) const {
    return make<packing_tag>(n, in);
  }
  /// `make<placement_tag>(n, in)`.
  template <class = void>
  [[nodiscard]] any_placement_policy make_placement(std::string_view n,
                                                    const policy_inputs& in = {}) const {
    return make<placement_tag>(n, in);
  }
  /// `make<preemption_tag>(n, in)`.
  template <class = void>
  [[nodiscard]] any_preemption_policy make_preemption(std::string_view n,
                                                      const policy_inputs& in = {}) const {
    return make<preemption_tag>(n, in);
  }
  /// Builds a pipeline from names, its environment holding the trees of `in` (see
  /// `policy_inputs`). @throws invalid_value_error for an unknown name (checked for every slot
  /// before anything is built), or a name that needs a tree `in` lacks.
  template <class = void>
  [[nodiscard]] any_pipeline make_pipeline(const pipeline_config& c,
                                           const policy_inputs& in = {}) const {
    check<ordering_tag>(c.ordering);
    check<admission_tag>(c.admission);
    check<packing_tag>(c.packing);
    check<placement_tag>(c.placement);
    check<preemption_tag>(c.preemption);
    any_pipeline pipe(make_ordering(c.ordering, in), make_admission(c.admission, in),
                      make_packing(c.packing, in), make_placement(c.placement, in),
                      make_preemption(c.preemption, in));
    pipe.environment().quotas = in.quotas;
    pipe.environment().tenants = in.tenants;
    return pipe;
  }
  /// @throws invalid_value_error (unknown_name) unless family `Tag` has `name`.
  template <class Tag>
  void check(std::string_view name) const {
    if (!contains<Tag>(name)) unknown<Tag>(name);
  }

 private:
  template <class Tag>
  struct entry {
    std::string name;
    std::string summary;
    factory<Tag> make;
  };
  template <class Tag>
  const std::vector<entry<Tag>>& added() const noexcept {
    if constexpr (std::same_as<Tag, ordering_tag>) return ordering_;
    if constexpr (std::same_as<Tag, admission_tag>) return admission_;
    if constexpr (std::same_as<Tag, packing_tag>) return packing_;
    if constexpr (std::same_as<Tag, placement_tag>) return placement_;
    if constexpr (std::same_as<Tag, preemption_tag>) return preemption_;
  }
  template <class Tag, class F>
  void add_to(std::vector<entry<Tag>>& list, std::string name, std::string summary, F make) {
    if (name.empty()) {
      throw invalid_value_error(error_id::invalid_value, "policy registry",
                                std::string(family_name<Tag>()), "''", "a name must not be empty");
    }
    if (contains<Tag>(name)) {
      throw invalid_value_error(error_id::duplicate_id, "policy registry",
                                std::string(family_name<Tag>()), name,
                                "a policy of this family has that name already");
    }
    list.push_back({std::move(name), std::move(summary),
                    [m = std::move(make)](const policy_inputs& in) -> any_policy_of<Tag> {
                      return any_policy_of<Tag>(m(in));
                    }});
  }
  template <class Tag>
  [[noreturn]] void unknown(std::string_view name) const {
    std::string list;
    for (auto k : names<Tag>()) {
      if (!list.empty()) list += ", ";
      list += k;
    }
    throw invalid_value_error(error_id::unknown_name, "policy registry",
                              std::string(family_name<Tag>()), std::string(name),
                              "unknown policy (known: " + list + ")");
  }

  std::vector<entry<ordering_tag>> ordering_;
  std::vector<entry<admission_tag>> admission_;
  std::vector<entry<packing_tag>> packing_;
  std::vector<entry<placement_tag>> placement_;
  std::vector<entry<preemption_tag>> preemption_;
};

/// @brief The built-in names per family (derived from `builtin_policies`).
struct policy_names {
  /// The built-in names of each family, in table order.
  ///@{
  std::vector<std::string_view> ordering = builtin_names<ordering_tag>();
  std::vector<std::string_view> admission = builtin_names<admission_tag>();
  std::vector<std::string_view> packing = builtin_names<packing_tag>();
  std::vector<std::string_view> placement = builtin_names<placement_tag>();
  std::vector<std::string_view> preemption = builtin_names<preemption_tag>();
  ///@}
};

/// Makes a built-in policy by name. @throws invalid_value_error (unknown_name) listing the
/// known names.
///@{
template <class = void>
any_ordering_policy make_ordering_policy(std::string_view name, const policy_inputs& in = {}) {
  return policy_registry{}.make_ordering(name, in);
}
template <class = void>
any_admission_policy make_admission_policy(std::string_view name, const policy_inputs& in = {}) {
  return policy_registry{}.make_admission(name, in);
}
template <class = void>
any_packing_policy make_packing_policy(std::string_view name, const policy_inputs& in = {}) {
  return policy_registry{}.make_packing(name, in);
}
template <class = void>
any_placement_policy make_placement_policy(std::string_view name, const policy_inputs& in = {}) {
  return policy_registry{}.make_placement(name, in);
}
template <class = void>
any_preemption_policy make_preemption_policy(std::string_view name, const policy_inputs& in = {}) {
  return policy_registry{}.make_preemption(name, in);
}
///@}

/// Builds a pipeline of built-in policies from names. @throws invalid_value_error for an
/// unknown name.
template <class = void>
any_pipeline make_pipeline(const pipeline_config& c, const policy_inputs& in = {}) {
  return policy_registry{}.make_pipeline(c, in);
}

GPUSCHED_END_NAMESPACE
