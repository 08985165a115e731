# Compiles one source with -fsyntax-only and checks the outcome; run as a test with `cmake -P`.
#
#   cmake -DCOMPILER=<c++> -DINCLUDE_DIR=<include> -DSOURCE=<file.cpp> -DEXPECTED=<substring> -P expect_failure.cmake
#       passes when the compilation FAILS and its diagnostics contain EXPECTED;
#   cmake ... -DEXPECT_SUCCESS=ON -P expect_failure.cmake
#       passes when the compilation succeeds (the control case that proves the harness works).
foreach(var COMPILER INCLUDE_DIR SOURCE)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "expect_failure.cmake: -D${var}=... is required")
  endif()
endforeach()

execute_process(
  COMMAND "${COMPILER}" -std=c++20 -fsyntax-only "-I${INCLUDE_DIR}" "${SOURCE}"
  RESULT_VARIABLE result
  OUTPUT_VARIABLE output
  ERROR_VARIABLE diagnostics)

if(EXPECT_SUCCESS)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "${SOURCE} should compile but failed (${result}):\n${diagnostics}")
  endif()
  message(STATUS "${SOURCE} compiles, as expected")
  return()
endif()

if(NOT DEFINED EXPECTED)
  message(FATAL_ERROR "expect_failure.cmake: -DEXPECTED=... is required")
endif()
if(result EQUAL 0)
  message(FATAL_ERROR "${SOURCE} compiled, but it must fail with \"${EXPECTED}\"")
endif()
string(FIND "${diagnostics}${output}" "${EXPECTED}" position)
if(position EQUAL -1)
  message(FATAL_ERROR "${SOURCE} failed, but its diagnostics do not contain \"${EXPECTED}\":\n${diagnostics}")
endif()
message(STATUS "${SOURCE} fails with \"${EXPECTED}\", as expected")
