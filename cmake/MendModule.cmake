# mend_private_include(TARGET NAME)
#
# Lets TARGET include the private headers of module NAME, and no other module's: written as
# "NAME/x.h" they resolve through a directory of the build tree that holds a single entry, NAME, a
# symbolic link to src/NAME. With all of src/ on the path a module could include any other's
# private header; this way `#include "store/pg_rows.h"` in src/memory does not compile.
function(mend_private_include target name)
  set(dir "${PROJECT_BINARY_DIR}/private_include/${name}")
  if(NOT IS_SYMLINK "${dir}/${name}")
    file(MAKE_DIRECTORY "${dir}")
    file(CREATE_LINK "${PROJECT_SOURCE_DIR}/src/${name}" "${dir}/${name}" SYMBOLIC)
  endif()
  target_include_directories(${target} PRIVATE "${dir}")
endfunction()

# mend_module(NAME DEPS dep... [PRIVATE_DEPS dep...])
#
# Declares the library target mend_<NAME> from every .cc file in src/<NAME>/ (globbed, so adding a
# file needs no edit here). Public headers live in include/mend/<NAME>/, private ones beside the
# sources, visible to this module only (mend_private_include). DEPS are linked PUBLIC (other mend
# modules by their target name, e.g. mend_base).
function(mend_module name)
  cmake_parse_arguments(ARG "" "" "DEPS;PRIVATE_DEPS" ${ARGN})
  file(GLOB sources CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/*.cc")
  list(FILTER sources EXCLUDE REGEX ".*/main\\.cc$")
  if(NOT sources)
    # A module whose first sources have not landed yet: headers only.
    add_library(mend_${name} INTERFACE)
    target_include_directories(mend_${name} INTERFACE "${PROJECT_SOURCE_DIR}/include")
    target_link_libraries(mend_${name} INTERFACE ${ARG_DEPS})
    return()
  endif()
  add_library(mend_${name} STATIC ${sources})
  target_include_directories(mend_${name} PUBLIC "${PROJECT_SOURCE_DIR}/include")
  mend_private_include(mend_${name} ${name})
  target_link_libraries(mend_${name} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
endfunction()

# mend_module_test(NAME DEPS dep... [LABELS label...])
#
# One test binary per module: every *_test.cc in tests/<NAME>/ becomes part of mend_<NAME>_test,
# registered with ctest through gtest_discover_tests under the given labels (default: unit).
function(mend_module_test name)
  cmake_parse_arguments(ARG "" "" "DEPS;LABELS" ${ARGN})
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  file(GLOB sources CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/*_test.cc")
  if(NOT sources)
    return()
  endif()
  add_executable(mend_${name}_test ${sources})
  target_include_directories(mend_${name}_test PRIVATE "${PROJECT_SOURCE_DIR}/src" "${PROJECT_SOURCE_DIR}")
  target_link_libraries(mend_${name}_test PRIVATE ${ARG_DEPS} GTest::gmock GTest::gtest_main)
  gtest_discover_tests(mend_${name}_test
    PROPERTIES LABELS "${ARG_LABELS}"
    DISCOVERY_TIMEOUT 60)
endfunction()
