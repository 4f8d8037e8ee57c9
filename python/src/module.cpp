// SPDX-License-Identifier: Apache-2.0
// The extension module `gpusched._gpusched`: the exception hierarchy and the init functions of
// the other translation units. The package `gpusched` (python/gpusched/__init__.py) re-exports
// it with a thin pure-Python layer (replay tables as NumPy arrays).
#include <pybind11/pybind11.h>

#include <string>

#include <gpusched/version.hpp>

#include "common.hpp"

namespace gpusched_python {

std::string job_text(const gs::job_spec& j) {
  std::string s = "job " + std::to_string(j.id.value());
  if (!j.name.empty()) s += " '" + j.name + "'";
  return s;
}

void init_errors(py::module_& m) {
  // gpusched.Error(Exception); InvalidValueError(Error, ValueError); ParseError(Error,
  // ValueError); PolicyError(Error): a policy written in Python raised.
  static PyObject* error = PyErr_NewExceptionWithDoc(
      "gpusched.Error",
      "Base of every error the library raises; the message starts with [gpusched.<id>].",
      PyExc_Exception, nullptr);
  static PyObject* invalid = PyErr_NewExceptionWithDoc(
      "gpusched.InvalidValueError",
      "A value outside its domain, an unknown name or id, or contradicting values; the "
      "message names the object, the field and the value. Also a ValueError.",
      py::make_tuple(py::handle(error), py::handle(PyExc_ValueError)).release().ptr(), nullptr);
  static PyObject* parse = PyErr_NewExceptionWithDoc(
      "gpusched.ParseError",
      "Malformed text input (trace, topology); the message names the file, the line and the "
      "field. Also a ValueError.",
      py::make_tuple(py::handle(error), py::handle(PyExc_ValueError)).release().ptr(), nullptr);
  static PyObject* policy = PyErr_NewExceptionWithDoc(
      "gpusched.PolicyError",
      "A policy written in Python raised (or returned a bad value); the message names the "
      "policy and the job, and __cause__ is the original exception.",
      error, nullptr);
  m.add_object("Error", py::handle(error));
  m.add_object("InvalidValueError", py::handle(invalid));
  m.add_object("ParseError", py::handle(parse));
  m.add_object("PolicyError", py::handle(policy));
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const policy_failure& f) {
      f.cause().restore();
      py::raise_from(policy, f.what());
    } catch (const gs::error& e) {
      PyErr_SetString(e.id() == gs::error_id::parse ? parse : invalid, e.what());
    }
  });
}

}  // namespace gpusched_python

PYBIND11_MODULE(_gpusched, m) {
  m.doc() =
      "gpusched: GPU-cluster scheduling policies (ordering, admission, packing, placement, "
      "preemption), their pipeline, and trace replay, from the header-only C++ library.";
  m.attr("__version__") = std::to_string(GPUSCHED_VERSION_MAJOR) + "." +
                          std::to_string(GPUSCHED_VERSION_MINOR) + "." +
                          std::to_string(GPUSCHED_VERSION_PATCH);
  gpusched_python::init_errors(m);
  gpusched_python::init_model(m);
  gpusched_python::init_pipeline(m);
  gpusched_python::init_policies(m);
  gpusched_python::init_replay(m);
  gpusched_python::init_fgd(m);
}
