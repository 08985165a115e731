# Helpers shared by the build: test registration and the CUDA switch.

# Which tests a build compiles (LOCKSTEP_TESTS, the top-level CMakeLists.txt): "all", or one of two
# sets that together are all. "sanitized": the unit tests of the layers (core, simd, model, formulation,
# method, stepper, study, io, lyapunov) and the reliability tests that run in-process, which
# scripts/sanitize.sh builds and runs under ASan + UBSan + LSan; "unsanitized": every other test, the
# end-to-end, backend, model-file, Python, install and golden ones. The test command builds the first
# set in the sanitizers' build and the second in its own, so each test compiles once (scripts/test.sh
# says why). A test of a layer label that cannot be in the first set says why at its call: UNSANITIZED.
set(lockstep_sanitized_labels core simd model formulation method stepper study io lyapunov reliability)

# lockstep_test_in_this_build(<out> <sanitized>): whether this build compiles and registers a test of
# the set <sanitized> (TRUE: the sanitized set) says; for the add_test() calls beside lockstep_add_test.
function(lockstep_test_in_this_build out sanitized)
  if(LOCKSTEP_TESTS STREQUAL "all" OR (sanitized AND LOCKSTEP_TESTS STREQUAL "sanitized")
     OR (NOT sanitized AND LOCKSTEP_TESTS STREQUAL "unsanitized"))
    set(${out} TRUE PARENT_SCOPE)
  else()
    set(${out} FALSE PARENT_SCOPE)
  endif()
endfunction()

# lockstep_test_program(<target> <sanitized> [RUN_BOUND]): a program that tests of that set run (a
# helper, or the test itself): built with them (lockstep_tests), and left out of a build of the other
# set. RUN_BOUND: its run, not its compilation, is what -O0 would lengthen, so where the tests compile
# at -O0 (tests/CMakeLists.txt) it compiles at -O1.
function(lockstep_test_program target sanitized)
  cmake_parse_arguments(ARG "RUN_BOUND" "" "" ${ARGN})
  lockstep_test_in_this_build(wanted ${sanitized})
  if(wanted)
    add_dependencies(lockstep_tests ${target})
  else()
    set_target_properties(${target} PROPERTIES EXCLUDE_FROM_ALL ON)
  endif()
  if(ARG_RUN_BOUND AND "${lockstep_test_optimization}" STREQUAL "0")  # after the directory's -O0: it wins
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-O1>)
  endif()
endfunction()

# lockstep_add_test(NAME name SOURCES a.cpp b.cpp [LIBRARIES ...] [LABELS ...] [UNSANITIZED] [RUN_BOUND])
# One GoogleTest executable, registered with ctest test by test (gtest_discover_tests). It is in the
# sanitized set when one of its labels is a layer's and UNSANITIZED is not given; such tests also carry
# the label "sanitized", which scripts/sanitize.sh runs. A build of the other set still defines the
# target (calls after this one may set its properties) but neither builds nor registers it.
# RUN_BOUND: lockstep_test_program's.
function(lockstep_add_test)
  cmake_parse_arguments(ARG "UNSANITIZED;RUN_BOUND" "NAME" "SOURCES;LIBRARIES;LABELS" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SOURCES})
  target_link_libraries(${ARG_NAME} PRIVATE lockstep::lockstep lockstep_warnings lockstep_internal GTest::gtest_main ${ARG_LIBRARIES})
  set(sanitized FALSE)
  set(labels ${ARG_LABELS})
  foreach(label IN LISTS ARG_LABELS)
    if(label IN_LIST lockstep_sanitized_labels AND NOT ARG_UNSANITIZED)
      set(sanitized TRUE)
    endif()
  endforeach()
  if(sanitized)
    list(APPEND labels sanitized)
  endif()
  set(run_bound "")
  if(ARG_RUN_BOUND)
    set(run_bound RUN_BOUND)
  endif()
  lockstep_test_program(${ARG_NAME} ${sanitized} ${run_bound})
  lockstep_test_in_this_build(wanted ${sanitized})
  if(wanted)
    include(GoogleTest)
    gtest_discover_tests(${ARG_NAME} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS "${labels}")
  endif()
endfunction()

# LOCKSTEP_CUDA = AUTO | ON | OFF. AUTO enables CUDA when nvcc is found (CUDA 13 lives in
# /usr/local/cuda on our machines and is usually not on PATH).
macro(lockstep_configure_cuda)
  set(LOCKSTEP_HAVE_CUDA OFF)
  if(NOT LOCKSTEP_CUDA STREQUAL "OFF")
    if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
      set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
    endif()
    include(CheckLanguage)
    check_language(CUDA)
    if(CMAKE_CUDA_COMPILER)
      if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
        set(CMAKE_CUDA_ARCHITECTURES 80 90)
      endif()
      enable_language(CUDA)
      # CMake before 3.26 (Debian 12 ships 3.25) knows no C++20 flag for nvcc and rejects
      # CUDA_STANDARD 20 ("requires the language dialect CUDA20"); nvcc 12+ takes -std=c++20.
      if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION AND CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 12.0)
        set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
        set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
      endif()
      set(CMAKE_CUDA_STANDARD 20)
      set(CMAKE_CUDA_STANDARD_REQUIRED ON)
      set(LOCKSTEP_HAVE_CUDA ON)
      # LOCKSTEP_CUDA_COMPILE_CHECK: the device code of every CUDA target (and no more) as PTX, a
      # "virtual" architecture, which nvcc writes without running ptxas; kernels/cuda/CMakeLists.txt
      # turns NVVM's optimizer off as well and says why.
      if(LOCKSTEP_CUDA_COMPILE_CHECK)
        list(TRANSFORM CMAKE_CUDA_ARCHITECTURES REPLACE "^([0-9]+).*$" "\\1-virtual")
        message(STATUS "lockstep: CUDA backend ON as a compile check (${CMAKE_CUDA_COMPILER}, "
                       "PTX for ${CMAKE_CUDA_ARCHITECTURES}, no device optimization: not for a GPU)")
      else()
        message(STATUS "lockstep: CUDA backend ON (${CMAKE_CUDA_COMPILER}, sm ${CMAKE_CUDA_ARCHITECTURES})")
      endif()
    elseif(LOCKSTEP_CUDA STREQUAL "ON")
      message(FATAL_ERROR "LOCKSTEP_CUDA=ON but no CUDA compiler was found (looked on PATH and in /usr/local/cuda)")
    else()
      message(STATUS "lockstep: CUDA backend OFF (nvcc not found)")
    endif()
  endif()
endmacro()
