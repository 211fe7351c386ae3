# Fails when a runtime kernel's definition names its parameters differently
# from its declaration in the generated KernelClasses.inc. Two parameters of
# one type swapped in HPSRTOps.td (a gemm's m and n) still compile against
# the old definition; their names do not match, and clang-tidy's
# readability-inconsistent-declaration-parameter-name says where.
#   cmake -DCLANG_TIDY=... -DSOURCES="a.cpp;b.cpp" -DINCLUDES="dir;dir"
#         -P CheckKernelParameterNames.cmake
if(NOT CLANG_TIDY)
  message(FATAL_ERROR "clang-tidy was not found when the build was "
                      "configured: run scripts/setup.sh, then cmake again")
endif()
set(include_flags)
foreach(dir IN LISTS INCLUDES)
  list(APPEND include_flags "-I${dir}")
endforeach()
set(failed)
foreach(source IN LISTS SOURCES)
  execute_process(
    COMMAND ${CLANG_TIDY} --quiet
      --checks=-*,readability-inconsistent-declaration-parameter-name
      --warnings-as-errors=* ${source} -- -std=c++17 -fopenmp ${include_flags}
    RESULT_VARIABLE status
    OUTPUT_VARIABLE output
    ERROR_VARIABLE output)
  if(NOT status EQUAL 0)
    message("${output}")
    list(APPEND failed ${source})
  endif()
endforeach()
if(failed)
  message(FATAL_ERROR "kernel parameter names differ from their "
                      "declarations (or clang-tidy failed) in: ${failed}")
endif()
list(LENGTH SOURCES checked)
message("kernel parameter names: ${checked} sources match KernelClasses.inc")
