# Helpers shared by the build: test registration and the CUDA switch.

# lockstep_add_test(NAME name SOURCES a.cpp b.cpp [LIBRARIES ...] [LABELS ...])
# One GoogleTest executable, registered with ctest test by test (gtest_discover_tests).
function(lockstep_add_test)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;LIBRARIES;LABELS" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SOURCES})
  target_link_libraries(${ARG_NAME} PRIVATE lockstep::lockstep lockstep_warnings lockstep_internal GTest::gtest_main ${ARG_LIBRARIES})
  include(GoogleTest)
  gtest_discover_tests(${ARG_NAME} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS "${ARG_LABELS}")
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
      message(STATUS "lockstep: CUDA backend ON (${CMAKE_CUDA_COMPILER}, sm ${CMAKE_CUDA_ARCHITECTURES})")
    elseif(LOCKSTEP_CUDA STREQUAL "ON")
      message(FATAL_ERROR "LOCKSTEP_CUDA=ON but no CUDA compiler was found (looked on PATH and in /usr/local/cuda)")
    else()
      message(STATUS "lockstep: CUDA backend OFF (nvcc not found)")
    endif()
  endif()
endmacro()
