// SPDX-License-Identifier: Apache-2.0
// Must NOT compile: a gpu_demand::visit without a handler for one kind (here demand_replica) is
// rejected with a message naming the kind. Built by the CTest test
// "resource.visit_without_a_handler_does_not_compile" (tests/CMakeLists.txt).
#include <gpusched/resource/request.hpp>

int main() {
  namespace gs = gpusched;
  return gs::gpu_demand::none().visit([](gs::demand_none) { return 0; },
                                      [](gs::demand_whole) { return 1; },
                                      [](gs::demand_share) { return 2; },
                                      [](gs::demand_mig) { return 3; });
}
