# Run by CPack (CPACK_PRE_BUILD_SCRIPTS) on the TGZ's staging directory: copies the shared
# libraries bin/trainbench links into lib/, but glibc's and the C++ runtime's, which every
# x86-64 Linux with a glibc as new as the build machine's has. Libraries trainbench loads
# only when needed (libpq for PostgreSQL stores, cairo and pango for figures) are not
# bundled: they come from the system, and trainbench says which package to install when
# one is missing. A cross build (scripts/arm64-tarball.sh) names where its target's
# libraries are in CPACK_TRAINBENCH_LIBRARY_DIRS.
file(GLOB_RECURSE binaries "${CPACK_TEMPORARY_INSTALL_DIRECTORY}/*/bin/trainbench"
     "${CPACK_TEMPORARY_INSTALL_DIRECTORY}/bin/trainbench")
if(NOT binaries)
  message(FATAL_ERROR "bundle_libraries: no bin/trainbench under ${CPACK_TEMPORARY_INSTALL_DIRECTORY}")
endif()
foreach(binary IN LISTS binaries)
  get_filename_component(prefix "${binary}" DIRECTORY)
  get_filename_component(prefix "${prefix}" DIRECTORY)
  file(GET_RUNTIME_DEPENDENCIES
       EXECUTABLES "${binary}"
       DIRECTORIES ${CPACK_TRAINBENCH_LIBRARY_DIRS}
       RESOLVED_DEPENDENCIES_VAR libraries
       UNRESOLVED_DEPENDENCIES_VAR missing
       PRE_EXCLUDE_REGEXES "^ld-linux" "^linux-vdso" "^libc\\.so" "^libm\\.so" "^libdl\\.so" "^libpthread\\.so"
                           "^librt\\.so" "^libstdc\\+\\+\\.so" "^libgcc_s\\.so")
  if(missing)
    message(FATAL_ERROR "bundle_libraries: cannot find ${missing}")
  endif()
  foreach(library IN LISTS libraries)
    file(COPY "${library}" DESTINATION "${prefix}/lib" FOLLOW_SYMLINK_CHAIN)
  endforeach()
  message(STATUS "bundle_libraries: ${libraries} -> ${prefix}/lib")
endforeach()
