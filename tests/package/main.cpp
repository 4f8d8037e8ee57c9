// Consumer of an installed (or add_subdirectory'd) gpusched. It depends only on the version
// macros, so it does not change when the API does; including the umbrella header checks that
// the package's include paths (gpusched, Eigen) and C++20 requirement arrive.
#include <gpusched/gpusched.hpp>
#include <gpusched/version.hpp>

#include <iostream>

int main() {
  std::cout << "gpusched " << GPUSCHED_VERSION_MAJOR << '.' << GPUSCHED_VERSION_MINOR << '.'
            << GPUSCHED_VERSION_PATCH << '\n';
  return 0;
}
