# What `cmake --install` puts in a prefix (docs/install.md): libmend as a static archive and, with
# MEND_SHARED, as a shared library whose SONAME carries the major version; the public headers under
# include/mend with the umbrella mend/mend.h; the CMake package (mendConfig.cmake, its version file
# and the exported targets) and mend.pc; the `mend` binary, its man pages and its bash and zsh
# completion.
#
# libmend is made of the objects of every library module (docs/architecture.md), so a program links
# one library; the per-module targets of the package (mend::agent, mend::memory, ...) name the part
# of the API a program uses and all resolve to that library.

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(MEND_LIBRARY_MODULES base db net obs llm store mcp memory lessonq agent reflexion heal improve proxy app
                         server)

set(mend_objects "")
foreach(module IN LISTS MEND_LIBRARY_MODULES)
  list(APPEND mend_objects "$<TARGET_OBJECTS:mend_${module}>")
endforeach()

# What a program linking libmend needs besides it. The public headers include nlohmann/json,
# sqlite3.h and libpq-fe.h, so those are usage requirements of both forms; the static archive also
# needs every library the modules call.
set(mend_public_deps Threads::Threads nlohmann_json::nlohmann_json SQLite::SQLite3
                     PostgreSQL::PostgreSQL)
set(mend_private_deps CURL::libcurl OpenSSL::SSL OpenSSL::Crypto ZLIB::ZLIB PkgConfig::TOMLPP
                      PkgConfig::RE2 PkgConfig::HTTPLIB)

add_library(mend_static STATIC ${mend_objects})
set_target_properties(mend_static PROPERTIES OUTPUT_NAME mend EXPORT_NAME mend_static)
target_include_directories(mend_static INTERFACE "$<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>")
target_link_libraries(mend_static INTERFACE ${mend_public_deps} ${mend_private_deps})
target_compile_features(mend_static INTERFACE cxx_std_20)
set(mend_installed_libraries mend_static)

if(MEND_SHARED)
  add_library(mend_shared SHARED ${mend_objects})
  set_target_properties(mend_shared PROPERTIES
    OUTPUT_NAME mend
    EXPORT_NAME mend_shared
    VERSION ${PROJECT_VERSION}
    SOVERSION ${PROJECT_VERSION_MAJOR})
  target_include_directories(mend_shared INTERFACE "$<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>")
  target_link_libraries(mend_shared PUBLIC ${mend_public_deps} PRIVATE ${mend_private_deps})
  target_compile_features(mend_shared INTERFACE cxx_std_20)
  # A shared library that leaves a symbol undefined fails here rather than in a user's link.
  target_link_options(mend_shared PRIVATE "LINKER:--no-undefined")
  list(APPEND mend_installed_libraries mend_shared)
endif()

install(TARGETS ${mend_installed_libraries}
  EXPORT mendTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT dev)
install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/mend"
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  COMPONENT dev
  FILES_MATCHING PATTERN "*.h")

set(mend_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/mend)
install(EXPORT mendTargets
  NAMESPACE mend::
  DESTINATION ${mend_cmake_dir}
  COMPONENT dev)
string(REPLACE ";" " " MEND_LIBRARY_MODULES_TEXT "${MEND_LIBRARY_MODULES}")
configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/mendConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/mendConfig.cmake"
  INSTALL_DESTINATION ${mend_cmake_dir})
write_basic_package_version_file("${PROJECT_BINARY_DIR}/mendConfigVersion.cmake"
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMajorVersion)
install(FILES "${PROJECT_BINARY_DIR}/mendConfig.cmake" "${PROJECT_BINARY_DIR}/mendConfigVersion.cmake"
  DESTINATION ${mend_cmake_dir}
  COMPONENT dev)

configure_file("${PROJECT_SOURCE_DIR}/cmake/mend.pc.in" "${PROJECT_BINARY_DIR}/mend.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/mend.pc"
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig
  COMPONENT dev)

install(TARGETS mend RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
