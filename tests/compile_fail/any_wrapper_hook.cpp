// expect: lists gpusched::hook::begin_cycle in `using hooks = gpusched::hook_list<...>` but has no member `void begin_cycle
// The type-erased wrapper checks a held policy's hooks like make_pipeline does.
#include <gpusched/pipeline/any_policy.hpp>
namespace gs = gpusched;
struct cycle_counting {
  using policy_category = gs::preemption_tag;
  using hooks = gs::hook_list<gs::hook::begin_cycle>;
  int cycles = 0;
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "cycle-counting"; }
  gs::preemption_plan select(const gs::schedule_context&, const gs::job_spec&, gs::fit_probe) {
    return {};
  }
#ifdef GPUSCHED_FIXED
  void begin_cycle(const gs::schedule_context&) { ++cycles; }
#else
  void begin_cycle() { ++cycles; }
#endif
};
int main() {
  gs::any_preemption_policy p = cycle_counting{};
  (void)p;
}
