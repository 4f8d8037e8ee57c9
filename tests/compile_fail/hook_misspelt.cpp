// expect: lists gpusched::hook::on_committed in `using hooks = gpusched::hook_list<...>` but has no member `void on_committed
// A declared hook whose member name is misspelt.
#include <gpusched/pipeline/pipeline.hpp>
namespace gs = gpusched;
struct counting_admission {
  using policy_category = gs::admission_tag;
  using hooks = gs::hook_list<gs::hook::on_committed>;
  int* commits = nullptr;
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "counting"; }
  gs::admission_verdict admit(const gs::schedule_context&, const gs::job_spec&) { return {}; }
  gs::queue_action on_unplaced(const gs::schedule_context&, const gs::job_spec&,
                               const gs::reason&) {
    return gs::queue_action::skip;
  }
#ifdef GPUSCHED_FIXED
  void on_committed(const gs::schedule_context&, const gs::decision&) { ++*commits; }
#else
  void on_commited(const gs::schedule_context&, const gs::decision&) { ++*commits; }
#endif
};
int main() {
  auto p = gs::make_pipeline(counting_admission{});
  (void)p;
}
