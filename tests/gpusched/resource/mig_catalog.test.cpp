// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gpusched/check/invariants.hpp>
#include <gpusched/policy/packing/first_fit.hpp>
#include <gpusched/policy/packing/mig_aware.hpp>
#include <gpusched/resource/mig_catalog.hpp>

#include "generators.hpp"

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace resource_mig_catalog_test {

namespace gs = gpusched;
using namespace gpusched::literals;

namespace {

const gs::gpu_model& model(const gs::gpu_catalog& c, const char* name) { return c[c.id(name)]; }

std::string placements(const gs::mig_profile& p) {
  std::string s = "{";
  for (unsigned i = 0; i < 8; ++i) {
    if (((p.placement_starts >> i) & 1u) != 0) s += (s.size() > 1 ? "," : "") + std::to_string(i);
  }
  return s + "}:" + std::to_string(p.memory_slices);
}

/// "name C M max placements" for every profile, in catalog order.
std::vector<std::string> table(const gs::gpu_model& m) {
  std::vector<std::string> out;
  for (const auto& p : m.mig.profiles) {
    out.push_back(p.name + " " + std::to_string(p.compute_slices) + " " +
                  std::to_string(p.memory_slices) + " " + std::to_string(p.max_instances) + " " +
                  placements(p));
  }
  return out;
}

/// Every layout (set of non-overlapping placements, at most one +me) of `profiles` on an
/// empty GPU, by exhaustive search. Each layout is a sorted list of (profile index, start).
using layout = std::vector<std::pair<std::size_t, unsigned>>;
void enumerate(const std::vector<const gs::mig_profile*>& profiles, std::size_t from_pl,
               gs::mig_slot_mask used, bool media, layout& cur, std::vector<layout>& out,
               const std::vector<std::pair<std::size_t, unsigned>>& all) {
  out.push_back(cur);
  for (std::size_t k = from_pl; k < all.size(); ++k) {
    const auto [pi, st] = all[k];
    const auto* p = profiles[pi];
    const auto slots = p->slots_at(st);
    if ((used & slots) != 0 || (p->media_extension && media)) continue;
    cur.push_back(all[k]);
    enumerate(profiles, k + 1, static_cast<gs::mig_slot_mask>(used | slots),
              media || p->media_extension, cur, out, all);
    cur.pop_back();
  }
}
std::vector<layout> all_layouts(const std::vector<const gs::mig_profile*>& profiles) {
  std::vector<std::pair<std::size_t, unsigned>> all;
  for (std::size_t i = 0; i < profiles.size(); ++i) {
    for (unsigned s = 0; s < 8; ++s) {
      if (((profiles[i]->placement_starts >> s) & 1u) != 0) all.emplace_back(i, s);
    }
  }
  std::vector<layout> out;
  layout cur;
  enumerate(profiles, 0, 0, false, cur, out, all);
  return out;
}
gs::mig_slot_mask used_by(const std::vector<const gs::mig_profile*>& ps, const layout& l) {
  gs::mig_slot_mask m = 0;
  for (auto [pi, st] : l) m = static_cast<gs::mig_slot_mask>(m | ps[pi]->slots_at(st));
  return m;
}
bool is_maximal(const std::vector<const gs::mig_profile*>& ps, const layout& l) {
  const auto used = used_by(ps, l);
  bool media = false;
  for (auto [pi, st] : l) media = media || ps[pi]->media_extension;
  for (const auto* p : ps) {
    if (p->media_extension && media) continue;
    for (unsigned s = 0; s < 8; ++s) {
      if (((p->placement_starts >> s) & 1u) != 0 && (used & p->slots_at(s)) == 0) return false;
    }
  }
  return true;
}
std::vector<const gs::mig_profile*> pick(const gs::gpu_model& m,
                                         std::initializer_list<const char*> names) {
  std::vector<const gs::mig_profile*> out;
  for (const char* n : names) out.push_back(m.mig.find(n));
  return out;
}

/// Brute force: can `req` be added to occupancy `occ`? Tries every assignment of starts.
bool brute_fits(gs::mig_occupancy occ, const std::vector<const gs::mig_profile*>& req,
                std::size_t i = 0) {
  if (i == req.size()) return true;
  const auto* p = req[i];
  if (p->media_extension && occ.media_used) return false;
  for (unsigned s = 0; s < 8; ++s) {
    if (((p->placement_starts >> s) & 1u) == 0 || (occ.used & p->slots_at(s)) != 0) continue;
    if (brute_fits({static_cast<gs::mig_slot_mask>(occ.used | p->slots_at(s)),
                    occ.media_used || p->media_extension},
                   req, i + 1)) {
      return true;
    }
  }
  return false;
}

}  // namespace

TEST_SUITE("resource/mig_catalog") {
  TEST_CASE("the catalog holds every MIG model of the hardware notes and validates") {
    const auto c = gs::mig_catalog();
    CHECK(c.size() == gs::mig_model_names.size());
    for (const char* n : gs::mig_model_names) {
      CAPTURE(n);
      CHECK(model(c, n).supports_mig());
    }
  }

  TEST_CASE("A100-40GB table matches lgipp [V] and basic_catalog") {
    const auto c = gs::mig_catalog();
    const std::vector<std::string> want{"1g.5gb 1 1 7 {0,1,2,3,4,5,6}:1",
                                        "1g.5gb+me 1 1 1 {0,1,2,3,4,5,6}:1",
                                        "1g.10gb 1 2 4 {0,2,4,6}:2",
                                        "2g.10gb 2 2 3 {0,2,4}:2",
                                        "3g.20gb 3 4 2 {0,4}:4",
                                        "4g.20gb 4 4 1 {0}:4",
                                        "7g.40gb 7 8 1 {0}:8"};
    CHECK(table(model(c, "A100-SXM4-40GB")) == want);
    const auto b = gs::basic_catalog();
    CHECK(table(model(b, "A100-SXM4-40GB")) == want);
  }

  TEST_CASE("A100-80GB and H100-80GB use the 80GB names on the same geometry [V]") {
    const auto c = gs::mig_catalog();
    const std::vector<std::string> want{"1g.10gb 1 1 7 {0,1,2,3,4,5,6}:1",
                                        "1g.10gb+me 1 1 1 {0,1,2,3,4,5,6}:1",
                                        "1g.20gb 1 2 4 {0,2,4,6}:2",
                                        "2g.20gb 2 2 3 {0,2,4}:2",
                                        "3g.40gb 3 4 2 {0,4}:4",
                                        "4g.40gb 4 4 1 {0}:4",
                                        "7g.80gb 7 8 1 {0}:8"};
    CHECK(table(model(c, "A100-SXM4-80GB")) == want);
    CHECK(table(model(c, "H100-SXM5-80GB")) == want);
    // A100-80GB placements are [S]; H100-80GB ones are [V].
    CHECK(model(c, "A100-SXM4-80GB").mig.profiles.front().inferred);
    CHECK_FALSE(model(c, "H100-SXM5-80GB").mig.profiles.front().inferred);
  }

  TEST_CASE("A30 has 4 memory slices and its own table [V]") {
    const auto cat = gs::mig_catalog();
    const auto& a30 = model(cat, "A30-24GB");
    CHECK(a30.mig.memory_slices == 4);
    CHECK(a30.mig.compute_slices == 4);
    const std::vector<std::string> want{"1g.6gb 1 1 4 {0,1,2,3}:1", "1g.6gb+me 1 1 1 {0,1,2,3}:1",
                                        "2g.12gb 2 2 2 {0,2}:2", "2g.12gb+me 2 2 1 {0,2}:2",
                                        "4g.24gb 4 4 1 {0}:4"};
    CHECK(table(a30) == want);
  }

  TEST_CASE("per-model names for H100-94GB, H100-96GB, H200, GH200, B200, GB200 [V]") {
    const auto c = gs::mig_catalog();
    const auto names = [&](const char* m) {
      std::vector<std::string> out;
      for (const auto& p : model(c, m).mig.profiles) out.push_back(p.name);
      return out;
    };
    using v = std::vector<std::string>;
    CHECK(names("H100-94GB") ==
          v{"1g.12gb", "1g.12gb+me", "1g.24gb", "2g.24gb", "3g.47gb", "4g.47gb", "7g.94gb"});
    CHECK(names("H100-96GB") ==
          v{"1g.12gb", "1g.12gb+me", "1g.24gb", "2g.24gb", "3g.48gb", "4g.48gb", "7g.96gb"});
    CHECK(names("H200-141GB") ==
          v{"1g.18gb", "1g.18gb+me", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"});
    CHECK(names("GH200-144GB") ==
          v{"1g.18gb", "1g.18gb+me", "1g.36gb", "2g.36gb", "3g.72gb", "4g.72gb", "7g.144gb"});
    CHECK(names("B200-180GB") ==
          v{"1g.23gb", "1g.23gb+me", "1g.45gb", "2g.45gb", "3g.90gb", "4g.90gb", "7g.180gb"});
    CHECK(names("GB200-186GB") ==
          v{"1g.23gb", "1g.23gb+me", "1g.47gb", "2g.47gb", "3g.93gb", "4g.93gb", "7g.186gb"});
    // Instance counts [V] for the H200 and Blackwell rows.
    for (const char* m : {"H200-141GB", "GH200-144GB", "B200-180GB", "GB200-186GB"}) {
      std::vector<int> maxes;
      for (const auto& p : model(c, m).mig.profiles) maxes.push_back(p.max_instances);
      CHECK(maxes == std::vector<int>{7, 1, 4, 3, 2, 1, 1});
      // Placements of H200 and Blackwell are inferred [I].
      CHECK(model(c, m).mig.profiles.front().inferred);
    }
  }

  TEST_CASE("profiles are keyed by shape: 1g.35gb is 2 slices on H200 and 1 slice on GB300") {
    const auto c = gs::mig_catalog();
    const auto* h200 = model(c, "H200-141GB").mig.find("1g.35gb");
    const auto* gb300 = model(c, "GB300-288GB").mig.find("1g.35gb");
    REQUIRE(h200 != nullptr);
    REQUIRE(gb300 != nullptr);
    CHECK(h200->memory_slices == 2);
    CHECK(h200->max_instances == 4);
    CHECK(gb300->memory_slices == 1);
    CHECK(gb300->max_instances == 7);
    CHECK(model(c, "H200-141GB").mig.find(1, 2) == h200);
  }

  TEST_CASE("combination rules of the A100 family hold [V]") {
    const auto cat = gs::mig_catalog();
    const auto& a = model(cat, "A100-SXM4-40GB");
    const auto* g1 = a.mig.find("1g.5gb");
    const auto* g1me = a.mig.find("1g.5gb+me");
    const auto* g2 = a.mig.find("2g.10gb");
    const auto* g3 = a.mig.find("3g.20gb");
    const auto* g4 = a.mig.find("4g.20gb");
    const auto* g7 = a.mig.find("7g.40gb");
    using req = std::vector<const gs::mig_profile*>;
    // 7g needs an empty GPU.
    CHECK(gs::mig_fit({}, req{g7}));
    CHECK_FALSE(gs::mig_fit({0b1000'0000, false}, req{g7}));
    // 4g only at slot 0; 4g + 3g fits (R510+).
    CHECK_FALSE(gs::mig_fit({0b0000'0001, false}, req{g4}));
    const auto four_three = gs::mig_fit({}, req{g4, g3});
    REQUIRE(four_three);
    CHECK((*four_three)[0].start == 0);
    CHECK((*four_three)[1].start == 4);
    // Small 1g never starts at slot 7; seven of them leave slice 7 unused.
    CHECK_FALSE(gs::mig_fit({0b0111'1111, false}, req{g1}));
    CHECK(gs::mig_fit({}, req(7, g1)));
    CHECK_FALSE(gs::mig_fit({}, req(8, g1)));
    // 2g never starts at 6.
    CHECK_FALSE(gs::mig_fit({0b0011'1111, false}, req{g2}));
    // 3-2-1-1 fits only with 3g at slot 4 (the driver's order trap).
    const auto mix = gs::mig_fit({}, req{g1, g1, g2, g3});
    REQUIRE(mix);
    CHECK((*mix)[3].start == 4);
    // At most one +me instance.
    CHECK(gs::mig_fit({}, req{g1me, g1}));
    CHECK_FALSE(gs::mig_fit({}, req{g1me, g1me}));
    CHECK_FALSE(gs::mig_fit({0, true}, req{g1me}));
    // The documented 4g.20gb + 2g.10gb + 1g.5gb on one GPU.
    CHECK(gs::mig_fit({}, req{g4, g2, g1}));
  }

  TEST_CASE(
      "A100-40GB layout enumeration: 297 base layouts, 19 maximal, 78 and 239 maximal "
      "with 1g.10gb and +me") {
    const auto cat = gs::mig_catalog();
    const auto& a = model(cat, "A100-SXM4-40GB");
    const auto base = pick(a, {"1g.5gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"});
    const auto base_layouts = all_layouts(base);
    CHECK(base_layouts.size() - 1 == 297);  // minus the empty layout
    int maximal = 0;
    for (const auto& l : base_layouts) maximal += is_maximal(base, l) ? 1 : 0;
    CHECK(maximal == 19);
    const auto with10 = pick(a, {"1g.5gb", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"});
    int m10 = 0;
    for (const auto& l : all_layouts(with10)) m10 += is_maximal(with10, l) ? 1 : 0;
    CHECK(m10 == 78);
    const auto withme =
        pick(a, {"1g.5gb", "1g.5gb+me", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"});
    int mme = 0;
    for (const auto& l : all_layouts(withme)) mme += is_maximal(withme, l) ? 1 : 0;
    CHECK(mme == 239);
  }

  TEST_CASE("instance caps and the 7-instance limit are implied by placements in every layout") {
    const auto c = gs::mig_catalog();
    for (const char* name : gs::mig_model_names) {
      CAPTURE(name);
      const auto& m = model(c, name);
      std::vector<const gs::mig_profile*> ps;
      for (const auto& p : m.mig.profiles) ps.push_back(&p);
      for (const auto& l : all_layouts(ps)) {
        std::map<const gs::mig_profile*, int> count;
        int compute = 0;
        for (auto [pi, st] : l) {
          ++count[ps[pi]];
          compute += ps[pi]->compute_slices;
        }
        for (auto [p, n] : count) CHECK(n <= p->max_instances);
        CHECK(l.size() <= static_cast<std::size_t>(m.mig.compute_slices));
        CHECK(compute <= m.mig.compute_slices);
      }
    }
  }

  TEST_CASE("mig_fit agrees with brute force on random occupancies and request multisets") {
    const auto seed = gs::seed_from_env(515);
    INFO("seed = " << seed);
    gs::random_engine g(seed);
    const auto c = gs::mig_catalog();
    for (const char* name : {"A100-SXM4-40GB", "A30-24GB", "H100-SXM5-80GB"}) {
      CAPTURE(name);
      const auto& m = model(c, name);
      std::vector<const gs::mig_profile*> ps;
      for (const auto& p : m.mig.profiles) ps.push_back(&p);
      const auto layouts = all_layouts(ps);
      for (int round = 0; round < 3000; ++round) {
        const auto& l = layouts[gs::uniform_index(g, layouts.size())];
        gs::mig_occupancy occ{used_by(ps, l), false};
        for (auto [pi, st] : l) occ.media_used = occ.media_used || ps[pi]->media_extension;
        std::vector<const gs::mig_profile*> req;
        const auto k = 1 + gs::uniform_index(g, 4);
        for (std::size_t i = 0; i < k; ++i) req.push_back(ps[gs::uniform_index(g, ps.size())]);
        const auto got = gs::mig_fit(occ, req);
        CHECK(got.has_value() == brute_fits(occ, req));
        if (!got) continue;
        REQUIRE(got->size() == req.size());
        gs::mig_slot_mask used = occ.used;
        int media = occ.media_used ? 1 : 0;
        for (std::size_t i = 0; i < req.size(); ++i) {
          CHECK((*got)[i].profile == req[i]);
          CHECK(((static_cast<unsigned>(req[i]->placement_starts) >> (*got)[i].start) & 1u) != 0);
          CHECK((used & (*got)[i].slots()) == 0);
          used = static_cast<gs::mig_slot_mask>(used | (*got)[i].slots());
          media += req[i]->media_extension ? 1 : 0;
        }
        CHECK(media <= 1);
      }
    }
  }

  TEST_CASE("option value and best slot: 41 on an empty A100, 3g goes to slot 4, 1g to slot 6") {
    const auto cat = gs::mig_catalog();
    const auto& a = model(cat, "A100-SXM4-40GB");
    CHECK(gs::mig_option_value(a.mig, 0) == 41);
    CHECK(gs::mig_option_value(a.mig, 0xFF) == 0);
    // After 3g@0 only 1g x3, 1g.10gb x2, 2g x1, 3g x1 remain: 3+4+2+4 = 13; after 3g@4: 4+4+4+4+4.
    CHECK(gs::mig_option_value(a.mig, 0x0F) == 13);
    CHECK(gs::mig_option_value(a.mig, 0xF0) == 20);
    const auto three = gs::mig_best_slot(a.mig, *a.mig.find("3g.20gb"), {});
    REQUIRE(three);
    CHECK(three->start == 4);
    const auto one = gs::mig_best_slot(a.mig, *a.mig.find("1g.5gb"), {});
    REQUIRE(one);
    CHECK(one->start == 6);
    CHECK_FALSE(gs::mig_best_slot(a.mig, *a.mig.find("1g.5gb+me"), {0, true}));
  }

  TEST_CASE("mig-aware packing fits 3g, 2g, 1g, 1g on one A100 where first-fit strands the last") {
    std::vector<gs::node_spec> nodes{{.id = gs::node_id{1},
                                      .name = "m",
                                      .gpu_model = "A100-SXM4-40GB",
                                      .gpus = 1_gpus,
                                      .mig_enabled = true,
                                      .cpu = 64_cores,
                                      .memory = 256_gib}};
    const auto cat = gs::mig_catalog();
    const auto run = [&](const auto& packer) {
      gs::ledger book(gs::cluster(cat, nodes));
      gs::random_engine g(1);
      int placed = 0;
      unsigned id = 1;
      for (auto [cs, ms] : {std::pair{3, 4}, {2, 2}, {1, 1}, {1, 1}}) {
        gs::task_request r;
        r.gpu = gs::gpu_demand::mig(static_cast<std::uint8_t>(cs), static_cast<std::uint8_t>(ms));
        const gs::schedule_context ctx(book, {}, g);
        auto a = packer.pack(ctx, r);
        if (!a) continue;
        gs::job_spec j;
        j.id = gs::job_id{id++};
        j.groups.push_back({.name = "t", .request = r, .count = 1});
        auto tx = book.begin();
        REQUIRE(tx.place(*a));
        tx.commit(j, {});
        ++placed;
      }
      const auto rep = gs::check_invariants(book);
      CHECK_MESSAGE(rep.ok(), rep.to_string());
      return placed;
    };
    CHECK(run(gs::first_fit_packing{}) == 3);
    CHECK(run(gs::mig_aware_packing{}) == 4);
  }

  TEST_CASE("mig-aware packing never over-commits and places a MIG request whenever a slot fits") {
    const auto seed = gs::seed_from_env(77);
    INFO("seed = " << seed);
    gs::random_engine g(seed);
    const auto cat = gs::basic_catalog();
    const gs::mig_aware_packing packer;
    for (int round = 0; round < 20; ++round) {
      gs::ledger book(gs::cluster(cat, gs::testing::random_nodes(g, 1 + gs::uniform_index(g, 10))));
      unsigned next = 1;
      for (int step = 0; step < 60; ++step) {
        const gs::schedule_context ctx(book, {}, g);
        const auto req = gs::testing::random_request(g, cat);
        const auto got = packer.pack(ctx, req);
        bool any = false;
        for (gs::node_index n : book.state().nodes()) {
          if (auto a = packer.fit(ctx, n, req)) {
            any = true;
            CHECK(book.state().can_apply(*a));
            CHECK(gs::detail::grant_matches(req, *a, book.state()));
          }
        }
        CHECK(got.has_value() == any);
        if (!got) continue;
        gs::job_spec j;
        j.id = gs::job_id{next++};
        j.groups.push_back({.name = "t", .request = req, .count = 1});
        auto tx = book.begin();
        REQUIRE(tx.place(*got));
        tx.commit(j, {});
        const auto rep = gs::check_invariants(book);
        CHECK_MESSAGE(rep.ok(), rep.to_string());
      }
    }
  }
}

}  // namespace resource_mig_catalog_test
