# check-named-tests.cmake: every CTest test that the documentation names is registered.
#   cmake -DCTEST=<ctest> -DBUILD_DIR=<build dir> -DSOURCE_DIR=<source dir> -P check-named-tests.cmake
#
# Reads every Markdown file of the source tree (build trees and .git excluded) and collects the
# words that look like test names: "<prefix>.<name>" where <prefix> is the first part of a test
# registered in this build that is not a doctest case (experiment, replay, package, example,
# compile_fail, python, fuzz, ...), and the single-word tests (slurm-live, odr, layering, readme).
# A word holding "<...>" or "*" is a pattern (`example.<name>`, `package.strict.*`) that must
# match at least one test. A named test that `ctest -N` does not list fails the check, with the
# file and line that names it. File names (`pipeline.hpp`, `run.json`) are not test names.
cmake_minimum_required(VERSION 3.25)
foreach(_var IN ITEMS CTEST BUILD_DIR SOURCE_DIR)
  if(NOT DEFINED ${_var})
    message(FATAL_ERROR "check-named-tests.cmake: -D${_var}=... is required")
  endif()
endforeach()

execute_process(
  COMMAND "${CTEST}" -N
  WORKING_DIRECTORY "${BUILD_DIR}"
  RESULT_VARIABLE _rc
  OUTPUT_VARIABLE _listing
  ERROR_VARIABLE _listing)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "ctest -N in ${BUILD_DIR} failed (${_rc}):\n${_listing}")
endif()

string(REPLACE "\n" ";" _lines "${_listing}")
set(_tests "")
set(_prefixes "")
foreach(_line IN LISTS _lines)
  if(_line MATCHES "^ *Test +#[0-9]+: (.+)$")
    set(_name "${CMAKE_MATCH_1}")
    list(APPEND _tests "${_name}")
    # doctest cases are "<area>.<Case name with spaces>"; the documentation names programs' tests.
    if(_name MATCHES "^([a-z_]+)\\.[^ ]+$")
      list(APPEND _prefixes "${CMAKE_MATCH_1}")
    endif()
  endif()
endforeach()
list(REMOVE_DUPLICATES _prefixes)
list(LENGTH _tests _count)
if(_count EQUAL 0)
  message(FATAL_ERROR "ctest -N in ${BUILD_DIR} lists no test")
endif()
# Tests registered only by another preset (the fuzz preset's fuzz.*) are not checked here.
set(_known_elsewhere fuzz)

file(GLOB_RECURSE _docs LIST_DIRECTORIES false "${SOURCE_DIR}/*.md")
list(FILTER _docs EXCLUDE REGEX "^${SOURCE_DIR}/(build|\\.git)/")
list(FILTER _docs EXCLUDE REGEX "/_deps/")

set(_file_ext "\\.(hpp|cpp|h|md|csv|json|txt|py|sh|png|go|conf|lua|cmake|yaml|yml|svg)$")
set(_checked 0)
set(_missing "")
foreach(_doc IN LISTS _docs)
  file(RELATIVE_PATH _rel "${SOURCE_DIR}" "${_doc}")
  file(STRINGS "${_doc}" _doc_lines)
  set(_lineno 0)
  foreach(_text IN LISTS _doc_lines)
    math(EXPR _lineno "${_lineno} + 1")
    # The single-word tests, named in backquotes.
    string(REGEX MATCHALL "`(odr|layering|readme|slurm-live)`" _singles "${_text}")
    foreach(_quoted IN LISTS _singles)
      string(REPLACE "`" "" _word "${_quoted}")
      math(EXPR _checked "${_checked} + 1")
      if(NOT _word IN_LIST _tests)
        list(APPEND _missing "${_rel}:${_lineno}: names test '${_word}', which is not registered")
      endif()
    endforeach()
    # Words: letters, digits and . _ - < > *; the separators are everything else.
    string(REGEX MATCHALL "[A-Za-z0-9_.<>*-]+" _words "${_text}")
    foreach(_word IN LISTS _words)
      string(REGEX REPLACE "[.]+$" "" _word "${_word}") # a sentence's full stop
      set(_is_test FALSE)
      if(_word MATCHES "^([a-z_]+)\\.(.+)$")
        set(_prefix "${CMAKE_MATCH_1}")
        if(_prefix IN_LIST _prefixes AND NOT _word MATCHES "${_file_ext}")
          set(_is_test TRUE)
        elseif(_prefix IN_LIST _known_elsewhere)
          continue()
        endif()
      endif()
      if(NOT _is_test)
        continue()
      endif()
      math(EXPR _checked "${_checked} + 1")
      if(_word MATCHES "[<*]")
        # A pattern: escape regex characters, then <...> and * stand for any text.
        string(REGEX REPLACE "([][+.()^$?|\\\\])" "\\\\\\1" _regex "${_word}")
        string(REGEX REPLACE "<[^>]*>" ".+" _regex "${_regex}")
        string(REPLACE "*" ".*" _regex "${_regex}")
        set(_found FALSE)
        foreach(_t IN LISTS _tests)
          if(_t MATCHES "^${_regex}$")
            set(_found TRUE)
            break()
          endif()
        endforeach()
      elseif(_word IN_LIST _tests)
        set(_found TRUE)
      else()
        set(_found FALSE)
      endif()
      if(NOT _found)
        list(APPEND _missing "${_rel}:${_lineno}: names test '${_word}', which is not registered")
      endif()
    endforeach()
  endforeach()
endforeach()

if(_missing)
  list(JOIN _missing "\n" _report)
  message(FATAL_ERROR "tests named in the documentation but not registered in ${BUILD_DIR}:\n"
                      "${_report}")
endif()
message(STATUS "${_checked} test names in the documentation, all registered (${_count} tests)")
