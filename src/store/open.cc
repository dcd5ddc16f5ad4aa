// Store::Open: the one place that knows both stores, choosing by the URI.
#include <cstdlib>

#include "base/strings.h"
#include "store/postgres/postgres_store.h"
#include "store/sqlite/sqlite_store.h"
#include "store/store.h"

namespace tb {

Result<std::unique_ptr<Store>> Store::Open(const std::string& uri) {
  if (StartsWith(uri, "postgresql://") || StartsWith(uri, "postgres://")) {
    // Where this machine keeps what the database cannot take yet, and large artifacts.
    auto env = [](const char* name, const std::string& fallback) {
      const char* v = std::getenv(name);
      return v != nullptr && *v != '\0' ? std::string(v) : fallback;
    };
    std::string home = env("HOME", "/tmp");
    return OpenPostgresStore(
        uri, {.spool_directory = env("TRAINBENCH_SPOOL_DIR", home + "/.local/state/trainbench/spool"),
              .artifact_root = env("TRAINBENCH_ARTIFACT_DIR", home + "/.local/share/trainbench/artifacts")});
  }
  std::string path = uri;
  if (StartsWith(uri, "sqlite://")) {
    path = uri.substr(9);  // "sqlite:///abs" keeps its leading '/'
  } else if (uri.find("://") != std::string::npos) {
    return Status::InvalidArgument("unknown store URI '" + uri +
                                   "'; use a path, sqlite:///path/to/trainbench.db or postgresql://host/db");
  }
  if (path.empty()) return Status::InvalidArgument("store URI '" + uri + "' names no file");
  return OpenSqliteStore(path);
}

}  // namespace tb
