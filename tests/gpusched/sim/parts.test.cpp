// SPDX-License-Identifier: Apache-2.0
// The simulator's parts apart from the loop: the progress arithmetic (sim/progress.hpp), the
// event order (sim/event_queue.hpp), the failure processes (sim/failures.hpp) and the
// `scheduler` concept (sim/scheduler.hpp).
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <variant>
#include <vector>

#include <gpusched/pipeline/any_policy.hpp>
#include <gpusched/sim/event_queue.hpp>
#include <gpusched/sim/failures.hpp>
#include <gpusched/sim/progress.hpp>
#include <gpusched/sim/scheduler.hpp>

// This file's own namespace: its helpers never meet another test file's in a unity build.
namespace sim_parts_test {

namespace gs = gpusched;

namespace {
gs::sim_time ms(std::int64_t v) { return gs::at(gs::sim_duration{v}); }
}  // namespace

TEST_CASE("progress at full rate is wall time after the pause and stops at the limit") {
  gs::progress_state p{.rate = {}, .saved = 0, .p0 = 0, .limit = 10'000, .compute_start = ms(500)};
  CHECK(p.at(ms(0)) == 0);
  CHECK(p.at(ms(500)) == 0);
  CHECK(p.at(ms(2'500)) == 2'000);
  CHECK(p.at(ms(1'000'000)) == 10'000);
  CHECK(p.wall(3'000) == 3'000);
}

TEST_CASE("an elastic job at half its GPUs progresses at half rate and its wall time rounds up") {
  CHECK(gs::elastic_rate(4000, 8000) == gs::progress_rate{4000, 8000});
  CHECK(gs::elastic_rate(8000, 8000) == gs::progress_rate{1, 1});
  CHECK(gs::elastic_rate(0, 8000) == gs::progress_rate{1, 1});
  gs::progress_state p{.rate = gs::elastic_rate(1000, 3000), .limit = 1'000'000};
  CHECK(p.at(ms(3)) == 1);
  CHECK(p.at(ms(5)) == 1);  // 5/3 floors
  CHECK(p.wall(2) == 6);
  CHECK(p.wall(1) == 3);
  CHECK(p.wall(7) == 21);
}

TEST_CASE("plan_next puts the next checkpoint at the next interval multiple, then completion") {
  gs::progress_state p{.p0 = 2'500, .limit = 0, .compute_start = ms(100)};
  auto e = p.plan_next(10'000, gs::sim_duration{1'000}, gs::sim_duration{200});
  CHECK_FALSE(e.completion);
  CHECK(p.limit == 3'000);
  CHECK(e.t == ms(100 + 500 + 200));  // 500 ms of work, then a 200 ms write
  p.checkpoint_written(e.t);
  CHECK(p.saved == 3'000);
  CHECK(p.p0 == 3'000);
  p.p0 = 9'500;
  e = p.plan_next(10'000, gs::sim_duration{1'000}, gs::sim_duration{200});
  CHECK(e.completion);  // 10,000 is not below the work: no checkpoint at completion
  CHECK(p.limit == 10'000);
  e = gs::progress_state{.p0 = 0}.plan_next(700, gs::sim_duration{0}, gs::sim_duration{200});
  CHECK(e.completion);
  CHECK(e.t == ms(700));
}

TEST_CASE("lost work is the wall time since the checkpoint times the GPUs held") {
  gs::progress_state p{.rate = gs::elastic_rate(2000, 4000), .saved = 1'000, .limit = 100'000};
  // 500 ms of progress at half rate took 1,000 ms on 2 GPUs: 2,000 GPU-ms
  CHECK(p.lost_gpu_ms(1'500, 2000) == doctest::Approx(2'000.0));
}

TEST_CASE("a rate change keeps the progress made and replans, except during a write") {
  gs::progress_state p{.p0 = 0, .limit = 0, .compute_start = ms(0)};
  auto e = p.plan_next(10'000, gs::sim_duration{4'000}, gs::sim_duration{1'000});
  CHECK(e.t == ms(5'000));
  CHECK(p.change_rate(ms(2'000), {1, 2}, 10'000));
  CHECK(p.p0 == 2'000);
  CHECK(p.compute_start == ms(2'000));
  e = p.plan_next(10'000, gs::sim_duration{4'000}, gs::sim_duration{1'000});
  CHECK(e.t == ms(2'000 + 4'000 + 1'000));  // 2,000 left at half rate, then the write
  // at 6,500 the job is writing (progress at the limit, the write ends at 7,000)
  CHECK(p.writing(ms(6'500), 10'000));
  CHECK_FALSE(p.change_rate(ms(6'500), {1, 1}, 10'000));
  CHECK(p.rate == gs::progress_rate{1, 1});
  CHECK(p.p0 == 2'000);  // the next event stands
  // a job still in its restore pause keeps its compute start
  gs::progress_state q{.p0 = 100, .limit = 1'000, .compute_start = ms(5'000)};
  CHECK(q.change_rate(ms(1'000), {1, 3}, 1'000));
  CHECK(q.compute_start == ms(5'000));
  CHECK(q.p0 == 100);
}

TEST_CASE("progress arithmetic is exact where a product overflows 64 bits") {
  // 10^10 ms (115 days) at rate 999,999,937/10^9: the product passes 2^63
  gs::progress_state p{.rate = {999'999'937, 1'000'000'000},
                       .limit = std::numeric_limits<std::int64_t>::max()};
  const std::int64_t dt = 10'000'000'000;
  CHECK(p.at(ms(dt)) == 9'999'999'370);
  CHECK(p.wall(9'999'999'370) == dt);
}

TEST_CASE("events come out by time, then kind in variant order, then push order") {
  gs::event_queue q;
  q.push(ms(10), gs::sim_events::tick{});
  q.push(ms(10), gs::sim_events::arrival{7});
  q.push(ms(5), gs::sim_events::arrival{1});
  q.push(ms(10), gs::sim_events::completion{3, 2});
  q.push(ms(10), gs::sim_events::node_failure{4, true});
  q.push(ms(10), gs::sim_events::arrival{8});
  q.push(ms(10), gs::sim_events::checkpoint{2, 0});
  std::vector<std::size_t> kinds;
  std::vector<std::int64_t> times;
  while (!q.empty()) {
    kinds.push_back(q.top().what.index());
    times.push_back(q.top().t.time_since_epoch().count());
    if (const auto* a = std::get_if<gs::sim_events::arrival>(&q.top().what); a && a->job == 8) {
      CHECK(kinds.size() == 6);  // after arrival 7, pushed earlier
    }
    q.pop();
  }
  CHECK(times == std::vector<std::int64_t>{5, 10, 10, 10, 10, 10, 10});
  CHECK(kinds == std::vector<std::size_t>{6, 0, 1, 2, 6, 6, 7});
}

TEST_CASE("a failure process is seeded, memoryless in mean, and uniform over units") {
  gs::failure_process a(42, gs::seconds(3600)), b(42, gs::seconds(3600));
  CHECK(a.enabled(4));
  CHECK_FALSE(a.enabled(0));
  CHECK_FALSE(gs::failure_process(1, gs::sim_duration{0}).enabled(4));
  double sum = 0;
  std::vector<int> hits(4, 0);
  constexpr int n = 20'000;
  for (int i = 0; i < n; ++i) {
    const auto x = a.next(ms(0), 4);
    const auto y = b.next(ms(0), 4);
    REQUIRE(x.t == y.t);
    REQUIRE(x.unit == y.unit);
    REQUIRE(x.t > ms(0));
    sum += static_cast<double>(x.t.time_since_epoch().count());
    ++hits[x.unit];
  }
  // mean gap = MTBF / units = 900 s; the sample mean of 20,000 is within 3% of it
  CHECK(sum / n == doctest::Approx(900'000.0).epsilon(0.03));
  for (int h : hits) CHECK(h == doctest::Approx(n / 4.0).epsilon(0.05));
}

namespace {
struct not_a_scheduler {};
struct minimal_scheduler {
  void schedule(gs::ledger&, std::span<const gs::job_spec>, gs::sim_time, gs::random_engine&,
                gs::cycle_result&) {}
};
}  // namespace

TEST_CASE("the scheduler concept admits the pipelines and a minimal host type") {
  static_assert(gs::scheduler<gs::default_pipeline>);
  static_assert(gs::scheduler<gs::any_pipeline>);
  static_assert(gs::scheduler<minimal_scheduler>);
  static_assert(!gs::scheduler<not_a_scheduler>);
  static_assert(!gs::scheduler<int>);
}

}  // namespace sim_parts_test
