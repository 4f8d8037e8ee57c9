// expect: this packing policy has no const member `std::optional<task_allocation> fit
// A user packing whose fit() is not const (packing policies are called through a const ref).
#include <gpusched/pipeline/pipeline.hpp>
namespace gs = gpusched;
struct avoid_rack {
  using policy_category = gs::packing_tag;
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "avoid-rack"; }
#ifdef GPUSCHED_FIXED
  std::optional<gs::task_allocation> fit(const gs::schedule_context& c, gs::node_index n,
                                         const gs::task_request& r) const {
#else
  std::optional<gs::task_allocation> fit(const gs::schedule_context& c, gs::node_index n,
                                         const gs::task_request& r) {
#endif
    return gs::first_fit_packing{}.fit(c, n, r);
  }
  std::optional<gs::task_allocation> pack(const gs::schedule_context& c,
                                          const gs::task_request& r) const {
    return gs::first_fit_packing{}.pack(c, r);
  }
};
int main() {
  auto p = gs::make_pipeline(avoid_rack{});
  (void)p;
}
