// SPDX-License-Identifier: Apache-2.0
/// @file
/// `read_quota_file`: a run's quota tree (Kueue cohorts and queues, `workload/quota.hpp`) and
/// the tenant tree of the same hierarchy (Slurm accounts and users with weights,
/// `workload/tenant.hpp`) from one text file, so that a researcher gives both to a run by name
/// (`gpusched-replay --quotas FILE`) and an embedder gets them as values.
///
/// Format: one node per line; blank lines and text from a `#` that starts a word are ignored.
/// @code
/// # KIND NAME key=value ...
/// cohort all
/// cohort research parent=all weight=2
/// queue  vision   tenant=vc-a cohort=research nominal.gpu=16 borrowing-limit.gpu=8
/// queue  speech   tenant=vc-b cohort=research nominal.gpu=8 lending-limit.gpu=4
/// queue  prod     tenant=vc-c cohort=all nominal.gpus:H100-SXM5-80GB=32 nominal.cpu=512
/// @endcode
/// - `cohort NAME [parent=COHORT] [weight=W] [LIMITS]`: an inner node (a root without parent).
/// - `queue NAME tenant=TENANT [cohort=COHORT] [weight=W] [LIMITS]`: a leaf serving one tenant.
///   `TENANT` is resolved by the caller's resolver (the replay program: a tenant name of the
///   trace); without one it is a decimal tenant id.
/// - `weight`: the node's share among its siblings (finite, above 0; default 1): Kueue's
///   `fairSharing.weight` and Slurm's `Shares`.
/// - LIMITS: `nominal.R=N`, `borrowing-limit.R=N`, `lending-limit.R=N`, non-negative whole
///   numbers, where `R` is `gpu` (whole GPUs of any model: milli-GPU x 1000), `gpu-milli`,
///   `gpus:MODEL` (whole GPUs of catalog model `MODEL`), `cpu` (cores: millicores x 1000),
///   `cpu-milli`, `memory-gib` (MiB x 1024) or `memory-mib`. Each key at most once per line.
/// - Parents may be named before or after they are defined.
///
/// The tenant tree has one tenant per node, in file order, with the node's weight: a queue is
/// its tenant (a leaf); a cohort is an account whose id is synthesised from the top of the id
/// range (the k-th cohort of the file gets `tenant_id{max - 1 - k}`, where `max` is the invalid
/// id), so no trace tenant collides with it in practice.
///
/// Errors: `parse_error` naming the source, the 1-based line and the field (`kind`, `name`,
/// `tenant`, `parent`, `cohort`, `weight`, a limit key), with the rule broken: an unknown kind
/// or key, a key given twice, a missing tenant, a value that is not a whole non-negative number
/// (or, for `weight`, a positive finite number), an unknown GPU model (listing the catalog's),
/// an unknown tenant, a duplicate node name (with the line of the first), a parent or cohort
/// that no line defines or that is a queue, and the tree's own rules (a queue's lending limit
/// above its nominal quota, cohorts in a cycle, a tenant with two queues). Complexity
/// O(lines x keys + nodes x dims).
#pragma once

#include <cmath>  // std::isfinite
#include <cstdint>
#include <functional>
#include <istream>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>  // std::move
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/ids.hpp"
#include "gpusched/core/parse.hpp"
#include "gpusched/resource/gpu_model.hpp"
#include "gpusched/workload/quota.hpp"
#include "gpusched/workload/tenant.hpp"

GPUSCHED_BEGIN_NAMESPACE

/// @brief The trees one quota file describes (see the file documentation).
struct run_trees {
  /// The quota tree (cohorts and queues, with their limits).
  quota_tree quotas;
  /// The same hierarchy as tenants with weights (cohorts as accounts, queues as their tenants).
  tenant_tree tenants;
};

/// Resolves a tenant named in a quota file to its id; nullopt when there is no such tenant.
using tenant_resolver = std::function<std::optional<tenant_id>(std::string_view)>;

namespace detail {
/// One node line of a quota file, as read.
struct quota_line {
  std::size_t line = 0;
  bool queue = false;
  std::string name, parent;
  tenant_id tenant;
  double weight = 1.0;
};

/// Throws the `parse_error` of a quota file.
[[noreturn]] inline void quota_fail(const std::string& source, std::size_t line,
                                    std::string_view field, const std::string& why) {
  throw parse_error(source, line, std::string(field), why);
}

/// Splits `text` at spaces and tabs; a word starting with `#` ends it.
inline std::vector<std::string_view> quota_words(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r')) ++i;
    if (i >= text.size() || text[i] == '#') break;
    std::size_t e = i;
    while (e < text.size() && text[e] != ' ' && text[e] != '\t' && text[e] != '\r') ++e;
    out.push_back(text.substr(i, e - i));
    i = e;
  }
  return out;
}
}  // namespace detail

/// @brief Reads a quota file (see the file documentation) from `in`; `source` names it in
/// errors; `catalog` gives the GPU models (`gpus:MODEL`) and the quota dimensions; `resolve`
/// maps tenant names to ids (empty: decimal ids).
/// @throws parse_error naming source, line and field (see the file documentation).
[[nodiscard]] inline run_trees read_quota_file(std::istream& in, const std::string& source,
                                               const gpu_catalog& catalog,
                                               const tenant_resolver& resolve = {}) {
  quota_tree::builder b(catalog);
  std::vector<detail::quota_line> nodes;
  std::unordered_map<std::string, std::size_t> by_name;  // name -> index into nodes
  std::string text;
  std::size_t line = 0;
  const auto fail = [&](std::string_view field, const std::string& why) {
    detail::quota_fail(source, line, field, why);
  };
  const auto whole = [&](std::string_view key, std::string_view v) {
    const auto n = parse_integer<std::int64_t>(v);
    if (!n.ok() || n.value < 0) {
      fail(key, n.ok() ? "'" + std::string(v) +
                             "' is negative: a limit is a whole number of 0 "
                             "or more"
                       : number_problem(v, n.status, "whole number"));
    }
    return n.value;
  };
  while (std::getline(in, text)) {
    ++line;
    const auto words = detail::quota_words(text);
    if (words.empty()) continue;
    detail::quota_line q;
    q.line = line;
    if (words[0] == "queue") {
      q.queue = true;
    } else if (words[0] != "cohort") {
      fail("kind", "'" + std::string(words[0]) + "' is not a node kind (cohort or queue)");
    }
    if (words.size() < 2 || words[1].find('=') != std::string_view::npos) {
      fail("name", "a " + std::string(words[0]) + " needs a name after its kind");
    }
    q.name = std::string(words[1]);
    if (const auto it = by_name.find(q.name); it != by_name.end()) {
      fail("name", "'" + q.name + "' is defined twice (first on line " +
                       std::to_string(nodes[it->second].line) + ")");
    }
    struct pending_limit {
      int which;  // 0 nominal, 1 borrowing limit, 2 lending limit
      quota_resource r;
      std::int64_t v;
    };
    std::vector<pending_limit> limits;
    std::vector<std::string_view> seen;
    bool has_tenant = false;
    for (std::size_t w = 2; w < words.size(); ++w) {
      const auto eq = words[w].find('=');
      if (eq == std::string_view::npos) {
        fail("key", "'" + std::string(words[w]) + "' is not key=value");
      }
      const auto key = words[w].substr(0, eq);
      const auto value = words[w].substr(eq + 1);
      for (const auto k : seen) {
        if (k == key) fail(key, "given twice on the line");
      }
      seen.push_back(key);
      if (key == "weight") {
        const auto x = parse_real(value);
        if (!x.ok() || !std::isfinite(x.value) || x.value <= 0) {
          fail(key, x.ok() ? "'" + std::string(value) + "' is not above 0"
                           : number_problem(value, x.status));
        }
        q.weight = x.value;
      } else if (key == (q.queue ? "cohort" : "parent")) {
        if (value.empty()) fail(key, "empty name");
        q.parent = std::string(value);
      } else if (q.queue && key == "tenant") {
        std::optional<tenant_id> t;
        if (resolve) {
          t = resolve(value);
        } else if (const auto n = parse_integer<tenant_id::rep>(value);
                   n.ok() && tenant_id{n.value}.valid()) {
          t = tenant_id{n.value};
        }
        if (!t || !t->valid()) {
          detail::quota_fail(source, line, key,
                             "'" + std::string(value) + "' is not a tenant" +
                                 (resolve ? " of the run" : " id (a decimal number)"));
        }
        q.tenant = *t;
        has_tenant = true;
      } else {
        const auto dot = key.find('.');
        const auto limit = key.substr(0, dot == std::string_view::npos ? key.size() : dot);
        if (dot == std::string_view::npos ||
            (limit != "nominal" && limit != "borrowing-limit" && limit != "lending-limit")) {
          fail(key, std::string("unknown key (known: ") + (q.queue ? "tenant, cohort" : "parent") +
                        ", weight, nominal.R, borrowing-limit.R, lending-limit.R)");
        }
        const auto res = key.substr(dot + 1);
        std::int64_t v = whole(key, value);
        std::int64_t scale = 1;
        quota_resource r;
        if (res == "gpu") {
          r = quota_resource::gpu_milli(), scale = 1000;
        } else if (res == "gpu-milli") {
          r = quota_resource::gpu_milli();
        } else if (res == "cpu") {
          r = quota_resource::cpu(), scale = 1000;
        } else if (res == "cpu-milli") {
          r = quota_resource::cpu();
        } else if (res == "memory-gib") {
          r = quota_resource::memory(), scale = 1024;
        } else if (res == "memory-mib") {
          r = quota_resource::memory();
        } else if (res.substr(0, 5) == "gpus:") {
          const auto model = catalog.find(res.substr(5));
          if (!model) {
            std::string known;
            for (const auto& m : catalog.models()) known += (known.empty() ? "" : ", ") + m.name;
            detail::quota_fail(
                source, line, key,
                "unknown GPU model '" + std::string(res.substr(5)) + "' (known: " + known + ")");
          }
          r = quota_resource::gpus(*model);
        } else {
          detail::quota_fail(
              source, line, key,
              "unknown resource '" + std::string(res) +
                  "' (known: gpu, gpu-milli, gpus:MODEL, cpu, cpu-milli, memory-gib, memory-mib)");
        }
        if (v > std::numeric_limits<std::int64_t>::max() / scale) fail(key, "too large");
        v *= scale;
        limits.push_back({limit == "nominal" ? 0 : limit == "borrowing-limit" ? 1 : 2, r, v});
      }
    }
    if (q.queue && !has_tenant) fail("tenant", "a queue needs tenant=TENANT");
    if (q.queue) {
      b.queue(q.name, q.tenant, q.parent);
    } else {
      b.cohort(q.name, q.parent);
    }
    for (const auto& l : limits) {
      if (l.which == 0) b.nominal(l.r, l.v);
      if (l.which == 1) b.borrowing_limit(l.r, l.v);
      if (l.which == 2) b.lending_limit(l.r, l.v);
    }
    by_name.emplace(q.name, nodes.size());
    nodes.push_back(std::move(q));
  }
  // parents: defined anywhere in the file, and cohorts
  for (const auto& q : nodes) {
    if (q.parent.empty()) continue;
    line = q.line;
    const auto it = by_name.find(q.parent);
    const char* field = q.queue ? "cohort" : "parent";
    if (it == by_name.end()) fail(field, "no line defines cohort '" + q.parent + "'");
    if (nodes[it->second].queue) {
      fail(field, "'" + q.parent + "' is a queue (line " + std::to_string(nodes[it->second].line) +
                      "), not a cohort");
    }
  }
  // the tree's own rules (lending limits, cycles, a tenant with two queues), at the node's line
  std::optional<quota_tree> quotas;
  try {
    quotas.emplace(b.build());
  } catch (const invalid_value_error& e) {
    line = 0;
    const auto& w = e.where();
    const auto open = w.find('\'');
    const auto close = w.rfind('\'');
    if (open != std::string::npos && close > open) {
      if (const auto it = by_name.find(w.substr(open + 1, close - open - 1)); it != by_name.end()) {
        line = nodes[it->second].line;
      }
    }
    detail::quota_fail(source, line, e.field(), e.what());
  }
  // the tenant tree: one tenant per node, cohorts with ids from the top of the range
  std::unordered_map<std::string, tenant_id> account;  // cohort name -> synthesised id
  std::size_t cohorts = 0;
  for (const auto& q : nodes) {
    if (!q.queue) {
      account.emplace(q.name, tenant_id{static_cast<tenant_id::rep>(tenant_id::invalid().value() -
                                                                    1 - cohorts++)});
    }
  }
  std::vector<tenant_spec> tenants;
  tenants.reserve(nodes.size());
  for (const auto& q : nodes) {
    tenant_spec t;
    t.id = q.queue ? q.tenant : account.at(q.name);
    t.name = q.name;
    t.parent = q.parent.empty() ? tenant_id::invalid() : account.at(q.parent);
    t.weight = q.weight;
    tenants.push_back(std::move(t));
  }
  try {
    return {std::move(*quotas), tenant_tree(std::move(tenants))};
  } catch (const invalid_value_error& e) {
    detail::quota_fail(source, 0, e.field(), e.what());
  }
}

GPUSCHED_END_NAMESPACE
