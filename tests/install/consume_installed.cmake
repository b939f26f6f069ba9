# Installs the build into a scratch prefix, checks the installed layout, then compiles and runs
# the C11 test program and the C examples of docs/examples against the installed headers and
# library only, with the flags pkg-config gives (as a user's Makefile would).
#   -DBUILD_DIR= -DSOURCE=<c11_program.c> -DWORK= -DC_COMPILER=
# The prefix is left in ${WORK}/prefix for the tests that consume it next (fixture
# sparsetc_installed: the CMake package consumer, the Python package from the install).
cmake_policy(VERSION 3.25)
get_filename_component(source_root ${CMAKE_CURRENT_LIST_DIR}/../.. ABSOLUTE)
file(REMOVE_RECURSE ${WORK})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK}/prefix
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc})")
endif()
set(prefix ${WORK}/prefix)
file(GLOB libdirs ${prefix}/lib ${prefix}/lib64 ${prefix}/lib/*-linux-gnu)
list(GET libdirs 0 libdir)

# ---- layout: versioned library with its SONAME link, headers, CMake package, pkg-config,
#      bindings
file(GLOB real_library ${libdir}/libsparsetc.so.*.*.*)
foreach(path IN ITEMS ${libdir}/libsparsetc.so.1 ${libdir}/libsparsetc.so ${real_library}
                      ${prefix}/include/sparsetc/sparsetc.h ${prefix}/include/sparsetc/sparsetc_types.h
                      ${prefix}/include/sparsetc/sparsetc_export.h ${prefix}/include/sparsetc/sparsetc_version.h
                      ${prefix}/include/sparsetc/sparsetc_cusparse.h ${libdir}/libsparsetc_cusparse.so
                      ${libdir}/cmake/sparsetc/sparsetcConfig.cmake
                      ${libdir}/cmake/sparsetc/sparsetcConfigVersion.cmake
                      ${libdir}/cmake/sparsetc/sparsetcTargets.cmake ${libdir}/pkgconfig/sparsetc.pc
                      ${prefix}/share/sparsetc/fortran/sparsetc.f90
                      ${prefix}/share/sparsetc/python/sparsetc/__init__.py
                      ${prefix}/share/sparsetc/python/sparsetc/_install_location.py)
  if(NOT EXISTS ${path})
    message(FATAL_ERROR "the install lacks ${path}")
  endif()
endforeach()
if(NOT IS_SYMLINK ${libdir}/libsparsetc.so.1 OR NOT IS_SYMLINK ${libdir}/libsparsetc.so)
  message(FATAL_ERROR "libsparsetc.so.1 and libsparsetc.so must be links to the versioned file")
endif()
file(READ_SYMLINK ${libdir}/libsparsetc.so.1 soname_target)
get_filename_component(real_name "${real_library}" NAME)
if(NOT soname_target STREQUAL real_name)
  message(FATAL_ERROR "libsparsetc.so.1 points to ${soname_target}, expected ${real_name}")
endif()

# ---- the cuSPARSE preload library finds the installed libsparsetc.so.1 beside it ($ORIGIN)
execute_process(COMMAND objdump -p ${libdir}/libsparsetc_cusparse.so OUTPUT_VARIABLE preload_dynamic)
if(NOT preload_dynamic MATCHES "NEEDED +libsparsetc\\.so\\.1" OR NOT preload_dynamic MATCHES "(RUNPATH|RPATH) +\\$ORIGIN")
  message(FATAL_ERROR "libsparsetc_cusparse.so must need libsparsetc.so.1 and find it through $ORIGIN:\n${preload_dynamic}")
endif()

# ---- pkg-config: relocatable (its directories resolve into this prefix) and enough to build
find_program(PKG_CONFIG pkg-config)
if(PKG_CONFIG)
  set(ENV{PKG_CONFIG_PATH} ${libdir}/pkgconfig)
  foreach(variable want IN ZIP_LISTS
          "includedir;libdir;fortran_module"
          "${prefix}/include;${libdir};${prefix}/share/sparsetc/fortran/sparsetc.f90")
    execute_process(COMMAND ${PKG_CONFIG} --variable=${variable} sparsetc OUTPUT_VARIABLE got
                    OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
    file(REAL_PATH "${got}" got_real)
    file(REAL_PATH "${want}" want_real)
    if(NOT rc EQUAL 0 OR NOT got_real STREQUAL want_real)
      message(FATAL_ERROR "sparsetc.pc gives ${variable} '${got}', expected ${want}")
    endif()
  endforeach()
  execute_process(COMMAND ${PKG_CONFIG} --cflags --libs sparsetc OUTPUT_VARIABLE flags
                  OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "pkg-config --cflags --libs sparsetc failed")
  endif()
  separate_arguments(flags UNIX_COMMAND "${flags}")
else()
  message(STATUS "pkg-config not found: compiling with -I/-L from the layout instead")
  set(flags -I${prefix}/include -L${libdir} -lsparsetc)
endif()

# ---- compile and run every C consumer against the installed tree
file(GLOB examples ${source_root}/docs/examples/*.c)
if(NOT examples)
  message(FATAL_ERROR "no C examples in ${source_root}/docs/examples")
endif()
foreach(program IN ITEMS ${SOURCE} ${examples})
  get_filename_component(name ${program} NAME_WE)
  execute_process(COMMAND ${C_COMPILER} -std=c11 -Wall -Wextra -pedantic -Werror ${program} ${flags}
                          -Wl,-rpath,${libdir} -lm -o ${WORK}/${name}
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "compiling ${name} against the installed tree failed:\n${err}")
  endif()
  execute_process(COMMAND ${WORK}/${name} WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the installed-tree program ${name} failed (${rc}):\n${out}\n${err}")
  endif()
  message(STATUS "installed-tree program ${name} passed")
endforeach()
