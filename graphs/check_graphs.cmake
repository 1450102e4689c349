# Run by CTest (graphs_up_to_date): regenerate the sample models into OUT_DIR
# and compare them byte for byte with the committed copies in SRC_DIR.
cmake_minimum_required(VERSION 3.25)
foreach(var GEN SRC_DIR OUT_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_graphs.cmake: -D${var}=... is required")
  endif()
endforeach()

file(REMOVE_RECURSE "${OUT_DIR}")
execute_process(COMMAND "${GEN}" --out-dir "${OUT_DIR}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "sy_gen_graphs failed (${rc}):\n${out}${err}")
endif()

file(GLOB_RECURSE generated RELATIVE "${OUT_DIR}" "${OUT_DIR}/*.onnx" "${OUT_DIR}/*.npy")
file(GLOB_RECURSE committed RELATIVE "${SRC_DIR}" "${SRC_DIR}/*.onnx" "${SRC_DIR}/*.npy")
list(SORT generated)
list(SORT committed)

set(problems "")
foreach(f IN LISTS generated)
  if(NOT EXISTS "${SRC_DIR}/${f}")
    string(APPEND problems "  graphs/${f}: made by the generator but not committed\n")
  else()
    execute_process(COMMAND "${CMAKE_COMMAND}" -E compare_files "${OUT_DIR}/${f}" "${SRC_DIR}/${f}"
                    RESULT_VARIABLE same)
    if(NOT same EQUAL 0)
      string(APPEND problems "  graphs/${f}: differs from the generator's output ${OUT_DIR}/${f}\n")
    endif()
  endif()
endforeach()
foreach(f IN LISTS committed)
  if(NOT f IN_LIST generated)
    string(APPEND problems "  graphs/${f}: committed but no longer made by the generator\n")
  endif()
endforeach()

if(problems)
  message(FATAL_ERROR "graphs/ is out of date with tools/gen_graphs:\n${problems}"
                      "Regenerate with: build/bin/sy_gen_graphs --out-dir graphs  (and commit the result)")
endif()
list(LENGTH generated n)
message(STATUS "graphs/: all ${n} generated files match the committed ones")
