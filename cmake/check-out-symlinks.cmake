# Symbolic links planted inside --out are not written through.
#
#   cmake -DPROGRAM=<exe> -DARGS=<arg;arg...> -DOUT=<dir> -DPARTIAL=<relative path> [-DLINKED_DIR=<relative path>] -P check-out-symlinks.cmake
#
# Runs the program twice on a fresh OUT. First with OUT/PARTIAL (a temporary output name, such as
# `default/jobs.csv.partial`) a symbolic link to a file outside OUT: the run must succeed and the
# outside file must be unchanged. Then, when LINKED_DIR is given, with OUT/LINKED_DIR (a label's
# folder) a symbolic link to a folder outside OUT: the run must fail with a message naming the
# link, and nothing may appear in the outside folder. ARGS must not contain --out (added here).
cmake_minimum_required(VERSION 3.25)

foreach(_var IN ITEMS PROGRAM OUT PARTIAL)
  if(NOT DEFINED ${_var} OR "${${_var}}" STREQUAL "")
    message(FATAL_ERROR "check-out-symlinks.cmake: -D${_var}=<...> is required")
  endif()
endforeach()

set(_outside "${OUT}-outside")
file(REMOVE_RECURSE "${OUT}" "${_outside}")
file(MAKE_DIRECTORY "${_outside}")
file(WRITE "${_outside}/precious.txt" "precious\n")

get_filename_component(_partial_dir "${OUT}/${PARTIAL}" DIRECTORY)
file(MAKE_DIRECTORY "${_partial_dir}")
file(CREATE_LINK "${_outside}/precious.txt" "${OUT}/${PARTIAL}" SYMBOLIC)
execute_process(COMMAND "${PROGRAM}" ${ARGS} --out "${OUT}" RESULT_VARIABLE _rc
                OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "the run failed (${_rc}):\n${_out}\n${_err}")
endif()
file(READ "${_outside}/precious.txt" _text)
if(NOT _text STREQUAL "precious\n")
  message(FATAL_ERROR "a file outside --out was overwritten through ${OUT}/${PARTIAL}")
endif()
string(REGEX REPLACE "\\.partial$" "" _final "${OUT}/${PARTIAL}")
if(IS_SYMLINK "${_final}" OR NOT EXISTS "${_final}")
  message(FATAL_ERROR "${_final} should be a plain file written by the run")
endif()

if(DEFINED LINKED_DIR AND NOT "${LINKED_DIR}" STREQUAL "")
  file(REMOVE_RECURSE "${OUT}")
  file(MAKE_DIRECTORY "${OUT}" "${_outside}/dir")
  file(CREATE_LINK "${_outside}/dir" "${OUT}/${LINKED_DIR}" SYMBOLIC)
  execute_process(COMMAND "${PROGRAM}" ${ARGS} --out "${OUT}" RESULT_VARIABLE _rc
                  OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
  if(_rc EQUAL 0 OR NOT _rc MATCHES "^[0-9]+$" OR _rc GREATER_EQUAL 126)
    message(FATAL_ERROR "a symbolic link as a label's folder: expected a clean refusal, got "
                        "${_rc}:\n${_out}\n${_err}")
  endif()
  if(NOT "${_err}${_out}" MATCHES "symbolic link")
    message(FATAL_ERROR "the message does not name the symbolic link:\n${_err}")
  endif()
  file(GLOB _written "${_outside}/dir/*")
  if(_written)
    message(FATAL_ERROR "files were written outside --out: ${_written}")
  endif()
endif()
file(REMOVE_RECURSE "${OUT}" "${_outside}")
