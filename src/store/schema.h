// The store's schema, written once for both dialects: migrations applied in order, the
// store recording how many it has seen. Never edit a shipped migration: append one.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace tb {

enum class Dialect { kSqlite, kPostgres };

// The schema version this build writes; a store with a higher one is refused.
inline constexpr int kSchemaVersion = 10;

// The SQL scripts of the migrations, kSchemaVersion of them, in `dialect`.
std::vector<std::string> Migrations(Dialect dialect);

// OK when a store at `version` can be opened by this build; otherwise an error naming
// `store` that says to upgrade trainbench.
Status CheckSchemaVersion(int version, const std::string& store);

}  // namespace tb
