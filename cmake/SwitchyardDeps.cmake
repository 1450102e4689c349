# Dependencies come from Debian packages; each check names the package to
# install when it fails.
include(CheckIncludeFile)

function(sy_require_library var lib header pkg)
  find_library(${var}_LIB NAMES ${lib})
  find_path(${var}_INCLUDE NAMES ${header})
  if(NOT ${var}_LIB OR NOT ${var}_INCLUDE)
    message(FATAL_ERROR "Switchyard needs ${header} and lib${lib}: install the Debian package '${pkg}' (apt-get install ${pkg})")
  endif()
  add_library(sy::${lib} UNKNOWN IMPORTED)
  set_target_properties(sy::${lib} PROPERTIES IMPORTED_LOCATION "${${var}_LIB}"
                        INTERFACE_INCLUDE_DIRECTORIES "${${var}_INCLUDE}")
endfunction()

# libdl (part of libc6 on Debian 12; still checked so a broken toolchain says so)
find_library(SY_DL_LIB NAMES dl)
if(NOT SY_DL_LIB)
  message(FATAL_ERROR "Switchyard needs libdl: install the Debian package 'libc6-dev'")
endif()

sy_require_library(SY_INIH inih ini.h libinih-dev)
sy_require_library(SY_MD md sha2.h libmd-dev)  # sha256 pins of plugin files
sy_require_library(SY_PROTOBUF_C protobuf-c protobuf-c/protobuf-c.h libprotobuf-c-dev)

find_path(SY_UTHASH_INCLUDE NAMES uthash.h)
if(NOT SY_UTHASH_INCLUDE)
  message(FATAL_ERROR "Switchyard needs uthash.h: install the Debian package 'uthash-dev'")
endif()
add_library(sy::uthash INTERFACE IMPORTED)
set_target_properties(sy::uthash PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${SY_UTHASH_INCLUDE}")

find_program(SY_PROTOC_C NAMES protoc-c)
if(NOT SY_PROTOC_C)
  message(FATAL_ERROR "Switchyard needs protoc-c to generate the ONNX decoder: install the Debian package 'protobuf-c-compiler'")
endif()

find_package(Threads REQUIRED)
