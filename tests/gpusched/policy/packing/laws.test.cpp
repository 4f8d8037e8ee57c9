// SPDX-License-Identifier: Apache-2.0
// Laws over every packing policy (policy/concepts.hpp, `packing_policy`): a returned allocation
// never over-commits (`can_apply`) and grants exactly the request on an allowed model; `fit`
// answers for the node it was asked about; `pack` returns nothing only if `fit` returns nothing
// on every node (brute force over all nodes). On seeded random clusters with exclusive, MIG,
// time-sliced and MPS GPUs, nodes out of service, failed GPUs and partly used capacity.
#include <doctest/doctest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gpusched/policy/packing/best_fit.hpp>
#include <gpusched/policy/packing/fgd.hpp>
#include <gpusched/policy/packing/first_fit.hpp>
#include <gpusched/policy/packing/mig_aware.hpp>
#include <gpusched/policy/packing/topology_aware.hpp>

#include "law_fixtures.hpp"

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace policy_packing_laws_test {

namespace gs = gpusched;
namespace gt = gpusched::testing;

namespace {

constexpr std::size_t law_nodes_count = 12;  // a multiple of the fat tree's 4 nodes per leaf

/// The topology model of the law clusters: a fat tree over the nodes, one DGX H100 node type.
struct law_topology {
  std::shared_ptr<gs::topology_model> model =
      std::make_shared<gs::topology_model>(gs::fabric::fat_tree(law_nodes_count, 4));
  std::uint32_t handle = model->add_node_type(gs::dgx_h100());
};

std::shared_ptr<const gs::target_workload> law_workload(gs::random_engine& g,
                                                        const gs::gpu_catalog& cat) {
  std::vector<gs::fgd_pod_shape> shapes;
  for (int i = 0; i < 50; ++i) {
    if (auto s = gs::fgd_pod_shape::of(gt::random_request(g, cat))) shapes.push_back(*s);
  }
  return std::make_shared<const gs::target_workload>(shapes, 95.0);
}

// Each packing policy under test, built for a law cluster.
template <class P>
struct plain {
  static P make(gs::random_engine&, const gs::gpu_catalog&, const law_topology&) { return P{}; }
};
struct first_fit_case : plain<gs::first_fit_packing> {};
struct best_fit_case : plain<gs::best_fit_packing> {};
struct worst_fit_case : plain<gs::worst_fit_packing> {};
struct random_case : plain<gs::random_packing> {};
struct dotprod_case : plain<gs::dotprod_packing> {};
struct gpu_clustering_case : plain<gs::gpu_clustering_packing> {};
struct gpu_packing_case : plain<gs::gpu_packing_packing> {};
struct fgd_best_fit_case : plain<gs::fgd_best_fit_packing> {};
struct mig_aware_case : plain<gs::mig_aware_packing> {};
struct fgd_case {
  static gs::fgd_packing make(gs::random_engine& g, const gs::gpu_catalog& cat,
                              const law_topology&) {
    return gs::fgd_packing(law_workload(g, cat));
  }
};
struct topology_case {
  static gs::topology_packing make(gs::random_engine&, const gs::gpu_catalog&,
                                   const law_topology& t) {
    return gs::topology_packing(t.model);
  }
};

/// Checks one returned allocation: on `node` when given, applicable, exactly the request.
void check_allocation(const gs::cluster& c, const gs::task_request& r, const gs::task_allocation& a,
                      std::optional<gs::node_index> node) {
  if (node) CHECK(a.node == *node);
  CHECK(c.can_apply(a));
  const auto err = gt::grant_error(c, r, a);
  CHECK_MESSAGE(err.empty(), err);
}

}  // namespace

TEST_SUITE("policy/packing/laws") {
  TEST_CASE_TEMPLATE(
      "every packing policy grants exactly the request without over-committing, and packs "
      "whenever some node fits",
      C, first_fit_case, best_fit_case, worst_fit_case, random_case, dotprod_case,
      gpu_clustering_case, gpu_packing_case, fgd_best_fit_case, fgd_case, mig_aware_case,
      topology_case) {
    const auto seed = gs::seed_from_env(17001);
    INFO("seed = " << seed);
    gs::random_engine g(seed);
    const auto cat = gs::basic_catalog();
    const law_topology topo;
    std::size_t packed = 0, refused = 0;
    for (int round = 0; round < 12; ++round) {
      CAPTURE(round);
      gs::ledger book(gs::cluster(cat, gt::law_nodes(g, law_nodes_count, topo.handle)));
      gt::take_some_out(g, book);
      gt::fill_randomly(g, book, cat, 6 + gs::uniform_index(g, 30));
      const auto p = C::make(g, cat, topo);
      const gs::schedule_context ctx(book, gs::at(gs::seconds(round)), g);
      const gs::cluster& c = book.state();
      for (int k = 0; k < 40; ++k) {
        const auto r = gt::law_request(g, cat);
        CAPTURE(k);
        bool some_fit = false;
        for (gs::node_index n : c.nodes()) {
          if (const auto a = p.fit(ctx, n, r)) {
            some_fit = true;
            check_allocation(c, r, *a, n);
          }
        }
        const auto a = p.pack(ctx, r);
        if (a) {
          ++packed;
          check_allocation(c, r, *a, std::nullopt);
        } else {
          ++refused;
          CHECK_FALSE(some_fit);  // nothing packed only when no node fits
        }
      }
    }
    // the instances exercise both answers
    CHECK(packed > 0);
    CHECK(refused > 0);
  }
}

}  // namespace policy_packing_laws_test
