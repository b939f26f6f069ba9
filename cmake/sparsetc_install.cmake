# Installation: the library (versioned SONAME), public headers, a CMake package
# (find_package(sparsetc) -> sparsetc::sparsetc), a relocatable pkg-config file, and the language
# bindings: the Fortran module as source and the pure-Python package.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS sparsetc EXPORT sparsetcTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT Runtime NAMELINK_COMPONENT Development
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES
  ${PROJECT_SOURCE_DIR}/include/sparsetc/sparsetc.h
  ${PROJECT_SOURCE_DIR}/include/sparsetc/sparsetc_types.h
  ${PROJECT_SOURCE_DIR}/include/sparsetc/sparsetc_export.h
  ${PROJECT_BINARY_DIR}/include/sparsetc/sparsetc_version.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/sparsetc COMPONENT Development)
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/sparsetc COMPONENT Runtime)
install(EXPORT sparsetcTargets NAMESPACE sparsetc:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/sparsetc
  COMPONENT Development)
# Bindings. Fortran .mod files are compiler-specific, so the module ships as source; the Python
# package finds the library through _install_location.py, a path relative to itself.
set(SPARSETC_FORTRAN_DIR ${CMAKE_INSTALL_DATADIR}/sparsetc/fortran)
set(SPARSETC_PYTHON_DIR ${CMAKE_INSTALL_DATADIR}/sparsetc/python)
install(FILES ${PROJECT_SOURCE_DIR}/capi/fortran/sparsetc.f90 DESTINATION ${SPARSETC_FORTRAN_DIR}
  COMPONENT Development)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/capi/python/sparsetc DESTINATION ${SPARSETC_PYTHON_DIR}
  COMPONENT Python FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)
install(FILES ${PROJECT_SOURCE_DIR}/capi/python/pyproject.toml ${PROJECT_SOURCE_DIR}/capi/python/README.md
  DESTINATION ${SPARSETC_PYTHON_DIR} COMPONENT Python)
file(RELATIVE_PATH SPARSETC_PYTHON_TO_LIBDIR ${CMAKE_INSTALL_PREFIX}/${SPARSETC_PYTHON_DIR}/sparsetc
     ${CMAKE_INSTALL_FULL_LIBDIR})
file(WRITE ${PROJECT_BINARY_DIR}/python/_install_location.py
  "# Written by cmake --install: where libsparsetc.so.1 lies, relative to this package.\n"
  "LIBDIR = \"${SPARSETC_PYTHON_TO_LIBDIR}\"\n")
install(FILES ${PROJECT_BINARY_DIR}/python/_install_location.py DESTINATION ${SPARSETC_PYTHON_DIR}/sparsetc
  COMPONENT Python)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/sparsetcConfig.cmake.in
  ${PROJECT_BINARY_DIR}/sparsetcConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/sparsetc
  PATH_VARS SPARSETC_FORTRAN_DIR SPARSETC_PYTHON_DIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/sparsetcConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/sparsetcConfig.cmake ${PROJECT_BINARY_DIR}/sparsetcConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/sparsetc COMPONENT Development)
# Relocatable: the prefix is found from the .pc file's own place, however deep the libdir is.
file(RELATIVE_PATH SPARSETC_PC_TO_PREFIX ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" SPARSETC_PC_TO_PREFIX "${SPARSETC_PC_TO_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/sparsetc.pc.in ${PROJECT_BINARY_DIR}/sparsetc.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/sparsetc.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT Development)
