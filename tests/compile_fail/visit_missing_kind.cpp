// expect: gpu_demand::visit: no handler for demand_replica
// A gpu_demand::visit without a handler for one kind (here demand_replica) is rejected with a
// message naming the kind, so a new demand kind is a compile error at every visiting site.
#include <gpusched/resource/request.hpp>

int main() {
  namespace gs = gpusched;
  return gs::gpu_demand::none().visit([](gs::demand_none) { return 0; },
                                      [](gs::demand_whole) { return 1; },
                                      [](gs::demand_share) { return 2; },
#ifdef GPUSCHED_FIXED
                                      [](gs::demand_replica) { return 4; },
#endif
                                      [](gs::demand_mig) { return 3; });
}
