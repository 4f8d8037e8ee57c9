// expect: this type is not a policy: it has no `using policy_category
// A user ordering that forgot to opt into its family.
#include <gpusched/pipeline/pipeline.hpp>
namespace gs = gpusched;
struct deadline_first {
#ifdef GPUSCHED_FIXED
  using policy_category = gs::ordering_tag;
#endif
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "deadline-first"; }
  void order(const gs::schedule_context&, std::span<const gs::job_spec*>) {}
};
int main() {
  auto p = gs::make_pipeline(deadline_first{});
  (void)p;
}
