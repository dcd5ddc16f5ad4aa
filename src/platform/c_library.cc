#include "platform/c_library.h"

#include <cstdio>
#include <cstdlib>

namespace tb {

Result<void*> OpenCLibrary(const char* soname, std::string_view needed_for, std::string_view package) {
  void* library = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    return Status::Unavailable(std::string(needed_for) + " need " + soname + ", which cannot be loaded (" +
                               (why != nullptr ? why : "unknown error") + "): install it (apt-get install " +
                               std::string(package) + ")");
  }
  return library;
}

void AbortMissingLibrary(const Status& why) {
  std::fprintf(stderr, "trainbench: %s\n", why.message().c_str());
  std::abort();
}

}  // namespace tb
