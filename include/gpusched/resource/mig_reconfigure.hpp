// SPDX-License-Identifier: Apache-2.0
/// @file
/// MIG reconfiguration planning: given the current MIG layouts of a set of GPUs of one model
/// (instances that are busy or idle, GPUs with MIG off) and a demand (instance counts per
/// profile), find the destroy / create / enable-MIG operations that give the demand idle
/// instances to run on while disturbing as little as possible.
///
/// This is what a MIG manager (NVIDIA's mig-parted, a cluster operator's reconfigurer) has to
/// decide before pending MIG work can start: `nvidia-smi mig -dgi` frees the slices of an idle
/// instance, `-cgi` creates one at an allowed start, and MIG mode can only be switched on a GPU
/// with no work on it.
///
/// **Objective**, lexicographic:
///  1. meet as much of the demand as possible (each missing instance weighted by its memory
///     slices); all of it whenever any plan can;
///  2. destroy the fewest busy instances (zero unless `allow_preemption`; busy instances are
///     never destroyed otherwise, and the ones a plan destroys are listed with their owner);
///  3. use the fewest operations (destroy + create + enable MIG).
///
/// An idle instance that already has a demanded profile counts towards the demand as it is.
/// Ties between plans of equal cost are broken deterministically (lower GPU index, then the
/// per-GPU option found first: fewer destroys, lower starts).
///
/// **Method.** Per GPU, every reachable target layout is enumerated (which existing instances to
/// destroy, then which demanded instances to create, in increasing start order so each layout
/// is seen once), reduced to the cheapest option per capped contribution vector. A dynamic
/// program over the capped demand vector (states = prod(demand_i + 1)) then picks one option
/// per GPU, exactly, when states x GPUs stays within `max_exact_cells`; otherwise a greedy pass
/// (best gain per operation, each GPU changed at most once) gives a plan with `exact == false`.
/// Complexity: O(G x O x S x k) for G GPUs, O options per GPU (at most a few hundred for 8
/// slices), S states and k demanded profiles; greedy O(G^2 x O x k) worst case.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/ids.hpp"
#include "gpusched/resource/gpu_model.hpp"
#include "gpusched/resource/mig_catalog.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// @brief One existing GPU instance: where it is, and whether work runs on it.
struct mig_instance {
  /// The instance's profile and first memory slice.
  mig_placement placement;
  bool busy = false;  ///< work runs on it; destroying it preempts `owner`
  job_id owner{};     ///< the job using it (busy instances), reported when preempted
  friend bool operator==(const mig_instance&, const mig_instance&) noexcept = default;
};

/// @brief The MIG state of one GPU.
struct mig_gpu_layout {
  /// The GPU is in MIG mode (when false, `instances` is empty and `idle` says whether MIG may be
  /// enabled).
  bool mig_enabled = true;
  bool idle = true;                     ///< with MIG off: no work on the GPU, so MIG may be enabled
  std::vector<mig_instance> instances;  ///< empty when MIG is off
};

/// @brief Demand: `count` idle instances of `profile` (a profile of the planned geometry).
struct mig_demand {
  /// The profile wanted (a profile of the planned GPUs' geometry).
  const mig_profile* profile = nullptr;
  /// How many idle instances of it are wanted.
  int count = 0;
  friend bool operator==(const mig_demand&, const mig_demand&) noexcept = default;
};

/// @brief Knobs of `plan_mig_reconfiguration`.
struct mig_reconfig_options {
  bool allow_preemption = false;  ///< may destroy busy instances (listed in the plan)
  /// Bound on the dynamic program (demand states x GPUs); beyond it the greedy pass plans.
  /// bench_mig_reconfigure measured about 1.4 us per cell (32 A100s, demand 9 x 1g + 9 x 2g +
  /// 9 x 3g: 23k cells, 33 ms), so the default bound costs at most about 0.2 s.
  std::size_t max_exact_cells = std::size_t{1} << 17;
};

/// The kind of a plan's operation: `enable_mig` (switch an idle GPU to MIG mode), `destroy` (an
/// instance) or `create` (an instance at a placement).
enum class mig_action_kind : std::uint8_t { enable_mig, destroy, create };

/// @brief One operation of a plan, on GPU `gpu` (index into the planned span).
struct mig_action {
  /// What the operation does.
  mig_action_kind kind = mig_action_kind::create;
  /// The GPU it acts on (index into the span given to `plan_mig_reconfiguration`).
  std::size_t gpu = 0;
  mig_placement placement{};  ///< destroy / create: the instance
  bool preempts = false;      ///< destroy of a busy instance
  job_id owner{};             ///< its owner, when `preempts`
  friend bool operator==(const mig_action&, const mig_action&) noexcept = default;
};

/// @brief A reconfiguration plan. Actions are grouped by GPU in index order; on each GPU:
/// enable MIG, then destroys, then creates (the order they can be executed in).
struct mig_reconfig_plan {
  /// The operations, grouped by GPU in index order (enable, destroys, creates on each).
  std::vector<mig_action> actions;
  std::vector<mig_demand> unmet;  ///< demand no plan can meet (count > 0 entries only)
  std::vector<job_id> preempted;  ///< owners of destroyed busy instances, ascending, unique
  /// Busy instances the plan destroys (each preempts its owner); 0 without `allow_preemption`.
  int busy_destroyed = 0;
  bool exact = true;  ///< optimal (dynamic program) rather than greedy
  /// True when the plan meets all the demand (`unmet` is empty).
  [[nodiscard]] bool satisfied() const noexcept { return unmet.empty(); }
  /// Number of operations in the plan.
  [[nodiscard]] int operations() const noexcept { return static_cast<int>(actions.size()); }
};

/// One line of English for an action, e.g. `gpu 2: destroy idle 3g.20gb at slice 4`.
inline std::string describe(const mig_action& a) {
  std::string s = "gpu " + std::to_string(a.gpu) + ": ";
  switch (a.kind) {
    case mig_action_kind::enable_mig:
      return s + "enable MIG";
    case mig_action_kind::destroy:
      s += a.preempts ? "destroy busy " : "destroy idle ";
      break;
    case mig_action_kind::create:
      s += "create ";
      break;
  }
  s += a.placement.profile->name + " at slice " + std::to_string(a.placement.start);
  if (a.preempts) s += " (preempts job " + std::to_string(a.owner.value()) + ")";
  return s;
}

namespace detail {

inline void check_mig_profile(const mig_geometry& g, const mig_profile* p, const std::string& where,
                              const std::string& field) {
  const bool ours = p != nullptr && !g.profiles.empty() && p >= g.profiles.data() &&
                    p < g.profiles.data() + g.profiles.size();
  if (!ours) {
    throw invalid_value_error(error_id::unknown_name, where, field,
                              p == nullptr ? std::string("null") : p->name,
                              "not a profile of the planned GPU model's MIG geometry");
  }
}

/// Validates one GPU's layout and returns its used slices and `+me` flag.
inline mig_occupancy check_mig_layout(const mig_geometry& g, const mig_gpu_layout& l,
                                      std::size_t gi) {
  const std::string where = "mig gpu #" + std::to_string(gi);
  if (!l.mig_enabled && !l.instances.empty()) {
    throw invalid_value_error(error_id::inconsistent, where, "instances",
                              std::to_string(l.instances.size()),
                              "a GPU with MIG off has no instances");
  }
  mig_occupancy occ;
  for (std::size_t k = 0; k < l.instances.size(); ++k) {
    const auto& in = l.instances[k];
    const std::string field = "instances[" + std::to_string(k) + "]";
    check_mig_profile(g, in.placement.profile, where, field + ".profile");
    const auto& p = *in.placement.profile;
    if (in.placement.start >= 8 || ((p.placement_starts >> in.placement.start) & 1u) == 0) {
      throw invalid_value_error(error_id::invalid_value, where, field + ".start",
                                std::to_string(in.placement.start),
                                "not an allowed start of " + p.name);
    }
    const auto slots = in.placement.slots();
    if ((occ.used & slots) != 0) {
      throw invalid_value_error(error_id::inconsistent, where, field + ".start",
                                std::to_string(in.placement.start),
                                p.name + " overlaps another instance");
    }
    if (p.media_extension && occ.media_used) {
      throw invalid_value_error(error_id::inconsistent, where, field + ".profile", p.name,
                                "a second +me instance (at most one per GPU)");
    }
    occ.used = static_cast<mig_slot_mask>(occ.used | slots);
    occ.media_used = occ.media_used || p.media_extension;
  }
  return occ;
}

/// One reachable target layout of one GPU.
struct mig_gpu_option {
  std::vector<int> counts;   ///< idle instances per demanded profile, capped at the demand
  std::int64_t cost = 0;     ///< busy destroyed x busy_weight + operations
  std::uint8_t destroy = 0;  ///< bit k: destroy instances[k]
  bool enable = false;
  std::vector<mig_placement> create;
};

/// The demand, merged per profile, as a mixed-radix state space.
struct mig_demand_space {
  std::vector<const mig_profile*> profiles;
  std::vector<int> need;
  std::vector<std::size_t> stride;
  std::size_t states = 1;
  bool overflow = false;

  [[nodiscard]] int index_of(const mig_profile* p) const noexcept {
    for (std::size_t j = 0; j < profiles.size(); ++j) {
      if (profiles[j] == p) return static_cast<int>(j);
    }
    return -1;
  }
  [[nodiscard]] std::size_t encode(std::span<const int> c) const noexcept {
    std::size_t s = 0;
    for (std::size_t j = 0; j < c.size(); ++j) {
      s += static_cast<std::size_t>(std::min(c[j], need[j])) * stride[j];
    }
    return s;
  }
  [[nodiscard]] int digit(std::size_t s, std::size_t j) const noexcept {
    return static_cast<int>((s / stride[j]) % static_cast<std::size_t>(need[j] + 1));
  }
  /// The capped sum of two states.
  [[nodiscard]] std::size_t add(std::size_t a, std::size_t b) const noexcept {
    std::size_t s = 0;
    for (std::size_t j = 0; j < profiles.size(); ++j) {
      s += static_cast<std::size_t>(std::min(digit(a, j) + digit(b, j), need[j])) * stride[j];
    }
    return s;
  }
  /// Demand covered by state `s`, weighted by memory slices.
  [[nodiscard]] std::int64_t weight(std::size_t s) const noexcept {
    std::int64_t w = 0;
    for (std::size_t j = 0; j < profiles.size(); ++j) {
      w += static_cast<std::int64_t>(digit(s, j)) * profiles[j]->memory_slices;
    }
    return w;
  }
};

/// Enumerates the options of one GPU into `out`, keeping the cheapest per capped contribution
/// (the first found on ties, so option 0 is always "leave it as it is").
class mig_option_enumerator {
 public:
  mig_option_enumerator(const mig_demand_space& d, std::int64_t busy_weight, bool preempt)
      : d_(d), busy_weight_(busy_weight), preempt_(preempt) {}

  void run(const mig_gpu_layout& l, std::vector<mig_gpu_option>& out) {
    out.clear();
    best_.clear();
    out_ = &out;
    if (!l.mig_enabled) {
      counts_.assign(d_.profiles.size(), 0);
      created_.clear();
      record(0, false, 0, 0);  // leave it as it is
      if (l.idle) create_from(0, 0, false, 0, true, 0, 1);
      return;
    }
    const auto n = static_cast<unsigned>(l.instances.size());
    for (unsigned mask = 0; mask < (1u << n); ++mask) {
      mig_slot_mask used = 0;
      bool media = false;
      int busy = 0;
      int ops = 0;
      counts_.assign(d_.profiles.size(), 0);
      bool allowed = true;
      for (unsigned k = 0; k < n; ++k) {
        const auto& in = l.instances[k];
        if (((mask >> k) & 1u) != 0) {
          if (in.busy && !preempt_) {
            allowed = false;
            break;
          }
          busy += in.busy ? 1 : 0;
          ++ops;
          continue;
        }
        used = static_cast<mig_slot_mask>(used | in.placement.slots());
        media = media || in.placement.profile->media_extension;
        if (!in.busy) {
          if (const int j = d_.index_of(in.placement.profile); j >= 0) {
            counts_[static_cast<std::size_t>(j)] = std::min(
                counts_[static_cast<std::size_t>(j)] + 1, d_.need[static_cast<std::size_t>(j)]);
          }
        }
      }
      if (!allowed) continue;
      created_.clear();
      create_from(used, 0, media, static_cast<std::uint8_t>(mask), false, busy, ops);
    }
  }

 private:
  // A GPU holds at most 8 instances, so each capped count is below 9: a radix-9 key is exact.
  [[nodiscard]] std::uint64_t key() const noexcept {
    std::uint64_t k = 0;
    for (const int c : counts_) k = k * 9 + static_cast<std::uint64_t>(c);
    return k;
  }

  void record(std::uint8_t destroy, bool enable, int busy, int ops) {
    const std::int64_t cost = busy * busy_weight_ + ops;
    const auto [it, fresh] = best_.try_emplace(key(), out_->size());
    if (!fresh && (*out_)[it->second].cost <= cost) return;
    mig_gpu_option o{counts_, cost, destroy, enable, created_};
    if (fresh) {
      out_->push_back(std::move(o));
    } else {
      (*out_)[it->second] = std::move(o);
    }
  }

  // Every set of demanded instances creatable in the free slices, starts increasing.
  void create_from(mig_slot_mask used, unsigned from, bool media, std::uint8_t destroy, bool enable,
                   int busy, int ops) {
    record(destroy, enable, busy, ops);
    for (unsigned s = from; s < 8; ++s) {
      for (std::size_t j = 0; j < d_.profiles.size(); ++j) {
        const mig_profile& p = *d_.profiles[j];
        if (((p.placement_starts >> s) & 1u) == 0) continue;
        if (counts_[j] >= d_.need[j]) continue;  // more of it would not count
        if (p.media_extension && media) continue;
        const auto slots = p.slots_at(s);
        if ((used & slots) != 0) continue;
        ++counts_[j];
        created_.push_back({&p, static_cast<std::uint8_t>(s)});
        create_from(static_cast<mig_slot_mask>(used | slots), s + 1, media || p.media_extension,
                    destroy, enable, busy, ops + 1);
        created_.pop_back();
        --counts_[j];
      }
    }
  }

  const mig_demand_space& d_;
  std::int64_t busy_weight_;
  bool preempt_;
  std::unordered_map<std::uint64_t, std::size_t> best_;
  std::vector<int> counts_;
  std::vector<mig_placement> created_;
  std::vector<mig_gpu_option>* out_ = nullptr;
};

}  // namespace detail

/// @brief Plans MIG reconfiguration of `gpus` (all of geometry `g`) to meet `demand`; see the
/// file documentation for the objective and method.
/// @throws invalid_value_error for a negative count, a profile not of `g` (field named), an
/// instance at a start its profile does not allow, overlapping instances, two `+me` instances
/// on one GPU, or instances on a GPU with MIG off. Nothing is changed: the layouts are input.
[[nodiscard]] inline mig_reconfig_plan plan_mig_reconfiguration(
    const mig_geometry& g, std::span<const mig_gpu_layout> gpus, std::span<const mig_demand> demand,
    const mig_reconfig_options& opt = {}) {
  detail::mig_demand_space d;
  for (std::size_t i = 0; i < demand.size(); ++i) {
    const std::string where = "mig demand #" + std::to_string(i);
    detail::check_mig_profile(g, demand[i].profile, where, "profile");
    if (demand[i].count < 0) {
      throw invalid_value_error(error_id::invalid_value, where, "count",
                                std::to_string(demand[i].count), "must not be negative");
    }
    if (demand[i].count == 0) continue;
    if (const int j = d.index_of(demand[i].profile); j >= 0) {
      d.need[static_cast<std::size_t>(j)] += demand[i].count;
    } else {
      d.profiles.push_back(demand[i].profile);
      d.need.push_back(demand[i].count);
    }
  }
  for (std::size_t gi = 0; gi < gpus.size(); ++gi) (void)detail::check_mig_layout(g, gpus[gi], gi);

  // Mixed-radix strides; an over-large space goes to the greedy pass.
  for (std::size_t j = 0; j < d.profiles.size(); ++j) {
    d.stride.push_back(d.states);
    const auto radix = static_cast<std::size_t>(d.need[j]) + 1;
    if (d.states > opt.max_exact_cells / radix) d.overflow = true;
    d.states = d.overflow ? d.states : d.states * radix;
  }

  mig_reconfig_plan plan;
  // Per-GPU operations are at most 8 destroys + 8 creates + 1 enable.
  const std::int64_t busy_weight = 17 * static_cast<std::int64_t>(gpus.size()) + 1;
  std::vector<std::vector<detail::mig_gpu_option>> options(gpus.size());
  std::vector<std::size_t> chosen(gpus.size(), 0);  // option 0 is always "leave it as it is"

  detail::mig_option_enumerator en(d, busy_weight, opt.allow_preemption);
  std::size_t most_options = 0;
  for (std::size_t gi = 0; gi < gpus.size(); ++gi) {
    en.run(gpus[gi], options[gi]);
    most_options = std::max(most_options, options[gi].size());
  }
  const bool exact = !d.overflow && most_options <= std::numeric_limits<std::uint16_t>::max() &&
                     d.states * std::max<std::size_t>(gpus.size(), 1) <= opt.max_exact_cells;
  plan.exact = exact;
  std::vector<int> got(d.profiles.size(), 0);  // idle demanded instances after the plan
  if (exact) {
    constexpr auto inf = std::numeric_limits<std::int64_t>::max();
    std::vector<std::int64_t> cost(d.states, inf);
    std::vector<std::int64_t> next(d.states);
    // Row gi: for each state, the option of GPU gi taken to reach it and the state before.
    std::vector<std::uint32_t> from(gpus.size() * d.states);
    std::vector<std::uint16_t> pick(gpus.size() * d.states);
    std::vector<std::size_t> encoded;
    cost[0] = 0;
    for (std::size_t gi = 0; gi < gpus.size(); ++gi) {
      std::fill(next.begin(), next.end(), inf);
      encoded.clear();  // each option's state, once per GPU rather than once per DP state
      for (const auto& op : options[gi]) encoded.push_back(d.encode(op.counts));
      for (std::size_t s = 0; s < d.states; ++s) {
        if (cost[s] == inf) continue;
        for (std::size_t o = 0; o < options[gi].size(); ++o) {
          const auto& op = options[gi][o];
          const std::size_t t = d.add(s, encoded[o]);
          const std::int64_t c = cost[s] + op.cost;
          if (c < next[t]) {
            next[t] = c;
            from[gi * d.states + t] = static_cast<std::uint32_t>(s);
            pick[gi * d.states + t] = static_cast<std::uint16_t>(o);
          }
        }
      }
      cost.swap(next);
    }
    // The most weighted demand met, then the least cost, then the lowest state.
    std::size_t final_state = 0;
    std::int64_t best_w = -1;
    for (std::size_t s = 0; s < d.states; ++s) {
      if (cost[s] == inf) continue;
      const auto w = d.weight(s);
      if (w > best_w || (w == best_w && cost[s] < cost[final_state])) {
        best_w = w;
        final_state = s;
      }
    }
    std::size_t s = final_state;
    for (std::size_t gi = gpus.size(); gi-- > 0;) {
      chosen[gi] = pick[gi * d.states + s];
      s = from[gi * d.states + s];
    }
    for (std::size_t j = 0; j < d.profiles.size(); ++j) got[j] = d.digit(final_state, j);
  } else {
    // Greedy: each GPU changes at most once, to the option with the best gain (weighted
    // demand newly met) per unit of cost; stops when nothing gains.
    for (std::size_t gi = 0; gi < gpus.size(); ++gi) {
      for (std::size_t j = 0; j < got.size(); ++j) got[j] += options[gi][0].counts[j];
    }
    const auto met = [&](std::span<const int> t) {
      std::int64_t w = 0;
      for (std::size_t j = 0; j < t.size(); ++j) {
        w += static_cast<std::int64_t>(std::min(t[j], d.need[j])) * d.profiles[j]->memory_slices;
      }
      return w;
    };
    std::vector<bool> changed(gpus.size(), false);
    std::vector<int> trial(got.size());
    for (;;) {
      const auto now = met(got);
      double best_ratio = 0;
      std::size_t best_g = 0;
      std::size_t best_o = 0;
      for (std::size_t gi = 0; gi < gpus.size(); ++gi) {
        if (changed[gi]) continue;
        const auto& base = options[gi][0].counts;
        for (std::size_t o = 1; o < options[gi].size(); ++o) {
          const auto& c = options[gi][o].counts;
          for (std::size_t j = 0; j < trial.size(); ++j) trial[j] = got[j] + c[j] - base[j];
          const auto gain = met(trial) - now;
          if (gain <= 0) continue;
          const double ratio =
              static_cast<double>(gain) / static_cast<double>(options[gi][o].cost + 1);
          if (ratio > best_ratio) {
            best_ratio = ratio;
            best_g = gi;
            best_o = o;
          }
        }
      }
      if (best_ratio == 0) break;
      const auto& base = options[best_g][0].counts;
      const auto& c = options[best_g][best_o].counts;
      for (std::size_t j = 0; j < got.size(); ++j) got[j] += c[j] - base[j];
      chosen[best_g] = best_o;
      changed[best_g] = true;
    }
  }
  for (std::size_t j = 0; j < d.profiles.size(); ++j) {
    if (got[j] < d.need[j]) plan.unmet.push_back({d.profiles[j], d.need[j] - got[j]});
  }

  for (std::size_t gi = 0; gi < gpus.size(); ++gi) {
    const auto& op = options[gi][chosen[gi]];
    if (op.enable) plan.actions.push_back({mig_action_kind::enable_mig, gi, {}, false, {}});
    for (std::size_t k = 0; k < gpus[gi].instances.size(); ++k) {
      if (((op.destroy >> k) & 1u) == 0) continue;
      const auto& in = gpus[gi].instances[k];
      plan.actions.push_back(
          {mig_action_kind::destroy, gi, in.placement, in.busy, in.busy ? in.owner : job_id{}});
      if (in.busy) {
        ++plan.busy_destroyed;
        plan.preempted.push_back(in.owner);
      }
    }
    for (const auto& pl : op.create) {
      plan.actions.push_back({mig_action_kind::create, gi, pl, false, {}});
    }
  }
  std::sort(plan.preempted.begin(), plan.preempted.end());
  plan.preempted.erase(std::unique(plan.preempted.begin(), plan.preempted.end()),
                       plan.preempted.end());
  return plan;
}

/// @brief The layouts after executing `plan` on `gpus` (created instances are idle).
/// @throws invalid_value_error when an action does not apply (destroying an instance that is
/// not there, creating on occupied slices): the plan was not made for these layouts.
[[nodiscard]] inline std::vector<mig_gpu_layout> apply_mig_plan(
    const mig_geometry& g, std::span<const mig_gpu_layout> gpus, const mig_reconfig_plan& plan) {
  std::vector<mig_gpu_layout> out(gpus.begin(), gpus.end());
  for (std::size_t i = 0; i < plan.actions.size(); ++i) {
    const auto& a = plan.actions[i];
    const std::string where = "mig plan action #" + std::to_string(i);
    if (a.gpu >= out.size()) {
      throw invalid_value_error(error_id::unknown_id, where, "gpu", std::to_string(a.gpu),
                                "no such GPU");
    }
    auto& l = out[a.gpu];
    switch (a.kind) {
      case mig_action_kind::enable_mig:
        if (l.mig_enabled || !l.idle) {
          throw invalid_value_error(error_id::inconsistent, where, "kind", "enable_mig",
                                    "MIG is already on or the GPU is busy");
        }
        l.mig_enabled = true;
        break;
      case mig_action_kind::destroy: {
        const auto it =
            std::find_if(l.instances.begin(), l.instances.end(),
                         [&](const mig_instance& in) { return in.placement == a.placement; });
        if (it == l.instances.end()) {
          throw invalid_value_error(error_id::unknown_id, where, "placement",
                                    std::to_string(a.placement.start), "no such instance");
        }
        l.instances.erase(it);
        break;
      }
      case mig_action_kind::create:
        if (!l.mig_enabled) {
          throw invalid_value_error(error_id::inconsistent, where, "kind", "create",
                                    "MIG is off on this GPU");
        }
        l.instances.push_back({a.placement, false, {}});
        (void)detail::check_mig_layout(g, l, a.gpu);
        break;
    }
  }
  return out;
}

GPUSCHED_END_NAMESPACE
