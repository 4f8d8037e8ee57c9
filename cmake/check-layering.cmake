# Layering check for the headers under include/gpusched/ (run as a CTest test, "layering"):
#
#   cmake -DGPUSCHED_INCLUDE_DIR=<source>/include -P cmake/check-layering.cmake
#
# It reads every `#include "gpusched/..."` line of every header and fails (non-zero exit, one
# line per violation naming file:line, the include and the rule) when:
#
# 1. a header includes a header of a higher layer, or of another area of its own layer. The
#    layers, lowest first (an area may include its own headers and those of lower layers):
#
#      0  version.hpp
#      1  config.hpp
#      2  core/  detail/         vocabulary: ids, quantities, time, errors; small containers
#      3  resource/              GPU models and catalogs, task requests
#      4  cluster/               the cluster and its allocations
#      5  workload/  topology/   jobs, ledger, quotas, history; interconnects and fabrics
#      6  policy/  trace/  check/  scheduling policies; trace loaders; the invariant checker
#      7  pipeline/              composes policies (and names the defaults)
#      8  sim/  slurm/           the simulator; the Slurm bridge's mapping (needs nlohmann_json)
#      9  metrics/               run metrics and reports
#     10  replay/                trace replay by composition name (registry + sim + metrics)
#     11  gpusched.hpp           the umbrella header
#
#    A header of an area missing from this table fails too: place the new area here.
# 2. a policy family's model header (policy/<family>/..., family one of admission, ordering,
#    packing, placement, preemption) includes another family's header. Shared pieces live in
#    policy/*.hpp (concepts, decisions, context) and policy/detail/, which in turn must not
#    include any family's header.
# 3. a header of sim/ includes a policy family header (policy/<family>/): the simulator reaches
#    policies through pipeline/ only.

cmake_minimum_required(VERSION 3.25)

if(NOT GPUSCHED_INCLUDE_DIR)
  get_filename_component(GPUSCHED_INCLUDE_DIR "${CMAKE_CURRENT_LIST_DIR}/../include" ABSOLUTE)
endif()
set(_root "${GPUSCHED_INCLUDE_DIR}/gpusched")
if(NOT IS_DIRECTORY "${_root}")
  message(FATAL_ERROR "check-layering: ${_root} is not a directory")
endif()

set(_layer_version.hpp 0)
set(_layer_config.hpp 1)
set(_layer_core 2)
set(_layer_detail 2)
set(_layer_resource 3)
set(_layer_cluster 4)
set(_layer_workload 5)
set(_layer_topology 5)
set(_layer_policy 6)
set(_layer_trace 6)
set(_layer_check 6)
set(_layer_pipeline 7)
set(_layer_sim 8)
set(_layer_slurm 8)
set(_layer_metrics 9)
set(_layer_replay 10)
set(_layer_gpusched.hpp 11)
set(_families admission ordering packing placement preemption)

# The area of a path relative to include/gpusched/: its first directory, or the file name of a
# top-level header.
function(_area_of path out)
  string(REGEX MATCH "^[^/]+" _a "${path}")
  set(${out} "${_a}" PARENT_SCOPE)
endfunction()

# The policy family of a path relative to include/gpusched/ ("" when not in a family).
function(_family_of path out)
  set(_f "")
  if(path MATCHES "^policy/([^/]+)/")
    if(CMAKE_MATCH_1 IN_LIST _families)
      set(_f "${CMAKE_MATCH_1}")
    endif()
  endif()
  set(${out} "${_f}" PARENT_SCOPE)
endfunction()

file(GLOB_RECURSE _headers LIST_DIRECTORIES false RELATIVE "${_root}" "${_root}/*.hpp")
list(SORT _headers)
set(_violations 0)
set(_checked 0)

foreach(_header IN LISTS _headers)
  _area_of("${_header}" _from_area)
  _family_of("${_header}" _from_family)
  if(NOT DEFINED _layer_${_from_area})
    message("include/gpusched/${_header}:1: area '${_from_area}' is not in the layer table "
            "of cmake/check-layering.cmake: add it there")
    math(EXPR _violations "${_violations} + 1")
    continue()
  endif()
  set(_from_layer ${_layer_${_from_area}})

  file(READ "${_root}/${_header}" _text)
  set(_text "\n${_text}") # so that every include line starts with "\n"
  set(_line 0)
  while(TRUE)
    string(FIND "${_text}" "\n#include \"gpusched/" _pos)
    if(_pos EQUAL -1)
      break()
    endif()
    string(SUBSTRING "${_text}" 0 ${_pos} _before)
    string(REGEX MATCHALL "\n" _newlines "${_before}")
    list(LENGTH _newlines _n)
    math(EXPR _line "${_line} + ${_n} + 1")
    math(EXPR _pos "${_pos} + 1")
    string(SUBSTRING "${_text}" ${_pos} -1 _text)
    string(REGEX MATCH "^#include \"gpusched/([^\"]+)\"" _include "${_text}")
    set(_to "${CMAKE_MATCH_1}")
    string(LENGTH "${_include}" _skip)
    string(SUBSTRING "${_text}" ${_skip} -1 _text)
    math(EXPR _checked "${_checked} + 1")

    set(_where "include/gpusched/${_header}:${_line}: includes gpusched/${_to}")
    _area_of("${_to}" _to_area)
    _family_of("${_to}" _to_family)
    if(NOT DEFINED _layer_${_to_area})
      message("${_where}: area '${_to_area}' is not in the layer table of "
              "cmake/check-layering.cmake")
      math(EXPR _violations "${_violations} + 1")
      continue()
    endif()
    set(_to_layer ${_layer_${_to_area}})

    if(_to_layer GREATER _from_layer)
      message("${_where}: upward include (rule 1: ${_from_area} is layer ${_from_layer}, "
              "${_to_area} is layer ${_to_layer}; a header includes only its own area and "
              "lower layers)")
      math(EXPR _violations "${_violations} + 1")
    elseif(_to_layer EQUAL _from_layer AND NOT _to_area STREQUAL _from_area)
      message("${_where}: sideways include (rule 1: ${_from_area} and ${_to_area} are both "
              "layer ${_from_layer}; move the shared piece to a lower layer)")
      math(EXPR _violations "${_violations} + 1")
    endif()

    if(_from_area STREQUAL "policy" AND _to_family AND NOT _to_family STREQUAL _from_family)
      if(_from_family)
        message("${_where}: cross-family include (rule 2: the ${_from_family} family includes "
                "the ${_to_family} family's header; shared pieces go to policy/*.hpp or "
                "policy/detail/)")
      else()
        message("${_where}: shared policy header includes a family header (rule 2: policy/*.hpp "
                "and policy/detail/ must not depend on the ${_to_family} family)")
      endif()
      math(EXPR _violations "${_violations} + 1")
    endif()

    if(_from_area STREQUAL "sim" AND _to_family)
      message("${_where}: the simulator includes a policy model (rule 3: sim/ reaches policies "
              "through pipeline/ only)")
      math(EXPR _violations "${_violations} + 1")
    endif()
  endwhile()
endforeach()

list(LENGTH _headers _n_headers)
if(_violations GREATER 0)
  message(FATAL_ERROR "check-layering: ${_violations} violation(s) in ${_n_headers} headers "
                      "(${_checked} includes); the rules are at the top of "
                      "cmake/check-layering.cmake")
endif()
message("check-layering: ${_n_headers} headers, ${_checked} includes of gpusched headers, "
        "no violation")
