# Run a program twice, with --jobs 1 and with --jobs JOBS, each into its own --out folder, and
# check that both print the same standard output and write the same files, byte for byte
# (run.json aside: it records the command line and the start time).
#
#   cmake -DPROGRAM=<exe> -DARGS=<arg;arg...> -DOUT=<dir> [-DJOBS=2] -P compare-jobs.cmake
cmake_minimum_required(VERSION 3.25)
if(NOT DEFINED JOBS)
  set(JOBS 2)
endif()
file(REMOVE_RECURSE "${OUT}")
foreach(_n 1 ${JOBS})
  execute_process(COMMAND "${PROGRAM}" ${ARGS} --jobs ${_n} --out "${OUT}/jobs-${_n}"
                  RESULT_VARIABLE _rc OUTPUT_VARIABLE _out_${_n} ERROR_VARIABLE _err)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "compare-jobs.cmake: --jobs ${_n}: exit ${_rc}\n${_out_${_n}}\n${_err}")
  endif()
  # the output folder is named in the printed text
  string(REPLACE "${OUT}/jobs-${_n}" "OUT" _out_${_n} "${_out_${_n}}")
endforeach()
if(NOT _out_1 STREQUAL _out_${JOBS})
  message(FATAL_ERROR "compare-jobs.cmake: standard output differs:\n${_out_1}\n---\n${_out_${JOBS}}")
endif()
file(GLOB_RECURSE _files1 RELATIVE "${OUT}/jobs-1" "${OUT}/jobs-1/*")
file(GLOB_RECURSE _filesn RELATIVE "${OUT}/jobs-${JOBS}" "${OUT}/jobs-${JOBS}/*")
if(NOT _files1 STREQUAL _filesn)
  message(FATAL_ERROR "compare-jobs.cmake: different files:\n${_files1}\n---\n${_filesn}")
endif()
set(_compared 0)
foreach(_f IN LISTS _files1)
  if(_f STREQUAL "run.json")
    continue()
  endif()
  execute_process(COMMAND "${CMAKE_COMMAND}" -E compare_files "${OUT}/jobs-1/${_f}"
                          "${OUT}/jobs-${JOBS}/${_f}" RESULT_VARIABLE _same)
  if(NOT _same EQUAL 0)
    message(FATAL_ERROR "compare-jobs.cmake: ${_f} differs between --jobs 1 and --jobs ${JOBS}")
  endif()
  math(EXPR _compared "${_compared} + 1")
endforeach()
if(_compared EQUAL 0)
  message(FATAL_ERROR "compare-jobs.cmake: no output file to compare")
endif()
message("compare-jobs.cmake: standard output and ${_compared} files identical")
