# run-readme-install.cmake: runs the README's install recipe as a user pastes it.
#   cmake -DSOURCE_DIR=<source dir> -DBUILD=<dir> -DPREFIX=<dir> -P run-readme-install.cmake
#
# Takes the ```sh block that follows "Install it once" in README.md, replaces its build
# directory (build/install) with BUILD and its prefix ("$HOME/.local") with PREFIX, and runs
# each of its lines with sh from the source directory, in order, stopping at the first that
# fails. Nothing is built before it: the recipe must install with no program built.
foreach(_var IN ITEMS SOURCE_DIR BUILD PREFIX)
  if(NOT DEFINED ${_var})
    message(FATAL_ERROR "run-readme-install.cmake: -D${_var}=... is required")
  endif()
endforeach()

file(READ "${SOURCE_DIR}/README.md" _readme)
if(NOT _readme MATCHES "Install it once[^\n]*\n+```sh\n([^`]*)```")
  message(FATAL_ERROR "README.md: no ```sh block after 'Install it once'")
endif()
set(_recipe "${CMAKE_MATCH_1}")
foreach(_needed IN ITEMS "build/install" "\"$HOME/.local\"")
  string(FIND "${_recipe}" "${_needed}" _at)
  if(_at EQUAL -1)
    message(FATAL_ERROR "README.md's install recipe no longer holds ${_needed}; update "
                        "cmake/run-readme-install.cmake with it:\n${_recipe}")
  endif()
endforeach()
string(REPLACE "build/install" "${BUILD}" _recipe "${_recipe}")
string(REPLACE "\"$HOME/.local\"" "\"${PREFIX}\"" _recipe "${_recipe}")

file(REMOVE_RECURSE "${BUILD}" "${PREFIX}")
string(REPLACE "\n" ";" _commands "${_recipe}")
foreach(_command IN LISTS _commands)
  if(_command STREQUAL "")
    continue()
  endif()
  message(STATUS "$ ${_command}")
  execute_process(COMMAND sh -c "${_command}" WORKING_DIRECTORY "${SOURCE_DIR}"
                  RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "README install recipe: '${_command}' failed (${_rc}):\n${_out}")
  endif()
endforeach()
if(NOT EXISTS "${PREFIX}/include/gpusched/gpusched.hpp")
  message(FATAL_ERROR "README install recipe ran, but ${PREFIX}/include/gpusched/gpusched.hpp "
                      "is not installed")
endif()
message(STATUS "README install recipe: installed into ${PREFIX}")
