#include "platform/c_library.h"

#include <cstdio>
#include <cstdlib>

namespace tb {

Result<void*> OpenCLibrary(const CLibrary& l) {
  void* library = dlopen(l.soname, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    return Status::Unavailable(std::string(l.needed_for) + " need " + l.soname +
                               ", which cannot be loaded (" + (why != nullptr ? why : "unknown error") +
                               "): install it (Debian, Ubuntu: apt-get install " + l.package +
                               "; other systems: the package that provides " + l.soname + ")");
  }
  return library;
}

void AbortMissingLibrary(const Status& why) {
  std::fprintf(stderr, "trainbench: %s\n", why.message().c_str());
  std::abort();
}

}  // namespace tb
