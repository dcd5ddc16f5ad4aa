# CPack's per-generator settings (CPACK_PROJECT_CONFIG_FILE).
#   DEB: installs under /usr and depends on Debian's shared libraries (CMakeLists.txt).
#   TGZ: a relocatable tarball for GPU servers that are not Debian and where users have no
#        root: trainbench-VERSION-Linux/{bin,lib,share}; bin/trainbench is stripped and finds
#        the shared libraries it links (all but glibc and libstdc++) in lib/ beside it
#        (RUNPATH $ORIGIN/../lib); see bundle_libraries.cmake.
if(CPACK_GENERATOR STREQUAL "TGZ")
  set(CPACK_PACKAGING_INSTALL_PREFIX "/")
  set(CPACK_STRIP_FILES ON)
  set(CPACK_PRE_BUILD_SCRIPTS "${CMAKE_CURRENT_LIST_DIR}/bundle_libraries.cmake")
endif()
