# sy_add_plugin(NAME SOURCES src... [LIBS lib...])
# Builds one plugin library as a MODULE (dlopen only, never linked), with the
# plugin SDK headers and helper library, into lib/switchyard/plugins/.
function(sy_add_plugin name)
  cmake_parse_arguments(P "NO_INSTALL" "OUTPUT_DIR" "SOURCES;LIBS" ${ARGN})
  add_library(${name} MODULE ${P_SOURCES})
  target_link_libraries(${name} PRIVATE sy_sdk ${P_LIBS})
  if(NOT P_OUTPUT_DIR)
    set(P_OUTPUT_DIR ${SY_PLUGIN_OUTPUT_DIR})
  endif()
  set_target_properties(${name} PROPERTIES PREFIX "libsy_" OUTPUT_NAME "${name}"
                        LIBRARY_OUTPUT_DIRECTORY ${P_OUTPUT_DIR})
  # only sy_plugin_query is exported (SY_EXPORT); -z defs catches calls into the core
  if(NOT SY_SANITIZE)
    target_link_options(${name} PRIVATE "LINKER:-z,defs")
  endif()
  target_link_libraries(${name} PRIVATE m)
  if(NOT P_NO_INSTALL)
    set_property(GLOBAL APPEND PROPERTY SY_PLUGIN_TARGETS ${name}) # what a host loading @default depends on
    install(TARGETS ${name} LIBRARY DESTINATION ${SY_INSTALL_PLUGIN_DIR})
    # every installed plugin, for tests that load a whole deployment
    set_property(GLOBAL APPEND PROPERTY SY_INSTALLED_PLUGINS ${name})
  endif()
endfunction()
