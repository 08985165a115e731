# cmake -P script run by the install_build_example test (tests/install/CMakeLists.txt):
#   (a) cmake --install <lockstep build> --prefix <INSTALL_PREFIX>
#   (b) configure examples/ensemble in a fresh EXAMPLE_BUILD_DIR with CMAKE_PREFIX_PATH=<INSTALL_PREFIX>
#   (c) build it
#   (d) run it; it exits 0 only if every member of its ensemble succeeded.
# Between (b) and (c) it checks that find_package(lockstep) found the installed package and that the
# example is compiled against the installed headers only, never the source tree.
foreach(var LOCKSTEP_BUILD_DIR LOCKSTEP_SOURCE_DIR INSTALL_PREFIX EXAMPLE_BUILD_DIR GENERATOR CXX_COMPILER)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "build_example.cmake: -D${var}=... is required")
  endif()
endforeach()
if(NOT CONFIG)
  set(CONFIG Release)
endif()

function(run_step what)
  message(STATUS "install test: ${what}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "install test: ${what} failed (${rc})\n${out}\n${err}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

# Start from nothing, so files left by an earlier run can neither hide a missing install rule nor a
# stale cache entry.
file(REMOVE_RECURSE "${INSTALL_PREFIX}" "${EXAMPLE_BUILD_DIR}")

# (a)
run_step("install into ${INSTALL_PREFIX}"
         ${CMAKE_COMMAND} --install "${LOCKSTEP_BUILD_DIR}" --prefix "${INSTALL_PREFIX}" --config "${CONFIG}")

# (b) Package registries are off so that only CMAKE_PREFIX_PATH can supply the package.
set(configure_args -S "${LOCKSTEP_SOURCE_DIR}/examples/ensemble" -B "${EXAMPLE_BUILD_DIR}" -G "${GENERATOR}"
    "-DCMAKE_PREFIX_PATH=${INSTALL_PREFIX}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}" "-DCMAKE_BUILD_TYPE=${CONFIG}"
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF
    -DCMAKE_EXPORT_COMPILE_COMMANDS=ON "-DCMAKE_CXX_FLAGS=-Wall -Wextra -Wpedantic")
if(MAKE_PROGRAM)
  list(APPEND configure_args "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()
run_step("configure examples/ensemble against the installed package" ${CMAKE_COMMAND} ${configure_args})

file(STRINGS "${EXAMPLE_BUILD_DIR}/CMakeCache.txt" found_dir REGEX "^lockstep_DIR:")
string(REGEX REPLACE "^lockstep_DIR:[A-Z]*=" "" found_dir "${found_dir}")
file(REAL_PATH "${found_dir}" found_dir)
file(REAL_PATH "${INSTALL_PREFIX}" real_prefix)
string(FIND "${found_dir}/" "${real_prefix}/" at)
if(NOT at EQUAL 0)
  message(FATAL_ERROR "install test: find_package(lockstep) found ${found_dir}, not the package installed in ${real_prefix}")
endif()

if(EXISTS "${EXAMPLE_BUILD_DIR}/compile_commands.json")
  file(READ "${EXAMPLE_BUILD_DIR}/compile_commands.json" commands)
  string(REGEX MATCHALL "(-I|-isystem )[^ \"]+" include_flags "${commands}")
  if(NOT include_flags)
    message(FATAL_ERROR "install test: the example is compiled without lockstep's include directories")
  endif()
  foreach(flag IN LISTS include_flags)
    string(REGEX REPLACE "^(-I|-isystem )" "" dir "${flag}")
    file(REAL_PATH "${dir}" dir)
    string(FIND "${dir}/" "${real_prefix}/" at)
    if(NOT at EQUAL 0)
      message(FATAL_ERROR "install test: the example's include path ${dir} is outside the installation ${real_prefix}")
    endif()
  endforeach()
endif()

# (c)
run_step("build examples/ensemble" ${CMAKE_COMMAND} --build "${EXAMPLE_BUILD_DIR}" --config "${CONFIG}")
message(STATUS "${step_output}")

# (d)
set(exe "${EXAMPLE_BUILD_DIR}/lockstep_ensemble_example")
if(NOT EXISTS "${exe}" AND EXISTS "${EXAMPLE_BUILD_DIR}/${CONFIG}/lockstep_ensemble_example")
  set(exe "${EXAMPLE_BUILD_DIR}/${CONFIG}/lockstep_ensemble_example")
endif()
run_step("run the example" "${exe}")
message(STATUS "${step_output}")
