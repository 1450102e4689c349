# Installs the build tree into WORK/prefix and checks the result:
#  - the layout: headers, libswitchyard with its SONAME, plugins, default
#    config, CMake package files, pkg-config files; no test plugins;
#  - the installed CLI finds the installed plugins (RPATH $ORIGIN/../lib);
#  - an out-of-tree project finds the package with find_package(switchyard),
#    builds a plugin with switchyard_add_plugin() and a host linked to
#    switchyard::switchyard, and the host loads that plugin;
#  - pkg-config gives flags that compile and link a host program.
# Arguments: BUILD_DIR WORK OOT_SOURCE C_COMPILER SANITIZE VERSION LIBDIR INCLUDEDIR DATADIR
cmake_minimum_required(VERSION 3.25)

set(prefix ${WORK}/prefix)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("$ ${ARGN}\n${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (exit ${rc})")
  endif()
  set(run_out "${out}${err}" PARENT_SCOPE)
endfunction()

function(expect_match what regex text)
  if(NOT text MATCHES "${regex}")
    message(FATAL_ERROR "${what}: output does not match '${regex}'")
  endif()
endfunction()

function(expect_exists)
  foreach(f ${ARGN})
    if(NOT EXISTS ${prefix}/${f})
      message(FATAL_ERROR "not installed: ${prefix}/${f}")
    endif()
  endforeach()
endfunction()

# ---- install ------------------------------------------------------------------
run("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})

# ---- layout -------------------------------------------------------------------
expect_exists(
  bin/switchyard
  ${INCLUDEDIR}/switchyard/switchyard.h
  ${INCLUDEDIR}/switchyard/sy_plugin.h
  ${INCLUDEDIR}/switchyard/sy_types.h
  ${INCLUDEDIR}/switchyard/sy_tools.h
  ${INCLUDEDIR}/switchyard/ext/sy_qdq_patterns.h
  ${INCLUDEDIR}/switchyard/ext/sy_mcu_codegen.h
  ${INCLUDEDIR}/switchyard/ext/sy_emu_report.h
  ${INCLUDEDIR}/switchyard/ext/sy_llm.h
  ${LIBDIR}/libswitchyard.so
  ${LIBDIR}/libswitchyard.so.${VERSION}
  ${LIBDIR}/libswitchyard_sdk.a
  ${LIBDIR}/libswitchyard_tools.so
  ${LIBDIR}/libswitchyard_tools.so.${VERSION}
  ${LIBDIR}/switchyard/plugins/libsy_cpu_ref.so
  ${DATADIR}/switchyard/default.ini
  ${LIBDIR}/cmake/switchyard/switchyardConfig.cmake
  ${LIBDIR}/cmake/switchyard/switchyardConfigVersion.cmake
  ${LIBDIR}/cmake/switchyard/switchyardTargets.cmake
  ${LIBDIR}/pkgconfig/switchyard.pc
  ${LIBDIR}/pkgconfig/switchyard-sdk.pc
  ${LIBDIR}/pkgconfig/switchyard-tools.pc)
string(REGEX MATCH "^[0-9]+" major "${VERSION}")
expect_exists(${LIBDIR}/libswitchyard.so.${major})
file(GLOB plugins ${prefix}/${LIBDIR}/switchyard/plugins/*)
foreach(p ${plugins})
  if(p MATCHES "abi_")
    message(FATAL_ERROR "a test plugin was installed: ${p}")
  endif()
endforeach()
file(GLOB_RECURSE test_exes ${prefix}/*test_*)
if(test_exes)
  message(FATAL_ERROR "test programs were installed: ${test_exes}")
endif()

# SONAME (readelf comes with binutils, which gcc and clang need)
find_program(READELF readelf)
if(READELF)
  run("readelf" ${READELF} -d ${prefix}/${LIBDIR}/libswitchyard.so.${VERSION})
  expect_match("SONAME" "\\(SONAME\\)[^\n]*libswitchyard\\.so\\.${major}\\]" "${run_out}")
  run("readelf" ${READELF} -d ${prefix}/bin/switchyard)
  expect_match("CLI RUNPATH" "(RUNPATH|RPATH)[^\n]*\\$ORIGIN/\\.\\./${LIBDIR}" "${run_out}")
endif()

# ---- the installed CLI finds the installed plugins -------------------------------
run("installed switchyard plugins" ${prefix}/bin/switchyard plugins)
string(REPLACE "." "\\." prefix_re "${prefix}")
expect_match("plugins" "path: ${prefix_re}/bin/\\.\\./${LIBDIR}/switchyard/plugins/libsy_cpu_ref\\.so|path: ${prefix_re}/${LIBDIR}/switchyard/plugins/libsy_cpu_ref\\.so" "${run_out}")
expect_match("plugins" "plugin libraries loaded, 0 refused" "${run_out}")
if(run_out MATCHES "${BUILD_DIR}/lib")
  message(FATAL_ERROR "the installed CLI loaded plugins from the build tree")
endif()
run("installed default.ini" ${prefix}/bin/switchyard plugins --config ${prefix}/${DATADIR}/switchyard/default.ini)
expect_match("default.ini" "libsy_cpu_ref\\.so" "${run_out}")
expect_match("default.ini" "0 refused" "${run_out}")

# ---- out-of-tree plugin + host with find_package(switchyard) ---------------------
set(cflags "")
if(SANITIZE)
  # the installed library is instrumented: so must its users be
  set(cflags "-fsanitize=address,undefined -fno-omit-frame-pointer")
endif()
run("configure the out-of-tree project" ${CMAKE_COMMAND} -S ${OOT_SOURCE} -B ${WORK}/oot-build
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_C_COMPILER=${C_COMPILER} "-DCMAKE_C_FLAGS=${cflags}"
    "-DCMAKE_EXE_LINKER_FLAGS=${cflags}" "-DCMAKE_MODULE_LINKER_FLAGS=${cflags}" -DSY_EXPECT_VERSION=${VERSION})
expect_match("find_package" "switchyard ${VERSION} found" "${run_out}")
run("build the out-of-tree project" ${CMAKE_COMMAND} --build ${WORK}/oot-build)
run("out-of-tree host" ${WORK}/oot-build/oot_host ${WORK}/oot-build/plugins)
expect_match("out-of-tree host" "oot_hello loaded" "${run_out}")
# switchyard::tools: a host linked to the tools library by find_package
run("out-of-tree tools host" ${WORK}/oot-build/oot_tools_host)
expect_match("out-of-tree tools host" "sy_tools_version 1, INVALID_ARGUMENT" "${run_out}")

# ---- pkg-config -------------------------------------------------------------------
find_program(PKG_CONFIG pkg-config)
if(PKG_CONFIG)
  set(ENV{PKG_CONFIG_PATH} ${prefix}/${LIBDIR}/pkgconfig)
  run("pkg-config" ${PKG_CONFIG} --modversion switchyard)
  expect_match("pkg-config version" "^${VERSION}" "${run_out}")
  run("pkg-config" ${PKG_CONFIG} --variable=plugindir switchyard)
  string(STRIP "${run_out}" plugindir)
  get_filename_component(plugindir "${plugindir}" REALPATH)
  get_filename_component(want "${prefix}/${LIBDIR}/switchyard/plugins" REALPATH)
  if(NOT plugindir STREQUAL want)
    message(FATAL_ERROR "pkg-config plugindir '${plugindir}', expected '${want}'")
  endif()
  execute_process(COMMAND ${PKG_CONFIG} --cflags --libs switchyard OUTPUT_VARIABLE flags RESULT_VARIABLE rc
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "pkg-config --cflags --libs switchyard failed")
  endif()
  separate_arguments(flags UNIX_COMMAND "${flags}")
  separate_arguments(sflags UNIX_COMMAND "${cflags}")
  file(WRITE ${WORK}/pc_host.c
    "#include <switchyard/switchyard.h>\n#include <stdio.h>\n#include <string.h>\n"
    "int main(void) { printf(\"libswitchyard %s\\n\", sy_version());\n"
    "  return strcmp(sy_version(), SY_VERSION_STRING) != 0; }\n")
  run("compile with pkg-config flags" ${C_COMPILER} -std=c11 -Wall -Werror ${sflags} ${WORK}/pc_host.c -o
      ${WORK}/pc_host ${flags} -Wl,-rpath,${prefix}/${LIBDIR})
  run("pkg-config host" ${WORK}/pc_host)
  expect_match("pkg-config host" "libswitchyard ${VERSION}" "${run_out}")
endif()
message("install test: ok")
