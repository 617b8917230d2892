# Installs the public headers and libraries and a CMake package (and makes the build tree one as well),
# so that a user's project can say
#   find_package(schmp REQUIRED)
#   target_link_libraries(my_program PRIVATE schmp::schmp)
include(CMakePackageConfigHelpers)

install(DIRECTORY include/schmp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS schmp_interface EXPORT schmpTargets)
set_target_properties(schmp_interface PROPERTIES EXPORT_NAME interface)
set_target_properties(schmp_io PROPERTIES EXPORT_NAME io)

set(SCHMP_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/schmp)
install(EXPORT schmpTargets NAMESPACE schmp:: DESTINATION ${SCHMP_CMAKE_DIR})
# The build tree is a package too (-Dschmp_DIR=BUILD), its targets pointing at the build's libraries.
export(EXPORT schmpTargets NAMESPACE schmp:: FILE ${CMAKE_CURRENT_BINARY_DIR}/schmpTargets.cmake)
configure_package_config_file(cmake/schmpConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/schmpConfig.cmake
  INSTALL_DESTINATION ${SCHMP_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/schmpConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/schmpConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/schmpConfigVersion.cmake
  DESTINATION ${SCHMP_CMAKE_DIR})
