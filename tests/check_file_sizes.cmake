# Rooms with one purpose (issue 36): no source file of the project is over 700 lines -- C++, Python, CMake, shell
# scripts and the ISA tables, tests and test-case generators included. A file that grows past the limit is split by
# responsibility before more is added to it. Run by ctest (test "file_sizes"):
#   cmake -DROOT=<source dir> -P tests/check_file_sizes.cmake
# Fails listing every file over the limit with its line count. Data (JSON, .npy, BIR samples) is not source.
cmake_minimum_required(VERSION 3.20)
if(NOT ROOT)
  message(FATAL_ERROR "check_file_sizes.cmake: pass -DROOT=<source dir>")
endif()
set(LIMIT 700)
# Files allowed to be longer, each with its reason (a table that is one fact per row and reads best whole).
# Keep this list short; today it is empty.
set(ALLOWED "")

set(patterns)
foreach(ext cpp hpp h cc def py cmake sh)
  list(APPEND patterns ${ROOT}/*.${ext})
endforeach()
file(GLOB_RECURSE files RELATIVE ${ROOT} ${patterns} ${ROOT}/CMakeLists.txt ${ROOT}/scripts/* ${ROOT}/.ci/*)
set(over "")
set(checked 0)
foreach(f ${files})
  # Build trees (build/, build-asan/, ...), run outputs and caches are not sources.
  if(f MATCHES "^(build[^/]*|neuronsim-out[^/]*|\\.git)/" OR f MATCHES "/__pycache__/" OR f MATCHES "^\\{")
    continue()
  endif()
  math(EXPR checked "${checked} + 1")
  # Count newlines (file(STRINGS) would drop empty lines and split a line at each ';').
  file(READ ${ROOT}/${f} text)
  string(REGEX MATCHALL "\n" newlines "${text}")
  list(LENGTH newlines n)
  if(n GREATER LIMIT AND NOT f IN_LIST ALLOWED)
    string(APPEND over "  ${f}: ${n} lines\n")
  endif()
endforeach()
if(over)
  message(FATAL_ERROR "files over ${LIMIT} lines (split each by responsibility, docs/architecture.md says where "
                      "things go):\n${over}")
endif()
message(STATUS "file sizes: ${checked} source files, none over ${LIMIT} lines")
