// ODR test, translation unit B. See a.cpp.
#include <gpusched/gpusched.hpp>

namespace gpusched_odr {
int from_b() { return 0; }
}  // namespace gpusched_odr
