// expect: lists gpusched::hook::approve in `using hooks = gpusched::hook_list<...>` but has no member `admission_verdict approve
// A declared hook with the wrong return type (bool instead of admission_verdict).
#include <gpusched/pipeline/pipeline.hpp>
namespace gs = gpusched;
struct picky_admission {
  using policy_category = gs::admission_tag;
  using hooks = gs::hook_list<gs::hook::approve>;
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "picky"; }
  gs::admission_verdict admit(const gs::schedule_context&, const gs::job_spec&) { return {}; }
  gs::queue_action on_unplaced(const gs::schedule_context&, const gs::job_spec&,
                               const gs::reason&) {
    return gs::queue_action::skip;
  }
#ifdef GPUSCHED_FIXED
  gs::admission_verdict approve(const gs::schedule_context&, const gs::job_spec&,
                                gs::ledger::transaction& tx) {
    return {tx.placed().size() <= 8 ? gs::verdict::admit : gs::verdict::defer, {}};
  }
#else
  bool approve(const gs::schedule_context&, const gs::job_spec&, gs::ledger::transaction& tx) {
    return tx.placed().size() <= 8;
  }
#endif
};
int main() {
  auto p = gs::make_pipeline(picky_admission{});
  (void)p;
}
