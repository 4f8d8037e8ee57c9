// expect: this policy's `hooks` lists a hook that its family does not have
// A preemption policy declaring an admission hook.
#include <gpusched/pipeline/pipeline.hpp>
namespace gs = gpusched;
struct never_preempt {
  using policy_category = gs::preemption_tag;
#ifdef GPUSCHED_FIXED
  using hooks = gs::hook_list<gs::hook::on_preempted>;
#else
  using hooks = gs::hook_list<gs::hook::on_preempted, gs::hook::on_grown>;
#endif
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "never"; }
  gs::preemption_plan select(const gs::schedule_context&, const gs::job_spec&, gs::fit_probe) {
    return {};
  }
  void on_preempted(const gs::schedule_context&, const gs::job_spec&, const gs::preemption_plan&) {}
};
int main() {
  auto p = gs::make_pipeline(never_preempt{});
  (void)p;
}
