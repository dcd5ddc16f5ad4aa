#include "http/sessions.h"

#include <algorithm>

#include "base/secret.h"
#include "base/strings.h"

namespace tb {

std::string SessionTable::CookieName(int port) { return "trainbench_session_" + std::to_string(port); }

std::string SessionTable::FromCookies(std::string_view cookie_header, const std::string& name) {
  for (std::string_view c : Split(cookie_header, ';')) {
    c = Trim(c);
    if (c.size() > name.size() && StartsWith(c, name) && c[name.size()] == '=')
      return std::string(c.substr(name.size() + 1));
  }
  return "";
}

std::string SessionTable::Create(const std::string& peer) {
  std::string session = RandomHex(32);
  std::lock_guard lock(mu_);
  sessions_.emplace_back(session, peer);
  if (sessions_.size() > kMaxSessions) sessions_.erase(sessions_.begin());
  return session;
}

bool SessionTable::Valid(const std::string& session, const std::string& peer) {
  if (session.empty() || peer.empty()) return false;
  std::lock_guard lock(mu_);
  return std::any_of(sessions_.begin(), sessions_.end(),
                     [&](const auto& s) { return SecretsEqual(s.first, session) && s.second == peer; });
}

}  // namespace tb
