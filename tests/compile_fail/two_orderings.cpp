// expect: two ordering policies given
// Two policies of one family.
#include <gpusched/pipeline/pipeline.hpp>
namespace gs = gpusched;
int main() {
#ifdef GPUSCHED_FIXED
  auto p = gs::make_pipeline(gs::priority_ordering{});
#else
  auto p = gs::make_pipeline(gs::priority_ordering{}, gs::fifo_ordering{});
#endif
  (void)p;
}
