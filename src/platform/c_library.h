// C libraries that only some commands need, opened with dlopen when first used instead of
// by the loader at every start: libpq (PostgreSQL stores) and cairo with pango (figures)
// bring about 50 shared libraries between them, which cost every start of trainbench about
// 17 ms on the build machine (docs/PERFORMANCE.md) and kept it from starting at all where
// they are not installed. Each library's functions are a struct of pointers named as the
// library names them, bound once for the process (thread-safe) by a LoadX() function that
// fails with a message saying what to install.
#pragma once

#include <dlfcn.h>

#include <string>
#include <string_view>

#include "base/status.h"

namespace tb {

// Opens `soname` for the rest of the process; Unavailable naming it, what needs it and
// the Debian package to install when it cannot be opened.
Result<void*> OpenCLibrary(const char* soname, std::string_view needed_for, std::string_view package);

[[noreturn]] void AbortMissingLibrary(const Status& why);

// Points `fn` at the function `name` of `library` (opened as `soname`); Unavailable when
// the library has no such function (a version too old).
template <typename F>
Status BindCFunction(void* library, const char* soname, const char* name, F& fn) {
  void* symbol = dlsym(library, name);
  if (symbol == nullptr) {
    return Status::Unavailable(std::string(soname) + " has no function " + name +
                               ": it is older than trainbench needs; upgrade it");
  }
  fn = reinterpret_cast<F>(symbol);
  return Status::Ok();
}

// The functions `loaded` holds; a library used before its LoadX() succeeded is a bug in
// trainbench, which ends the process saying why the library is missing.
template <typename Api>
const Api& RequireLoaded(const Result<const Api*>& loaded) {
  if (!loaded.ok()) AbortMissingLibrary(loaded.status());
  return *loaded.value();
}

}  // namespace tb

// A member `name` of the type of the library's own function `name`.
// NOLINTNEXTLINE(bugprone-macro-parentheses): a declaration, `name` its member's name
#define TB_C_FUNCTION_POINTER(name) decltype(&::name) name = nullptr;
