# compile-fail.cmake: one compile-fail test (tests/compile_fail/README.md).
#   cmake -DCXX=<compiler> -DSRC=<file.cpp> "-DINCLUDES=<dir;dir>" -P compile-fail.cmake
# 1. SRC compiled with -DGPUSCHED_FIXED must succeed (the mistake is what fails, nothing else);
# 2. SRC compiled as is must fail, with compiler output matching SRC's `// expect: REGEX` line.
foreach(_var IN ITEMS CXX SRC INCLUDES)
  if(NOT DEFINED ${_var})
    message(FATAL_ERROR "compile-fail.cmake: -D${_var}=... is required")
  endif()
endforeach()

file(STRINGS "${SRC}" _expect REGEX "^// expect: " LIMIT_COUNT 1)
if(NOT _expect)
  message(FATAL_ERROR "${SRC}: no '// expect: REGEX' line")
endif()
string(REGEX REPLACE "^// expect: " "" _regex "${_expect}")

set(_flags -std=c++20 -fsyntax-only)
foreach(_dir IN LISTS INCLUDES)
  list(APPEND _flags "-I${_dir}")
endforeach()

execute_process(
  COMMAND "${CXX}" ${_flags} -DGPUSCHED_FIXED "${SRC}"
  RESULT_VARIABLE _fixed_rc
  OUTPUT_VARIABLE _fixed_out
  ERROR_VARIABLE _fixed_out)
if(NOT _fixed_rc EQUAL 0)
  message(FATAL_ERROR "${SRC} with -DGPUSCHED_FIXED must compile but failed:\n${_fixed_out}")
endif()

execute_process(
  COMMAND "${CXX}" ${_flags} "${SRC}"
  RESULT_VARIABLE _rc
  OUTPUT_VARIABLE _out
  ERROR_VARIABLE _out)
if(_rc EQUAL 0)
  message(FATAL_ERROR "${SRC} compiled, but it must fail with: ${_regex}")
endif()
if(NOT _out MATCHES "${_regex}")
  message(FATAL_ERROR "${SRC} failed, but without the expected message\n"
                      "expected (regex): ${_regex}\ncompiler output:\n${_out}")
endif()
message(STATUS "${SRC}: fails as expected: ${CMAKE_MATCH_0}")
