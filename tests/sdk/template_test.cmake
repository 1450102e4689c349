# The plugin SDK as a third party meets it (tests/sdk, CTest sdk.template):
#  1. cmake --install the build tree into WORK/prefix;
#  2. copy plugin_sdk/template to WORK/template-src (so nothing can reach back
#     into the source tree) and build it with only CMAKE_PREFIX_PATH=prefix;
#     no compile command may name the source or build tree;
#  3. run the template's own unit test (ctest);
#  4. write an INI naming the built plugin; with the *installed* CLI:
#     `switchyard plugins` lists it, `switchyard run` runs MODEL with it,
#     `switchyard explain` shows my_npu taking nodes, `switchyard cts` passes.
# Arguments: BUILD_DIR SOURCE_DIR WORK TEMPLATE MODEL C_COMPILER SANITIZE
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

# 1. install
run("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})

# 2. the template, out of tree, from the prefix only
file(COPY ${TEMPLATE}/ DESTINATION ${WORK}/template-src)
set(flags "-Werror")
if(SANITIZE)
  # the installed library is instrumented: so must its users be
  set(flags "-Werror -fsanitize=address,undefined -fno-omit-frame-pointer")
endif()
run("configure the template" ${CMAKE_COMMAND} -S ${WORK}/template-src -B ${WORK}/template-build
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_C_COMPILER=${C_COMPILER} "-DCMAKE_C_FLAGS=${flags}"
    -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)
expect_match("find_package" "Switchyard [0-9.]+: headers ${prefix}" "${run_out}")
run("build the template" ${CMAKE_COMMAND} --build ${WORK}/template-build)
file(READ ${WORK}/template-build/compile_commands.json cc)
string(REPLACE "${WORK}/" "<work>/" cc "${cc}") # WORK lies in the build tree
foreach(tree ${SOURCE_DIR} ${BUILD_DIR})
  string(FIND "${cc}" "${tree}/" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "the template's build reaches into ${tree}: ${cc}")
  endif()
endforeach()
set(plugin ${WORK}/template-build/plugins/libsy_my_npu.so)
if(NOT EXISTS ${plugin})
  message(FATAL_ERROR "the template did not produce ${plugin}")
endif()

# 3. its unit test
run("the template's unit test" ${CMAKE_CTEST_COMMAND} --test-dir ${WORK}/template-build --output-on-failure)
expect_match("ctest" "100% tests passed" "${run_out}")

# 4. the installed CLI with an INI naming the plugin
file(WRITE ${WORK}/my_npu.ini
  "[switchyard]\nplugin_dirs = @default\nplugins = ${plugin}\nproviders = my_npu, cpu_ref\n\n"
  "[provider.my_npu]\nmax_elements = 1048576\n")
set(cli ${prefix}/bin/switchyard)
run("switchyard plugins" ${cli} plugins --config ${WORK}/my_npu.ini)
expect_match("plugins" "my_npu 0\\.1\\.0 \\(ABI 1\\.[0-9]+\\)\n  path: [^\n]*libsy_my_npu\\.so" "${run_out}")
expect_match("plugins" "providers in priority order: my_npu, cpu_ref" "${run_out}")
expect_match("plugins" " 0 refused" "${run_out}")
run("switchyard run" ${cli} run ${MODEL} --config ${WORK}/my_npu.ini)
expect_match("run" "output 0 '[^']+' float32" "${run_out}")
run("switchyard explain" ${cli} explain ${MODEL} --config ${WORK}/my_npu.ini)
expect_match("explain" "provider my_npu: [1-9][0-9]* nodes" "${run_out}")
expect_match("explain" "MatMul +my_npu +taken" "${run_out}")
expect_match("explain" "Relu +my_npu +taken" "${run_out}")
run("switchyard cts" ${cli} cts --plugin ${plugin} --config ${WORK}/my_npu.ini)
expect_match("cts" "claims [^\n]*Add\\[float32\\], Relu\\[float32\\], MatMul\\[float32\\]" "${run_out}")
expect_match("cts" "\n[1-9][0-9]* passed, 0 failed, [0-9]+ skipped" "${run_out}")
message("sdk template test: ok")
