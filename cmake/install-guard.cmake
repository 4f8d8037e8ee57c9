# gpusched_install_program_component(<target> <component> <what>): install rules for a program
# or module that is not part of the default install (the headers and the CMake package).
#
# The files go to <component> only, with EXCLUDE_FROM_ALL, so `cmake --install <build>` never
# needs them built. `cmake --install <build> --component <component>` on a build tree where
# <target> was not built stops with a message that says how to build it, instead of CMake's
# "file INSTALL cannot find". Call it before the component's own install() rules: the check is
# an install(CODE) rule, and install rules run in the order they are declared.
include_guard(GLOBAL)

function(gpusched_install_program_component target component what)
  install(
    CODE "if(NOT EXISTS \"$<TARGET_FILE:${target}>\")
  message(FATAL_ERROR \"gpusched: the install component '${component}' (${what}) was not built: \"
                      \"run 'cmake --build \\\"${CMAKE_BINARY_DIR}\\\" --target ${target}' first, \"
                      \"then install it again; 'cmake --install' without --component installs \"
                      \"the headers and the CMake package only\")
endif()"
    COMPONENT "${component}"
    EXCLUDE_FROM_ALL)
endfunction()
