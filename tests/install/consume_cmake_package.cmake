# Builds tests/install/consumer (a user's project) against the prefix that install_consumer
# left, through find_package(sparsetc), and runs its programs with CTest.
#   -DPREFIX= -DWORK= -DSOURCE_DIR=<repository> -DGENERATOR= -DC_COMPILER= [-DFortran_COMPILER=]
cmake_policy(VERSION 3.25)
file(REMOVE_RECURSE ${WORK})
set(configure_command ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/install/consumer -B ${WORK} -G ${GENERATOR}
    -DCMAKE_PREFIX_PATH=${PREFIX} -DCMAKE_C_COMPILER=${C_COMPILER} -DSPARSETC_SOURCE_DIR=${SOURCE_DIR}
    -DCMAKE_BUILD_TYPE=Release)
if(Fortran_COMPILER)
  list(APPEND configure_command -DWITH_FORTRAN=ON -DCMAKE_Fortran_COMPILER=${Fortran_COMPILER})
endif()
foreach(step IN ITEMS configure build test)
  if(step STREQUAL "configure")
    set(command ${configure_command})
  elseif(step STREQUAL "build")
    set(command ${CMAKE_COMMAND} --build ${WORK})
  else()
    set(command ${CMAKE_CTEST_COMMAND} --test-dir ${WORK} --output-on-failure)
  endif()
  execute_process(COMMAND ${command} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the consumer project's ${step} step failed (${rc}):\n${out}\n${err}")
  endif()
endforeach()
message(STATUS "${out}")
