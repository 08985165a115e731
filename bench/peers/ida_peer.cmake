# The SUNDIALS IDA peer (bench/peers/ida_peer.hpp) as the INTERFACE target lockstep_ida_peer, with
# LOCKSTEP_HAVE_IDA_PEER set to ON in the including directory when SUNDIALS 6.x (IDA, the serial
# N_Vector, the dense matrix and the dense linear solver) is installed — Debian 12's libsundials-dev
# is 6.4.1. Included from bench/CMakeLists.txt and tests/peers/CMakeLists.txt; the target is defined
# once (targets are global, variables are not, hence no include_guard).
#
# Libraries are found by find_library (cache variables, global) rather than through SUNDIALS'
# package config, whose imported targets would be visible only in the directory that found them.
# SUNDIALS 7 changed the API the peer uses (SUNContext_Create's communicator, realtype, the error
# handler), so only major version 6 is accepted.
if(TARGET lockstep_ida_peer)
  set(LOCKSTEP_HAVE_IDA_PEER ON)
  return()
endif()

set(LOCKSTEP_HAVE_IDA_PEER OFF)
find_path(LOCKSTEP_SUNDIALS_INCLUDE_DIR ida/ida.h)
find_library(LOCKSTEP_SUNDIALS_IDA_LIBRARY sundials_ida)
find_library(LOCKSTEP_SUNDIALS_NVECSERIAL_LIBRARY sundials_nvecserial)
find_library(LOCKSTEP_SUNDIALS_SUNMATRIXDENSE_LIBRARY sundials_sunmatrixdense)
find_library(LOCKSTEP_SUNDIALS_SUNLINSOLDENSE_LIBRARY sundials_sunlinsoldense)
set(_lockstep_sundials_major "")
if(LOCKSTEP_SUNDIALS_INCLUDE_DIR AND EXISTS "${LOCKSTEP_SUNDIALS_INCLUDE_DIR}/sundials/sundials_config.h")
  file(STRINGS "${LOCKSTEP_SUNDIALS_INCLUDE_DIR}/sundials/sundials_config.h" _lockstep_sundials_version_line
       REGEX "^#define SUNDIALS_VERSION_MAJOR [0-9]+")
  string(REGEX REPLACE "^#define SUNDIALS_VERSION_MAJOR ([0-9]+).*" "\\1" _lockstep_sundials_major
         "${_lockstep_sundials_version_line}")
endif()

if(LOCKSTEP_SUNDIALS_INCLUDE_DIR AND LOCKSTEP_SUNDIALS_IDA_LIBRARY AND LOCKSTEP_SUNDIALS_NVECSERIAL_LIBRARY
   AND LOCKSTEP_SUNDIALS_SUNMATRIXDENSE_LIBRARY AND LOCKSTEP_SUNDIALS_SUNLINSOLDENSE_LIBRARY
   AND _lockstep_sundials_major STREQUAL "6")
  set(LOCKSTEP_HAVE_IDA_PEER ON)
  add_library(lockstep_ida_peer INTERFACE)
  target_include_directories(lockstep_ida_peer SYSTEM INTERFACE ${LOCKSTEP_SUNDIALS_INCLUDE_DIR})
  target_link_libraries(lockstep_ida_peer INTERFACE lockstep::lockstep lockstep::study
    ${LOCKSTEP_SUNDIALS_IDA_LIBRARY} ${LOCKSTEP_SUNDIALS_NVECSERIAL_LIBRARY}
    ${LOCKSTEP_SUNDIALS_SUNMATRIXDENSE_LIBRARY} ${LOCKSTEP_SUNDIALS_SUNLINSOLDENSE_LIBRARY})
  message(STATUS "lockstep: SUNDIALS ${_lockstep_sundials_major}.x found (${LOCKSTEP_SUNDIALS_IDA_LIBRARY}): building the IDA peer")
elseif(_lockstep_sundials_major AND NOT _lockstep_sundials_major STREQUAL "6")
  message(STATUS "lockstep: SUNDIALS ${_lockstep_sundials_major}.x found, the IDA peer needs 6.x; bench/peers and tests/peers are not built")
else()
  message(STATUS "lockstep: SUNDIALS IDA (libsundials-dev) not found; bench/peers and tests/peers are not built")
endif()
