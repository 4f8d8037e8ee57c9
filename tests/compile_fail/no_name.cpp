// expect: this policy has no `std::string_view name\(\) const`
// A user ordering without name().
#include <gpusched/pipeline/pipeline.hpp>
namespace gs = gpusched;
struct deadline_first {
  using policy_category = gs::ordering_tag;
#ifdef GPUSCHED_FIXED
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "deadline-first"; }
#endif
  void order(const gs::schedule_context&, std::span<const gs::job_spec*>) {}
};
int main() {
  auto p = gs::make_pipeline(deadline_first{});
  (void)p;
}
