# .ci/cross-macos's toolchain: CMake configures ksearch as it would on an Apple silicon Mac
# (CMAKE_SYSTEM_NAME Darwin, so every APPLE branch of CMakeLists.txt is taken) and compiles
# every object with zig's clang for aarch64-macos 14.  Nothing is linked: the macOS
# libraries ksearch links (libcurl, sqlite, libfyaml, jansson, libmlx) are not here, so each
# link and archive step only touches its output.  $KS_CROSS_BIN holds the cc and c++
# wrappers .ci/cross-macos writes.
set(CMAKE_SYSTEM_NAME Darwin)
set(CMAKE_SYSTEM_VERSION 23.0) # macOS 14
set(CMAKE_SYSTEM_PROCESSOR arm64)
set(CMAKE_OSX_DEPLOYMENT_TARGET 14.0)
set(CMAKE_OSX_SYSROOT "")
set(CMAKE_C_COMPILER $ENV{KS_CROSS_BIN}/cc)
set(CMAKE_CXX_COMPILER $ENV{KS_CROSS_BIN}/c++)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
# nothing is linked, so nothing is renamed inside a binary
set(CMAKE_INSTALL_NAME_TOOL "${CMAKE_COMMAND}")
foreach(lang C CXX)
  set(CMAKE_${lang}_LINK_EXECUTABLE "<CMAKE_COMMAND> -E touch <TARGET>")
  set(CMAKE_${lang}_CREATE_STATIC_LIBRARY "<CMAKE_COMMAND> -E touch <TARGET>")
  set(CMAKE_${lang}_ARCHIVE_CREATE "<CMAKE_COMMAND> -E touch <TARGET>")
  set(CMAKE_${lang}_ARCHIVE_APPEND "<CMAKE_COMMAND> -E touch <TARGET>")
  set(CMAKE_${lang}_ARCHIVE_FINISH "<CMAKE_COMMAND> -E touch <TARGET>")
endforeach()
# the host's CUDA is no Mac's
set(CMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit ON)
