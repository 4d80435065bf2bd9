# The C++ API reference (docs/api.md): Doxygen over the public headers, include/mend. The `docs`
# target writes it to <build>/docs/api/html and fails on any warning, an undocumented public
# symbol included, so the headers stay documented. Without Doxygen there is no target and no test.
find_package(Doxygen)
if(NOT DOXYGEN_FOUND)
  message(STATUS "Doxygen not found: no `docs` target (the C++ API reference)")
  return()
endif()

set(MEND_DOCS_OUTPUT_DIR "${PROJECT_BINARY_DIR}/docs/api")
set(MEND_DOCS_FILTER "${PROJECT_BINARY_DIR}/docs/digit_separators.sed")
file(CONFIGURE OUTPUT "${MEND_DOCS_FILTER}" CONTENT "s/([0-9])'([0-9])/\\1\\2/g\n")
configure_file("${PROJECT_SOURCE_DIR}/docs/Doxyfile.in" "${PROJECT_BINARY_DIR}/docs/Doxyfile" @ONLY)

file(GLOB_RECURSE mend_public_headers CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/include/mend/*.h")
# Doxygen writes the pages even when it fails on a warning; the stamp, written only after it
# succeeded, is what tells the build the reference is up to date.
add_custom_command(
  OUTPUT "${MEND_DOCS_OUTPUT_DIR}/docs.stamp"
  COMMAND "${CMAKE_COMMAND}" -E make_directory "${MEND_DOCS_OUTPUT_DIR}"
  COMMAND Doxygen::doxygen "${PROJECT_BINARY_DIR}/docs/Doxyfile"
  COMMAND "${CMAKE_COMMAND}" -E touch "${MEND_DOCS_OUTPUT_DIR}/docs.stamp"
  DEPENDS ${mend_public_headers} "${PROJECT_BINARY_DIR}/docs/Doxyfile"
  WORKING_DIRECTORY "${PROJECT_BINARY_DIR}/docs"
  COMMENT "Generating the C++ API reference in ${MEND_DOCS_OUTPUT_DIR}/html"
  VERBATIM)
add_custom_target(docs DEPENDS "${MEND_DOCS_OUTPUT_DIR}/docs.stamp")

if(MEND_BUILD_TESTS)
  add_test(NAME Docs.PublicHeadersAreDocumented
    COMMAND "${CMAKE_COMMAND}" --build "${PROJECT_BINARY_DIR}" --target docs)
  set_tests_properties(Docs.PublicHeadersAreDocumented PROPERTIES LABELS docs
    RESOURCE_LOCK mend_build_tree)
endif()
