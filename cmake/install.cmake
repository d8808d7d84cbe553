# Installing tasklens like a tool: `cmake --install build --prefix P` gives
#   P/bin/tasklens                              the command
#   P/lib/tasklens/libtasklens_recorder.so      the recorder it preloads into programs
#   P/lib/tasklens/libomp.so.5                  LLVM 16's OpenMP runtime it records with
#   P/lib/tasklens/tasklens-runtime-calibration{,-gcc} empty tasks that time the runtime's own cost
#   P/include/tasklens/{tasklens.h,tbb.h,tbb_detail.h} the annotation header, oneTBB's wrappers
#   P/<libdir>/cmake/tasklens/                  find_package(tasklens): tasklens::headers
#   P/share/man/man1/tasklens.1                 the man page, from the commands' --help
#   P/share/bash-completion/completions/tasklens
# so that P/bin/tasklens works from any directory once the build tree is gone (record_cmd.cpp looks
# for the recorder and the runtime in ../lib/tasklens next to its binary first), and
# `cpack -G DEB` (in the build directory) makes a Debian package of the same files.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TASKLENS_PRIVATE_LIBDIR "lib/tasklens")  # fixed: record.cpp finds it as ../lib/tasklens
install(TARGETS tasklens RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS tasklens_recorder LIBRARY DESTINATION ${TASKLENS_PRIVATE_LIBDIR})
if(TARGET tasklens_runtime_calibration)
  install(PROGRAMS ${TASKLENS_CALIBRATION_OUTPUTS} DESTINATION ${TASKLENS_PRIVATE_LIBDIR})
endif()
if(TASKLENS_OMP_RUNTIME AND EXISTS "${TASKLENS_OMP_RUNTIME}")
  install(FILES "${TASKLENS_OMP_RUNTIME}" DESTINATION ${TASKLENS_PRIVATE_LIBDIR})
endif()

add_library(tasklens_headers INTERFACE)
add_library(tasklens::headers ALIAS tasklens_headers)
target_include_directories(tasklens_headers INTERFACE
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
set_target_properties(tasklens_headers PROPERTIES EXPORT_NAME headers)
install(TARGETS tasklens_headers EXPORT tasklensTargets)
install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/tasklens" DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
set(TASKLENS_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/tasklens")
install(EXPORT tasklensTargets NAMESPACE tasklens:: DESTINATION ${TASKLENS_CMAKE_DIR})
configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/tasklensConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/tasklensConfig.cmake" INSTALL_DESTINATION ${TASKLENS_CMAKE_DIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR)
write_basic_package_version_file("${PROJECT_BINARY_DIR}/tasklensConfigVersion.cmake"
  COMPATIBILITY SameMajorVersion)
install(FILES "${PROJECT_BINARY_DIR}/tasklensConfig.cmake"
  "${PROJECT_BINARY_DIR}/tasklensConfigVersion.cmake" DESTINATION ${TASKLENS_CMAKE_DIR})

# The man page and the completion, from the built command's help texts.
set(TASKLENS_DOCS_DIR "${PROJECT_BINARY_DIR}/share")
add_custom_command(
  OUTPUT "${TASKLENS_DOCS_DIR}/tasklens.1" "${TASKLENS_DOCS_DIR}/tasklens.bash"
  COMMAND ${CMAKE_COMMAND} -E make_directory "${TASKLENS_DOCS_DIR}"
  COMMAND ${CMAKE_COMMAND} -DTASKLENS=$<TARGET_FILE:tasklens> -DVERSION=${PROJECT_VERSION}
          -DOUT_DIR=${TASKLENS_DOCS_DIR} -P "${PROJECT_SOURCE_DIR}/cmake/make_docs.cmake"
  DEPENDS tasklens "${PROJECT_SOURCE_DIR}/cmake/make_docs.cmake"
  COMMENT "Writing the man page and the bash completion from tasklens --help"
  VERBATIM)
add_custom_target(tasklens_docs ALL
  DEPENDS "${TASKLENS_DOCS_DIR}/tasklens.1" "${TASKLENS_DOCS_DIR}/tasklens.bash")
install(FILES "${TASKLENS_DOCS_DIR}/tasklens.1" DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES "${TASKLENS_DOCS_DIR}/tasklens.bash"
  DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME tasklens)

# `cpack -G DEB`: a package that installs with `apt-get install ./tasklens_*.deb` on Debian 12.
set(CPACK_PACKAGE_NAME tasklens)
set(CPACK_PACKAGE_VENDOR "tasklens")
set(CPACK_PACKAGE_CONTACT "tasklens developers <tasklens@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "parallelism profiler for OpenMP and oneTBB programs (work, span, what-if)")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
# addr2line (binutils) names the code; the recorder and the runtime link these at run time.
set(CPACK_DEBIAN_PACKAGE_DEPENDS
  "libc6 (>= 2.36), libstdc++6 (>= 12), libgcc-s1, liblz4-1, libzstd1, binutils")
set(CPACK_GENERATOR DEB)
include(CPack)
