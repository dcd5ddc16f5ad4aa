// C libraries that only some commands need, opened with dlopen when first used instead of
// by the loader at every start: libpq (PostgreSQL stores) and cairo with pango (figures)
// bring about 50 shared libraries between them, whose loading every start of trainbench
// paid (bench/startup.sh, docs/PERFORMANCE.md) and which kept it from starting at all where
// they are not installed. Each library's functions are a struct of
// pointers named as the library names them, bound once for the process (thread-safe) by
// LoadCLibrary<Api>(), which fails with a message saying what to install.
#pragma once

#include <dlfcn.h>

#include <functional>
#include <string>

#include "base/status.h"

namespace tb {

// A library as its users are told about it when it is missing.
struct CLibrary {
  const char* soname;      // "libpq.so.5"
  const char* needed_for;  // "PostgreSQL stores"
  const char* package;     // the Debian package that installs it: "libpq5"
};

// Opens the library for the rest of the process; Unavailable naming it, what needs it and
// the Debian package to install when it cannot be opened.
Result<void*> OpenCLibrary(const CLibrary& library);

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

// An Api is a struct with `static constexpr CLibrary kLibrary` and
// TB_C_LIBRARY_FUNCTIONS(LIST), LIST an X-macro naming the functions it uses.
// LoadCLibrary<Api>() opens and binds it the first time it is asked (once for the
// process, thread-safe) and then answers the same each time: its functions, or why they
// cannot be had.
template <typename Api>
Result<const Api*> LoadCLibrary() {
  static const Result<Api> loaded = []() -> Result<Api> {
    Result<void*> library = OpenCLibrary(Api::kLibrary);
    if (!library.ok()) return library.status();
    Api api;
    TB_RETURN_IF_ERROR(api.Bind(*library));
    return api;
  }();
  if (!loaded.ok()) return loaded.status();
  return &loaded.value();
}

// Whether Api's library can be used: what an entry point asks before it draws or connects.
template <typename Api>
Status CLibraryAvailable() {
  Result<const Api*> loaded = LoadCLibrary<Api>();
  return loaded.ok() ? Status::Ok() : loaded.status();
}

// The functions of Api, for code that runs only after LoadCLibrary<Api>() succeeded (the
// command's entry point asks it first and says what to install); otherwise a bug in
// trainbench, which ends the process saying why the library is missing.
template <typename Api>
const Api& LoadedCLibrary() {
  static const Api& api = [] {
    Result<const Api*> loaded = LoadCLibrary<Api>();
    if (!loaded.ok()) AbortMissingLibrary(loaded.status());
    return std::cref(**loaded);
  }();
  return api;
}

}  // namespace tb

// A member `name` of the type of the library's own function `name`.
// NOLINTNEXTLINE(bugprone-macro-parentheses): a declaration, `name` its member's name
#define TB_C_FUNCTION_POINTER(name) decltype(&::name) name = nullptr;
// In Bind: binds the member `name`, or returns why it cannot be.
#define TB_C_BIND(name) TB_RETURN_IF_ERROR(::tb::BindCFunction(library, kLibrary.soname, #name, this->name));
// An Api's members: a pointer for each function LIST names, and Bind, which points them
// at the opened library's functions.
#define TB_C_LIBRARY_FUNCTIONS(LIST) \
  LIST(TB_C_FUNCTION_POINTER)        \
  Status Bind(void* library) {       \
    LIST(TB_C_BIND)                  \
    return Status::Ok();             \
  }
