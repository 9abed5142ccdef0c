# The layer rule isa <- io <- engines <- sim (docs/architecture.md), checked on the sources as they are: a file of
# a layer includes headers of its own layer and the layers below it only. Run by ctest (test "layers"):
#   cmake -DROOT=<source dir> -P tests/check_layers.cmake
# Fails listing every offending `#include` with its file. sim/ (and the CLI and Python module above it)
# may include every layer, so only isa, io and engines are checked.
cmake_minimum_required(VERSION 3.20)
if(NOT ROOT)
  message(FATAL_ERROR "check_layers.cmake: pass -DROOT=<source dir>")
endif()

set(ALLOWED_isa isa)
set(ALLOWED_io isa io)
set(ALLOWED_engines isa io engines)
# lowering/ (the lowering library) sits on the builder, in isa.
set(ALLOWED_lowering isa)

set(violations "")
set(checked 0)
foreach(layer isa io engines lowering)
  file(GLOB_RECURSE files ${ROOT}/${layer}/*.cpp ${ROOT}/${layer}/*.hpp ${ROOT}/${layer}/*.def
       ${ROOT}/include/neuronsim/${layer}/*.hpp ${ROOT}/include/neuronsim/${layer}/*.def)
  foreach(f ${files})
    math(EXPR checked "${checked} + 1")
    # Only the include lines (a whole C++ file would not survive as a CMake list: brackets and semicolons).
    file(STRINGS ${f} lines REGEX "^[ \t]*#[ \t]*include")
    foreach(line IN LISTS lines)
      # "neuronsim/<layer>/..." (public headers) or "<layer>/..." (private headers of a layer directory)
      if(line MATCHES "^[ \t]*#[ \t]*include[ \t]*[\"<](neuronsim/)?(isa|io|engines|sim)/")
        set(target ${CMAKE_MATCH_2})
        if(NOT target IN_LIST ALLOWED_${layer})
          file(RELATIVE_PATH rel ${ROOT} ${f})
          string(STRIP "${line}" line)
          string(APPEND violations "  ${rel}: ${line}  (layer ${layer} may include only: ${ALLOWED_${layer}})\n")
        endif()
      endif()
    endforeach()
  endforeach()
endforeach()

if(checked EQUAL 0)
  message(FATAL_ERROR "check_layers.cmake: no source files found under ${ROOT}")
endif()
if(violations)
  message(FATAL_ERROR "layer rule isa <- io <- engines <- sim broken (docs/architecture.md):\n${violations}")
endif()
message(STATUS "layers: ${checked} files of isa, io and engines include only their own layer and those below it")
