// Helpers every subcommand uses (cli.h).
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "analyze/phases.h"
#include "analyze/report.h"
#include "base/log.h"
#include "base/strings.h"
#include "base/time.h"
#include "cli/cli.h"
#include "collect/gpu_tool_collectors.h"
#include "http/http_server.h"
#include "import/migrate.h"
#include "metrics/catalog.h"
#include "platform/nvml.h"
#include "platform/process.h"
#include "query/energy.h"
#include "query/export.h"
#include "query/summary.h"
#include "run/launcher.h"
#include "schedule/scheduler.h"
#include "serve/serve_api.h"
#include "store/run_tags.h"
#include "store/store.h"
#include "track/tracking_api.h"

namespace tb::cli {

std::string StoreFromEnvironment() {
  const char* env = std::getenv("TRAINBENCH_STORE");
  return env != nullptr && *env != '\0' ? env : kDefaultStore;
}

// Parses "k=v" options; the error names the option and the bad text.
Result<KeyValues> ParseKeyValues(const std::vector<std::string>& items, const char* option) {
  KeyValues out;
  for (const std::string& item : items) {
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Status::InvalidArgument(std::string(option) + " '" + item + "' is not KEY=VALUE");
    }
    out.emplace_back(item.substr(0, eq), item.substr(eq + 1));
  }
  return out;
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string FormatValue(double v, std::string_view unit) {
  if (std::isnan(v) || std::isinf(v)) return FormatDouble(v);
  char buf[64];
  if ((unit == "bytes" || unit == "bytes/s") && std::fabs(v) >= 1024) {
    const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
    double x = v;
    int i = -1;
    while (std::fabs(x) >= 1024 && i < 4) {
      x /= 1024;
      ++i;
    }
    std::snprintf(buf, sizeof buf, "%.1f %s%s", x, units[i], unit == "bytes/s" ? "/s" : "");
  } else {
    std::snprintf(buf, sizeof buf, "%.4g", v);
  }
  return buf;
}

int Fail(const Status& s) {
  LogError(s.message());
  return 1;
}

Result<std::unique_ptr<Store>> OpenStore(const std::string& uri) { return Store::Open(uri); }

// For commands that read: a SQLite store that does not exist is a mistyped path, not a
// new empty store.
Result<std::unique_ptr<Store>> OpenStoreToRead(const std::string& uri) {
  if (!StartsWith(uri, "postgres")) {
    std::string path = StartsWith(uri, "sqlite://") ? uri.substr(9) : uri;
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
      return Status::NotFound("no store at " + path +
                              "; check the path (--store or TRAINBENCH_STORE); `trainbench run` creates one");
    }
  }
  return Store::Open(uri);
}

// A run's duration as ls and show print it: until now while it runs; unknown when its
// trainbench is gone without finishing it (it must not keep growing).
std::string RunDuration(const RunRecord& r, const std::string& status) {
  if (r.end_ms > 0) return FormatDuration(r.end_ms - r.start_ms);
  if (status == "UNFINISHED") return "-";
  if (HasTag(r, kImportedTag)) return "-";  // it ran elsewhere: its end comes with the next import
  return FormatDuration(WallMillis() - r.start_ms);
}

}  // namespace tb::cli
