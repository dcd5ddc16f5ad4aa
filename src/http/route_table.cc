#include "http/route_table.h"

#include "base/strings.h"

namespace tb {

bool MatchRoute(const Route& route, std::string_view path, RouteCaptures& at) {
  std::vector<std::string_view> got = Split(path, '/');
  while (!got.empty() && got.back().empty()) got.pop_back();
  std::vector<std::string_view> want = Split(route.pattern, '/');
  if (route.rest ? got.size() < want.size() : got.size() != want.size()) return false;
  at.clear();
  for (size_t i = 0; i < want.size(); ++i) {
    bool any = !want[i].empty() && want[i].front() == '{';
    if (!any) {
      if (want[i] != got[i]) return false;
      continue;
    }
    if (route.rest && i + 1 == want.size()) {  // the rest of the path, its '/' kept
      std::string rest(got[i]);
      for (size_t k = i + 1; k < got.size(); ++k) rest += Concat({"/", got[k]});
      at.push_back(std::move(rest));
    } else {
      at.emplace_back(got[i]);
    }
  }
  return true;
}

}  // namespace tb
