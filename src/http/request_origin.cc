#include "http/request_origin.h"

#include <arpa/inet.h>

#include <algorithm>

#include "base/strings.h"

namespace tb {

std::string HostName(std::string_view host_header) {
  std::string_view name = Trim(host_header);
  if (!name.empty() && name.front() == '[') {
    size_t close = name.find(']');
    name = close == std::string_view::npos ? name.substr(1) : name.substr(1, close - 1);
  } else if (std::count(name.begin(), name.end(), ':') == 1) {
    name = name.substr(0, name.find(':'));
  }
  if (!name.empty() && name.back() == '.') name.remove_suffix(1);  // "localhost." is localhost
  return ToLower(name);
}

bool HostAllowed(std::string_view host_header, const std::vector<std::string>& names) {
  if (Trim(host_header).empty()) return true;
  std::string name = HostName(host_header);
  unsigned char address[16];
  if (inet_pton(AF_INET, name.c_str(), address) == 1 || inet_pton(AF_INET6, name.c_str(), address) == 1)
    return true;
  if (name == "localhost" || (name.size() > 10 && name.ends_with(".localhost"))) return true;
  return std::any_of(names.begin(), names.end(),
                     [&](const std::string& n) { return !n.empty() && HostName(n) == name; });
}

std::string CrossOriginWrite(std::string_view method, std::string_view host_header, std::string_view origin,
                             std::string_view fetch_site) {
  if (method == "GET" || method == "HEAD" || method == "OPTIONS") return "";
  std::string site = ToLower(Trim(fetch_site));
  if (!site.empty() && site != "same-origin" && site != "none")
    return "the browser says this request came from a page of another site (Sec-Fetch-Site: " + site + ")";
  std::string from = ToLower(Trim(origin));
  if (from.empty()) return "";
  std::string host = ToLower(Trim(host_header));
  if (from == "http://" + host || from == "https://" + host) return "";
  return "the browser says this request came from a page of " + std::string(origin) + ", not this server's";
}

}  // namespace tb
