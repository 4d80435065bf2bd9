# mend_module(NAME DEPS dep... [PRIVATE_DEPS dep...])
#
# Declares the library target mend_<NAME> from every .cc file in src/<NAME>/ (globbed, so adding a
# file needs no edit here). Public headers live in include/mend/<NAME>/, private ones beside the
# sources. DEPS are linked PUBLIC (other mend modules by their target name, e.g. mend_base).
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
  target_include_directories(mend_${name}
    PUBLIC "${PROJECT_SOURCE_DIR}/include"
    PRIVATE "${PROJECT_SOURCE_DIR}/src")
  target_link_libraries(mend_${name} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
endfunction()

# mend_module_test(NAME DEPS dep... [LABELS label...])
#
# One test binary per module: every *_test.cc in tests/<NAME>/ becomes part of mend_<NAME>_test,
# registered with ctest through gtest_discover_tests under the given labels (default: unit).
# Modules named in MEND_SANITIZED_MODULES also get the label `sanitize` (see mend_sanitize_label).
function(mend_module_test name)
  cmake_parse_arguments(ARG "" "" "DEPS;LABELS" ${ARGN})
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  mend_sanitize_label(ARG_LABELS ${name})
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

# The modules whose tests run in CI's sanitizer pass (`scripts/test asan-core`): the ones that
# parse, encode and queue bytes (files, WAL records, HTTP and SSE bodies, OTLP, SQLite and libpq
# rows, cases and editor replies) and the fake server. The full suite still runs under the
# sanitizers with `scripts/test asan`.
set(MEND_SANITIZED_MODULES base lessonq llm obs store memory improve support)

# Appends the label `sanitize` to the list variable `labels_var` when `module` is one of
# MEND_SANITIZED_MODULES.
function(mend_sanitize_label labels_var module)
  if(module IN_LIST MEND_SANITIZED_MODULES)
    set(${labels_var} ${${labels_var}} sanitize PARENT_SCOPE)
  endif()
endfunction()
