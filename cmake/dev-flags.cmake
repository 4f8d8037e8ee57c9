# gpusched_dev_flags: the warning set for gpusched's own tests, examples and benchmarks.
#
# Private to this build: it is neither installed nor exported, and the library target never
# links it, so consumers of gpusched::gpusched inherit no warning flags. -Werror comes from
# CMAKE_COMPILE_WARNING_AS_ERROR (set by the developer presets), not from here.
include_guard(GLOBAL)

add_library(gpusched_dev_flags INTERFACE)

set(_gpusched_warnings
    -Wall
    -Wextra
    -Wpedantic
    -Wconversion
    -Wsign-conversion
    -Wshadow
    -Wold-style-cast
    -Wnon-virtual-dtor)

target_compile_options(
  gpusched_dev_flags
  INTERFACE "$<$<CXX_COMPILER_ID:GNU,Clang,AppleClang>:${_gpusched_warnings}>"
            # Deeper concept diagnostics: show which requirement failed, not just "not satisfied".
            "$<$<CXX_COMPILER_ID:GNU>:-fconcepts-diagnostics-depth=10>")
