# Install/export: the CMake package (switchyardConfig.cmake, version file,
# targets in namespace switchyard::) and pkg-config files. Included at the end
# of the root CMakeLists.txt, after every target exists.
#
# Out of tree:
#   find_package(switchyard 0.1 REQUIRED)
#   target_link_libraries(host PRIVATE switchyard::switchyard)   # a host application
#   switchyard_add_plugin(my_ops SOURCES my_ops.c)                # a plugin, links switchyard::sdk
include(CMakePackageConfigHelpers)

set(SY_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/switchyard)
set(SY_INSTALL_CONFDIR ${CMAKE_INSTALL_DATADIR}/switchyard)

# the SDK helper library is switchyard::sdk out of tree (sy_sdk in tree)
set_target_properties(sy_sdk PROPERTIES EXPORT_NAME sdk)

install(EXPORT switchyardTargets NAMESPACE switchyard:: DESTINATION ${SY_INSTALL_CMAKEDIR}
        FILE switchyardTargets.cmake)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/switchyardConfig.cmake.in
  ${PROJECT_BINARY_DIR}/switchyardConfig.cmake
  INSTALL_DESTINATION ${SY_INSTALL_CMAKEDIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR SY_INSTALL_PLUGIN_DIR SY_INSTALL_CONFDIR)
# 0.x: minor versions may break the host API; from 1.0 on, the major decides
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(SY_VERSION_COMPAT SameMinorVersion)
else()
  set(SY_VERSION_COMPAT SameMajorVersion)
endif()
write_basic_package_version_file(${PROJECT_BINARY_DIR}/switchyardConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY ${SY_VERSION_COMPAT})
install(FILES
  ${PROJECT_BINARY_DIR}/switchyardConfig.cmake
  ${PROJECT_BINARY_DIR}/switchyardConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/switchyardPlugin.cmake
  DESTINATION ${SY_INSTALL_CMAKEDIR})

# pkg-config: relocatable (paths relative to the .pc file), so an install
# with `cmake --install --prefix DIR` works wherever DIR is.
set(SY_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
set(SY_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(SY_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  file(RELATIVE_PATH SY_PC_LIBDIR "${CMAKE_INSTALL_PREFIX}" "${CMAKE_INSTALL_LIBDIR}")
else()
  file(RELATIVE_PATH SY_PC_UP "/sy_root/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/sy_root")
  string(REGEX REPLACE "/$" "" SY_PC_UP "${SY_PC_UP}")
  set(SY_PC_PREFIX "\${pcfiledir}/${SY_PC_UP}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  file(RELATIVE_PATH SY_PC_INCLUDEDIR "${CMAKE_INSTALL_PREFIX}" "${CMAKE_INSTALL_INCLUDEDIR}")
endif()
foreach(pc switchyard switchyard-sdk switchyard-tools)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/${pc}.pc.in ${PROJECT_BINARY_DIR}/${pc}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/${pc}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()
