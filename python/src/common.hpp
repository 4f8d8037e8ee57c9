// SPDX-License-Identifier: Apache-2.0
// Shared declarations of the Python module's translation units (module.cpp defines the module
// and the exceptions; model.cpp the cluster and job values; pipeline.cpp the ledger, pipeline
// and decisions; policies.cpp the Python-callable policies; replay.cpp the replay).
#pragma once

#include <pybind11/pybind11.h>

#include <cmath>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>

#include <gpusched/core/error.hpp>
#include <gpusched/core/time.hpp>
#include <gpusched/pipeline/any_policy.hpp>
#include <gpusched/pipeline/registry.hpp>
#include <gpusched/workload/job.hpp>

namespace py = pybind11;
namespace gs = gpusched;

namespace gpusched_python {

void init_errors(py::module_& m);
void init_model(py::module_& m);
void init_pipeline(py::module_& m);
void init_policies(py::module_& m);
void init_replay(py::module_& m);
void init_fgd(py::module_& m);

/// Seconds (a Python float) as the library's millisecond clock.
inline gs::sim_duration duration_from_seconds(double s) {
  if (!std::isfinite(s)) {
    throw gs::invalid_value_error(gs::error_id::invalid_value, "time", "seconds", std::to_string(s),
                                  "must be finite");
  }
  return gs::sim_duration{static_cast<std::int64_t>(std::llround(s * 1000.0))};
}
inline gs::sim_time time_from_seconds(double s) { return gs::at(duration_from_seconds(s)); }

/// A Python exception raised by a policy written in Python, with what the policy was doing.
/// Crosses the C++ pipeline as an ordinary exception; the module's translator raises
/// `gpusched.PolicyError` from the original Python exception.
class policy_failure : public std::exception {
 public:
  policy_failure(std::string message, py::error_already_set cause)
      : message_(std::move(message)),
        cause_(std::make_shared<py::error_already_set>(std::move(cause))) {}
  [[nodiscard]] const char* what() const noexcept override { return message_.c_str(); }
  [[nodiscard]] py::error_already_set& cause() const noexcept { return *cause_; }

 private:
  std::string message_;
  std::shared_ptr<py::error_already_set> cause_;
};

/// The job the pipeline is placing now (set by the tracking placement wrapper), so that an
/// error in a Python packing policy names it. Shared by one pipeline's slots.
struct current_job {
  const gs::job_spec* job = nullptr;
};

/// "job 7 'name'" (or "job 7").
std::string job_text(const gs::job_spec& j);

/// Python policies of each family as type-erased library policies (policies.cpp). `fn` is the
/// Python callable; `name` its name in messages and registries.
gs::any_ordering_policy make_python_ordering(py::object fn, std::string name);
gs::any_packing_policy make_python_packing(py::object fn, std::string name,
                                           std::shared_ptr<current_job> cur);
gs::any_preemption_policy make_python_preemption(py::object fn, std::string name);
/// Wraps a placement policy so that it records the job it places in `cur`.
gs::any_placement_policy track_placement(gs::any_placement_policy inner,
                                         std::shared_ptr<current_job> cur);
/// Registers the Python callable `fn` as policy `name` of `family` ("ordering", "packing" or
/// "preemption") in `registry`. @throws invalid_value_error for another family.
void add_python_policy(gs::policy_registry& registry, const std::string& family,
                       const std::string& name, py::object fn);

/// task_group::min_count as the Python API gives it (None: rigid).
template <class T = decltype(gs::task_group::min_count)>
T min_count_value(std::optional<std::int32_t> m) {
  if constexpr (std::is_same_v<T, std::int32_t>) {
    return m ? *m : -1;
  } else {
    return m;
  }
}

}  // namespace gpusched_python
