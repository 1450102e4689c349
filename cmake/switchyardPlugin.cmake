# switchyard_add_plugin(): build a Switchyard plugin out of tree, against an
# installed Switchyard (loaded by switchyardConfig.cmake).
#
#   switchyard_add_plugin(NAME SOURCES src... [LIBS lib...] [OUTPUT_DIR dir]
#                         [INSTALL_DIR dir] [NO_INSTALL])
#
# Makes a MODULE library libsy_NAME.so (the loader scans for libsy_*.so) that
# links switchyard::sdk, exports only sy_plugin_query (hidden visibility; the
# plugin defines it with SY_PLUGIN_DEFINE) and, unless NO_INSTALL, installs it
# into INSTALL_DIR (default: <libdir>/switchyard/plugins of this project's
# prefix; point [switchyard] plugin_dirs or plugins at it, or install into
# SWITCHYARD_PLUGIN_DIR to have the embedded default find it).
include_guard(GLOBAL)
include(GNUInstallDirs)

function(switchyard_add_plugin name)
  cmake_parse_arguments(P "NO_INSTALL" "OUTPUT_DIR;INSTALL_DIR" "SOURCES;LIBS" ${ARGN})
  if(NOT P_SOURCES)
    message(FATAL_ERROR "switchyard_add_plugin(${name}): SOURCES is required")
  endif()
  add_library(${name} MODULE ${P_SOURCES})
  target_link_libraries(${name} PRIVATE switchyard::sdk ${P_LIBS} m)
  set_target_properties(${name} PROPERTIES
    PREFIX "libsy_" OUTPUT_NAME "${name}"
    C_STANDARD 11 C_STANDARD_REQUIRED ON
    C_VISIBILITY_PRESET hidden POSITION_INDEPENDENT_CODE ON)
  if(P_OUTPUT_DIR)
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${P_OUTPUT_DIR})
  endif()
  # a plugin never calls into the core: every symbol must resolve at link
  # time (sanitizer runtimes are provided by the host executable instead)
  if(NOT CMAKE_C_FLAGS MATCHES "-fsanitize")
    target_link_options(${name} PRIVATE "LINKER:-z,defs")
  endif()
  if(NOT P_NO_INSTALL)
    if(NOT P_INSTALL_DIR)
      set(P_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/switchyard/plugins)
    endif()
    install(TARGETS ${name} LIBRARY DESTINATION ${P_INSTALL_DIR})
  endif()
endfunction()
