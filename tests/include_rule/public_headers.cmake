# cmake -DSOURCE_DIR=<repo> -P public_headers.cmake
#
# Checks the public headers, include/mend/**.h, as tests/include_rule/CMakeLists.txt registers it:
#   - a public header includes, in quotes, only public headers ("mend/<module>/x.h"): a quoted
#     include of anything else names a private header of src/ that a user of the installed
#     library does not have;
#   - the umbrella header mend/mend.h includes every other public header.
# Prints every violation and fails when there is one.
file(GLOB_RECURSE headers RELATIVE "${SOURCE_DIR}/include" "${SOURCE_DIR}/include/mend/*.h")
list(SORT headers)
file(STRINGS "${SOURCE_DIR}/include/mend/mend.h" umbrella_lines REGEX "^#include ")
set(failures 0)
foreach(header IN LISTS headers)
  file(STRINGS "${SOURCE_DIR}/include/${header}" quoted REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
  foreach(line IN LISTS quoted)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]*)\".*" "\\1" included "${line}")
    if(NOT included MATCHES "^mend/[a-z0-9_]+/[a-z0-9_]+\\.h$"
       OR NOT EXISTS "${SOURCE_DIR}/include/${included}")
      message("include/${header} includes \"${included}\", which is not a public header")
      math(EXPR failures "${failures} + 1")
    endif()
  endforeach()
  if(NOT header STREQUAL "mend/mend.h")
    list(FIND umbrella_lines "#include \"${header}\"" found)
    if(found EQUAL -1)
      message("include/mend/mend.h does not include \"${header}\"")
      math(EXPR failures "${failures} + 1")
    endif()
  endif()
endforeach()
if(failures GREATER 0)
  message(FATAL_ERROR "${failures} problem(s) with the public headers")
endif()
list(LENGTH headers count)
message("${count} public headers checked")
