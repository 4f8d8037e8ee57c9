// expect: has a member named like gpusched::hook::on_committed .* but does not list the hook
// A hook implemented but not declared: it would never be called.
#include <gpusched/pipeline/pipeline.hpp>
namespace gs = gpusched;
struct counting_admission {
  using policy_category = gs::admission_tag;
#ifdef GPUSCHED_FIXED
  using hooks = gs::hook_list<gs::hook::on_committed>;
#endif
  int* commits = nullptr;
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "counting"; }
  gs::admission_verdict admit(const gs::schedule_context&, const gs::job_spec&) { return {}; }
  gs::queue_action on_unplaced(const gs::schedule_context&, const gs::job_spec&,
                               const gs::reason&) {
    return gs::queue_action::skip;
  }
  void on_committed(const gs::schedule_context&, const gs::decision&) { ++*commits; }
};
int main() {
  auto p = gs::make_pipeline(counting_admission{});
  (void)p;
}
