// A route of an API that dispatches by a table: one row an endpoint, holding its method, its
// path pattern as the API's docs write it, and the scope it needs. The APIs keep their rows
// and handlers (serve/serve_api.cc, track/tracking_routes.cc); this says how a path matches.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tb {

// `pattern` is the path under the API's prefix, its parts separated by '/'; a part written
// {…} matches any one part of a path; with `rest`, the last {…} takes the rest of the path,
// its '/' kept. `scope`: "read" for a route that changes nothing, "write" for one that does.
struct Route {
  std::string_view method, pattern, scope;
  bool rest = false;
};

// The values a path gave the pattern's {…}, in order.
using RouteCaptures = std::vector<std::string>;

// Whether `path` (under the API's prefix; a trailing '/' ignored) matches `route`'s
// pattern, its method aside; `at` then holds the captured values. Never throws.
bool MatchRoute(const Route& route, std::string_view path, RouteCaptures& at);

}  // namespace tb
