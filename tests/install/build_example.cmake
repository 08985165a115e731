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

# (a2) Every installed public header compiles on its own, and includes nothing outside the installed
# tree: one translation unit per header (lockstep/**/*.hpp and *.h), built against the installed
# package; then every dependency ninja recorded for them must lie outside the lockstep source and
# build trees (system and third-party headers are fine; a header of host/ or kernels/ is not).
set(headers_dir "${EXAMPLE_BUILD_DIR}-headers")
file(REMOVE_RECURSE "${headers_dir}")
file(GLOB_RECURSE installed_headers RELATIVE "${INSTALL_PREFIX}/include"
     "${INSTALL_PREFIX}/include/lockstep/*.hpp" "${INSTALL_PREFIX}/include/lockstep/*.h")
list(LENGTH installed_headers header_count)
if(header_count LESS 20)
  message(FATAL_ERROR "install test: only ${header_count} headers installed under ${INSTALL_PREFIX}/include/lockstep")
endif()
set(tus "")
foreach(header IN LISTS installed_headers)
  string(MAKE_C_IDENTIFIER "${header}" stem)
  file(WRITE "${headers_dir}/src/${stem}.cpp" "#include \"${header}\"\n")
  string(APPEND tus " ${stem}.cpp")
endforeach()
file(WRITE "${headers_dir}/src/CMakeLists.txt" "cmake_minimum_required(VERSION 3.25)
project(lockstep_header_check CXX)
find_package(lockstep REQUIRED)
add_library(header_check OBJECT ${tus})
target_link_libraries(header_check PRIVATE lockstep::lockstep lockstep::study)
")
set(header_configure_args -S "${headers_dir}/src" -B "${headers_dir}/build" -G Ninja
    "-DCMAKE_PREFIX_PATH=${INSTALL_PREFIX}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF
    "-DCMAKE_CXX_FLAGS=-Wall -Wextra -Wpedantic")
find_program(ninja_program NAMES ninja ninja-build)
if(NOT ninja_program)
  message(FATAL_ERROR "install test: the header check needs ninja (it reads the compiler's dependencies with ninja -t deps)")
endif()
list(APPEND header_configure_args "-DCMAKE_MAKE_PROGRAM=${ninja_program}")
run_step("configure the header check (${header_count} headers)" ${CMAKE_COMMAND} ${header_configure_args})
run_step("compile every installed header on its own" ${CMAKE_COMMAND} --build "${headers_dir}/build")
run_step("list the headers' dependencies" "${ninja_program}" -C "${headers_dir}/build" -t deps)
file(REAL_PATH "${LOCKSTEP_SOURCE_DIR}" real_source)
file(REAL_PATH "${LOCKSTEP_BUILD_DIR}" real_build)
file(REAL_PATH "${INSTALL_PREFIX}" real_install)
file(REAL_PATH "${headers_dir}" real_headers_dir)
string(REPLACE "\n" ";" dependency_lines "${step_output}")
set(outside "")
foreach(line IN LISTS dependency_lines)
  string(STRIP "${line}" path)
  if(path STREQUAL "" OR path MATCHES ":")
    continue()
  endif()
  # Inside the source or build tree, but neither installed nor one of the check's own files.
  string(FIND "${path}" "${real_source}/" in_source)
  string(FIND "${path}" "${real_build}/" in_build)
  string(FIND "${path}" "${real_install}/" in_install)
  string(FIND "${path}" "${real_headers_dir}/" in_check)
  if((in_source EQUAL 0 OR in_build EQUAL 0) AND NOT in_install EQUAL 0 AND NOT in_check EQUAL 0)
    list(APPEND outside "${path}")
  endif()
endforeach()
if(outside)
  list(REMOVE_DUPLICATES outside)
  message(FATAL_ERROR "install test: installed headers include files outside the installed tree:\n  ${outside}")
endif()
message(STATUS "install test: ${header_count} installed headers compile on their own and include only installed files")

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
