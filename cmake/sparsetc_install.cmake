# Installation: the library (versioned SONAME), public headers, a CMake package
# (find_package(sparsetc) -> sparsetc::sparsetc) and a relocatable pkg-config file.
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
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/sparsetcConfig.cmake.in
  ${PROJECT_BINARY_DIR}/sparsetcConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/sparsetc)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/sparsetcConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/sparsetcConfig.cmake ${PROJECT_BINARY_DIR}/sparsetcConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/sparsetc COMPONENT Development)
# Relocatable: the prefix is found from the .pc file's own place, however deep the libdir is.
file(RELATIVE_PATH SPARSETC_PC_TO_PREFIX ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" SPARSETC_PC_TO_PREFIX "${SPARSETC_PC_TO_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/sparsetc.pc.in ${PROJECT_BINARY_DIR}/sparsetc.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/sparsetc.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT Development)
