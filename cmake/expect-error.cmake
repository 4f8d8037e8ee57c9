# Run a program on a bad input and check that it refuses it cleanly.
#
#   cmake -DPROGRAM=<exe> -DARGS=<arg;arg...> -DEXPECT=<regex> [-DEXIT=<code>]
#         [-DMEMORY_KB=<n>] [-DNO_FILES_UNDER=<dir>] -P expect-error.cmake
#
# Passes when the program exits with a non-zero code (EXIT when given) that is not a signal (no
# crash, abort or sanitizer report, which end with a signal or code >= 126 here) and its
# standard error or output matches EXPECT. MEMORY_KB runs it under `ulimit -v` (out-of-memory
# tests; not with sanitizers). NO_FILES_UNDER fails the test if that directory exists afterwards
# (nothing was written outside --out).
cmake_minimum_required(VERSION 3.25)

foreach(_var IN ITEMS PROGRAM EXPECT)
  if(NOT DEFINED ${_var} OR "${${_var}}" STREQUAL "")
    message(FATAL_ERROR "expect-error.cmake: -D${_var}=<...> is required")
  endif()
endforeach()

if(DEFINED NO_FILES_UNDER AND NOT "${NO_FILES_UNDER}" STREQUAL "")
  file(REMOVE_RECURSE "${NO_FILES_UNDER}")
endif()

if(DEFINED MEMORY_KB AND NOT "${MEMORY_KB}" STREQUAL "")
  set(_command sh -c "ulimit -v ${MEMORY_KB} && exec \"$0\" \"$@\"" "${PROGRAM}" ${ARGS})
else()
  set(_command "${PROGRAM}" ${ARGS})
endif()
execute_process(
  COMMAND ${_command}
  OUTPUT_VARIABLE _out
  ERROR_VARIABLE _err
  RESULT_VARIABLE _result)
message("exit: ${_result}\nstdout:\n${_out}\nstderr:\n${_err}")

if(NOT _result MATCHES "^[0-9]+$" OR _result GREATER_EQUAL 126)
  message(FATAL_ERROR "expect-error.cmake: the program crashed or was killed (${_result})")
endif()
if("${_err}${_out}" MATCHES "Sanitizer|runtime error:|terminate called")
  message(FATAL_ERROR "expect-error.cmake: a sanitizer report or std::terminate")
endif()
if(_result EQUAL 0)
  message(FATAL_ERROR "expect-error.cmake: the program accepted the bad input (exit 0)")
endif()
if(DEFINED EXIT AND NOT "${EXIT}" STREQUAL "" AND NOT _result EQUAL EXIT)
  message(FATAL_ERROR "expect-error.cmake: exit code ${_result}, expected ${EXIT}")
endif()
if(NOT "${_err}${_out}" MATCHES "${EXPECT}")
  message(FATAL_ERROR "expect-error.cmake: the message does not match '${EXPECT}'")
endif()
if(DEFINED NO_FILES_UNDER AND NOT "${NO_FILES_UNDER}" STREQUAL "" AND EXISTS "${NO_FILES_UNDER}")
  message(FATAL_ERROR "expect-error.cmake: ${NO_FILES_UNDER} was written")
endif()
