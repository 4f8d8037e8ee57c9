// expect: this ordering policy has no member `void order\(const schedule_context&, std::span<const job_spec\*>\)`
// A user ordering whose order() takes the jobs as a vector.
#include <gpusched/pipeline/pipeline.hpp>
#include <vector>
namespace gs = gpusched;
struct deadline_first {
  using policy_category = gs::ordering_tag;
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "deadline-first"; }
#ifdef GPUSCHED_FIXED
  void order(const gs::schedule_context&, std::span<const gs::job_spec*>) {}
#else
  void order(const gs::schedule_context&, std::vector<gs::job_spec>&) {}
#endif
};
int main() {
  auto p = gs::make_pipeline(deadline_first{});
  (void)p;
}
