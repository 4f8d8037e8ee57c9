# Runs Doxygen and fails on any warning (cmake -P; arguments from docs/CMakeLists.txt):
# prints each warning and their count, removes the HTML so that a failed build is not taken for
# a good one on the next run, and exits non-zero.
file(REMOVE "${WARNINGS}")
execute_process(COMMAND "${DOXYGEN}" "${DOXYFILE}" RESULT_VARIABLE rc)
set(warnings "")
if(EXISTS "${WARNINGS}")
  file(STRINGS "${WARNINGS}" warnings)
endif()
list(LENGTH warnings count)
if(count GREATER 0 OR NOT rc EQUAL 0)
  foreach(line IN LISTS warnings)
    message("${line}")
  endforeach()
  file(REMOVE_RECURSE "${HTML}")
  message(FATAL_ERROR "gpusched docs: ${count} Doxygen warning line(s), exit status ${rc} "
                      "(log: ${WARNINGS}); the reference has none by rule")
endif()
message(STATUS "gpusched docs: 0 Doxygen warnings; open ${HTML}/index.html")
