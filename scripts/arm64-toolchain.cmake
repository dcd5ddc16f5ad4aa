# Cross-compiling trainbench for arm64 Linux with Debian's aarch64 toolchain
# (g++-aarch64-linux-gnu), against the arm64 libraries unpacked into TRAINBENCH_ARM64_SYSROOT
# by scripts/arm64-test.sh. The tests run under qemu-user (qemu-aarch64).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(sysroot $ENV{TRAINBENCH_ARM64_SYSROOT})
# The toolchain's own libc and libstdc++, then the unpacked libraries; header-only packages
# (CLI11, nlohmann-json) from the build machine.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu ${sysroot} /)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
# What runs an arm64 program here (gtest's test discovery, ctest): the unpacked libraries
# on the guest's library path (zlib's under /lib).
set(CMAKE_CROSSCOMPILING_EMULATOR
    qemu-aarch64;-L;/usr/aarch64-linux-gnu;-E;LD_LIBRARY_PATH=${sysroot}/usr/lib/aarch64-linux-gnu:${sysroot}/lib/aarch64-linux-gnu)
# The unpacked libraries' .pc files, with their paths under the sysroot.
set(ENV{PKG_CONFIG_LIBDIR} ${sysroot}/usr/lib/aarch64-linux-gnu/pkgconfig:${sysroot}/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_SYSROOT_DIR} ${sysroot})
# Headers an arm64 package keeps per architecture (openssl/opensslconf.h). And no fused
# multiply-add: GCC contracts a*b+c into one rounding on aarch64 by default (x86-64's
# baseline has no FMA), which made the same figures differ in their last bit between the two
# (ChunkCodec.ChunksOfEarlierStoresStillDecode under qemu).
set(CMAKE_CXX_FLAGS_INIT "-isystem ${sysroot}/usr/include/aarch64-linux-gnu -ffp-contract=off")
set(CMAKE_C_FLAGS_INIT "-isystem ${sysroot}/usr/include/aarch64-linux-gnu -ffp-contract=off")
# Where the unpacked libraries' own dependencies are (zlib's under /lib).
set(links "-Wl,-rpath-link,${sysroot}/usr/lib/aarch64-linux-gnu -Wl,-rpath-link,${sysroot}/lib/aarch64-linux-gnu")
set(CMAKE_EXE_LINKER_FLAGS_INIT "${links}")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "${links}")
# The relocatable tarball (`cpack -G TGZ`): trainbench-VERSION-Linux-aarch64.tar.gz, its
# bundled libraries from the unpacked arm64 ones (cmake/bundle_libraries.cmake).
set(CPACK_SYSTEM_NAME Linux-aarch64)
set(CPACK_TRAINBENCH_LIBRARY_DIRS ${sysroot}/usr/lib/aarch64-linux-gnu ${sysroot}/lib/aarch64-linux-gnu)
