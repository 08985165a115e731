# cmake -DSOURCE_DIR=... -DWORK_DIR=... -DGENERATOR=... -DCXX=... -P instruction_set_configure.cmake
#
# LOCKSTEP_INSTRUCTION_SET at configure time (the top-level CMakeLists.txt), without building anything:
#   1. an unknown set is refused with a message that names the option, the value and the choices;
#   2. avx512 puts the set's flags on the library's units and on the model compiler's flags, turns the
#      vectorizer off there (the flags allow FMA), and compiles the CPU check for the baseline: its
#      -mno- flags come after the set's.
# Each configure leaves out the optional parts (CUDA, tests, benchmarks, Python, MPI) to take seconds.
set(common -G "${GENERATOR}" -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=Release -DLOCKSTEP_CUDA=OFF
           -DLOCKSTEP_BUILD_TESTS=OFF -DLOCKSTEP_BUILD_BENCH=OFF -DLOCKSTEP_PYTHON=OFF -DLOCKSTEP_MPI=OFF)

file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/unknown ${common}
                        -DLOCKSTEP_INSTRUCTION_SET=avx3
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(status EQUAL 0)
  message(FATAL_ERROR "LOCKSTEP_INSTRUCTION_SET=avx3 was accepted")
endif()
string(REGEX REPLACE "[ \n]+" " " err_flat "${err}")
if(NOT err_flat MATCHES "LOCKSTEP_INSTRUCTION_SET = \"avx3\": expected baseline, sse4, avx2 or avx512")
  message(FATAL_ERROR "the refusal of avx3 does not say what was expected:\n${err}")
endif()

execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/avx512 ${common}
                        -DLOCKSTEP_INSTRUCTION_SET=avx512 -DCMAKE_EXPORT_COMPILE_COMMANDS=ON
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "configuring for avx512 failed:\n${out}\n${err}")
endif()
file(READ ${WORK_DIR}/avx512/compile_commands.json commands)
string(JSON count LENGTH "${commands}")
math(EXPR last "${count} - 1")
set(seen "")
foreach(i RANGE ${last})
  string(JSON file GET "${commands}" ${i} file)
  string(JSON command GET "${commands}" ${i} command)
  if(file MATCHES "host/core/elementary\\.cpp$")
    if(NOT command MATCHES " -mavx512f .* -fno-tree-slp-vectorize -fno-tree-loop-vectorize")
      message(FATAL_ERROR "elementary.cpp is not compiled for avx512 with the vectorizer off: ${command}")
    endif()
    list(APPEND seen elementary)
  elseif(file MATCHES "host/core/instruction_set\\.cpp$")
    if(NOT command MATCHES " -mavx512f .* -mno-sse3 .*-mno-fma"
       OR NOT command MATCHES "LOCKSTEP_INSTRUCTION_SET_CPU_FEATURES=[^-]*avx512vl avx512dq avx512bw")
      message(FATAL_ERROR "instruction_set.cpp is not compiled for the baseline with avx512's features: ${command}")
    endif()
    list(APPEND seen check)
  elseif(file MATCHES "host/model_files/model_compiler\\.cpp$")
    if(NOT command MATCHES "LOCKSTEP_MODEL_CXX_FLAGS=[^ ]*-mavx512f[^ ]*-fno-tree-slp-vectorize")
      message(FATAL_ERROR "model files would not be compiled for avx512 with the vectorizer off: ${command}")
    endif()
    list(APPEND seen model_files)
  endif()
endforeach()
list(LENGTH seen seen_count)
if(NOT seen_count EQUAL 3)
  message(FATAL_ERROR "expected the commands of elementary.cpp, instruction_set.cpp and model_compiler.cpp; saw ${seen}")
endif()
file(REMOVE_RECURSE ${WORK_DIR})
message(STATUS "avx3 refused, avx512 configured as expected")
