// ODR test, translation unit A. Both TUs include the umbrella header; if any header defines a
// non-inline function or variable with external linkage, linking A and B fails.
#include <gpusched/gpusched.hpp>

namespace gpusched_odr {
int from_b();  // defined in b.cpp
int from_a() { return 0; }
}  // namespace gpusched_odr

int main() { return gpusched_odr::from_a() + gpusched_odr::from_b(); }
