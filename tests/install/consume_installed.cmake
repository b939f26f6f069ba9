# Installs the build into a scratch prefix, then compiles and runs the C11 test program against
# the installed headers and library only (as a user's build would).
file(REMOVE_RECURSE ${WORK})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK}/prefix
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc})")
endif()
file(GLOB libdirs ${WORK}/prefix/lib ${WORK}/prefix/lib64 ${WORK}/prefix/lib/*-linux-gnu)
list(GET libdirs 0 libdir)
if(NOT EXISTS ${libdir}/pkgconfig/sparsetc.pc OR NOT EXISTS ${libdir}/cmake/sparsetc/sparsetcConfig.cmake)
  message(FATAL_ERROR "the install lacks sparsetc.pc or the CMake package")
endif()
# The pkg-config file is relocatable: its include directory resolves into this prefix.
find_program(PKG_CONFIG pkg-config)
if(PKG_CONFIG)
  set(ENV{PKG_CONFIG_PATH} ${libdir}/pkgconfig)
  execute_process(COMMAND ${PKG_CONFIG} --variable=includedir sparsetc OUTPUT_VARIABLE pc_include
                  OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
  file(REAL_PATH "${pc_include}" pc_include_real)
  file(REAL_PATH "${WORK}/prefix/include" want_include)
  if(NOT rc EQUAL 0 OR NOT pc_include_real STREQUAL want_include)
    message(FATAL_ERROR "sparsetc.pc gives includedir '${pc_include}', expected ${want_include}")
  endif()
endif()
execute_process(COMMAND ${C_COMPILER} -std=c11 -Wall -Wextra -pedantic -Werror ${SOURCE}
                        -I${WORK}/prefix/include -L${libdir} -Wl,-rpath,${libdir} -lsparsetc -lm
                        -o ${WORK}/c11_program
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "compiling against the installed tree failed:\n${err}")
endif()
execute_process(COMMAND ${WORK}/c11_program RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the installed-tree program failed (${rc}):\n${out}\n${err}")
endif()
message(STATUS "installed-tree program passed")
