# Run a program and compare its standard output with a golden file, byte for byte.
#
#   cmake -DPROGRAM=<exe> -DGOLDEN=<file> [-DACTUAL=<file>] [-DARGS=<arg;arg...>]
#         -P compare-output.cmake
#
# Fails if the program cannot run or exits non-zero, if the golden file is missing, or if the
# output differs in any byte (trailing newline included). On a difference it prints the first
# differing line of each, diff style. If ACTUAL is given, the program's standard output is
# written there, to review and, if right, copy over the golden file.
cmake_minimum_required(VERSION 3.25)

foreach(_var IN ITEMS PROGRAM GOLDEN)
  if(NOT DEFINED ${_var} OR "${${_var}}" STREQUAL "")
    message(FATAL_ERROR "compare-output.cmake: -D${_var}=<...> is required")
  endif()
endforeach()

# Standard output is echoed as well as captured, so "ctest -V" shows what the program printed.
execute_process(
  COMMAND "${PROGRAM}" ${ARGS}
  OUTPUT_VARIABLE _actual ECHO_OUTPUT_VARIABLE
  RESULT_VARIABLE _result)

set(_actual_name "actual output")
if(DEFINED ACTUAL AND NOT "${ACTUAL}" STREQUAL "")
  file(WRITE "${ACTUAL}" "${_actual}")
  set(_actual_name "${ACTUAL}")
endif()

if(NOT "${_result}" STREQUAL "0")
  message(FATAL_ERROR "${PROGRAM} did not exit with 0: ${_result}")
endif()

if(NOT EXISTS "${GOLDEN}")
  if(_actual_name STREQUAL "actual output")
    message(FATAL_ERROR "golden file ${GOLDEN} does not exist")
  endif()
  message(FATAL_ERROR "golden file ${GOLDEN} does not exist; the output is in ${_actual_name}")
endif()

file(READ "${GOLDEN}" _golden)
if("${_actual}" STREQUAL "${_golden}")
  return()
endif()

# Walk both texts line by line; string(FIND)/SUBSTRING keep ';', '[' and ']' intact, which
# CMake lists would not.
set(_line 1)
set(_g "${_golden}")
set(_a "${_actual}")
while(TRUE)
  foreach(_side IN ITEMS g a)
    string(FIND "${_${_side}}" "\n" _nl)
    string(LENGTH "${_${_side}}" _len)
    if(_len EQUAL 0)
      set(_${_side}_text "")
      set(_${_side}_state "eof")
    elseif(_nl EQUAL -1)
      set(_${_side}_text "${_${_side}}")
      set(_${_side}_state "no-newline")
      set(_${_side} "")
    else()
      string(SUBSTRING "${_${_side}}" 0 ${_nl} _${_side}_text)
      math(EXPR _next "${_nl} + 1")
      string(SUBSTRING "${_${_side}}" ${_next} -1 _${_side})
      set(_${_side}_state "line")
    endif()
  endforeach()
  if(NOT "${_g_text}" STREQUAL "${_a_text}" OR NOT _g_state STREQUAL _a_state
     OR _g_state STREQUAL "eof")
    break()
  endif()
  math(EXPR _line "${_line} + 1")
endwhile()

set(_diff "--- ${GOLDEN}\n+++ ${_actual_name}\n@@ first difference at line ${_line} @@\n")
foreach(_side IN ITEMS g a)
  if(_side STREQUAL "g")
    set(_mark "-")
  else()
    set(_mark "+")
  endif()
  if(_${_side}_state STREQUAL "eof")
    string(APPEND _diff "${_mark}<end of file>\n")
  else()
    string(APPEND _diff "${_mark}${_${_side}_text}\n")
    if(_${_side}_state STREQUAL "no-newline")
      string(APPEND _diff "\\ No newline at end of file\n")
    endif()
  endif()
endforeach()
message(NOTICE "${_diff}")
message(FATAL_ERROR "output differs from golden file ${GOLDEN} (first at line ${_line})")
