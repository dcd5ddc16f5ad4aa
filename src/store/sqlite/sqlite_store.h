// The embedded default store: one SQLite file in WAL mode (readers never block the
// writer; a crash of trainbench loses only what was not committed), plus a directory
// beside it ("<file>.artifacts/") for large artifacts such as logs.
#pragma once

#include <memory>
#include <string>

#include "store/store.h"

namespace tb {

// Opens or creates the SQLite store at `path`, applying schema migrations.
Result<std::unique_ptr<Store>> OpenSqliteStore(const std::string& path);

}  // namespace tb
