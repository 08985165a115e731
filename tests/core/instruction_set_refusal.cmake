# cmake -DPROGRAM=... -P instruction_set_refusal.cmake: runs the refusal probe and requires exit status 1,
# a message naming the missing feature and the build option, and no output from its main.
execute_process(COMMAND ${PROGRAM} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status EQUAL 1)
  message(FATAL_ERROR "exit status ${status}, expected 1; stdout: ${out}; stderr: ${err}")
endif()
if(out MATCHES "main ran")
  message(FATAL_ERROR "main ran before the check refused the CPU: ${out}")
endif()
if(NOT err MATCHES "this CPU lacks (.* )?no-such-feature\\." OR NOT err MATCHES "LOCKSTEP_INSTRUCTION_SET=baseline")
  message(FATAL_ERROR "the message does not name the missing feature and the option: ${err}")
endif()
message(STATUS "refused as expected: ${err}")
