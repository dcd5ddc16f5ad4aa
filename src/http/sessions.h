// The browser sessions of one HTTP server (HttpServerOptions::token): a person opens a page
// once as /?token=TOKEN and the browser gets a cookie holding a random session id, never the
// token. A session is bound to who opened it and to the server's port:
// - its cookie is named for the port, so two servers on one machine keep their own;
// - it passes only for the peer that opened it (http/socket_peer.h PeerIdentity: the same
//   local user, or the same address), because a browser sends a host's cookies to every
//   port of that host: another local user's web server on another port receives the
//   cookie, and replaying it from its own process would otherwise open this server.
//
// Thread-safe.
#pragma once

#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tb {

class SessionTable {
 public:
  // The cookie's name on a server listening on `port`.
  static std::string CookieName(int port);
  // The session id in a Cookie header for this cookie name, "" for none.
  static std::string FromCookies(std::string_view cookie_header, const std::string& name);
  // A new session for `peer`, remembered (the oldest forgotten beyond kMaxSessions).
  std::string Create(const std::string& peer);
  // Whether `session` was created, and for this `peer`; compared in constant time.
  bool Valid(const std::string& session, const std::string& peer);

  static constexpr size_t kMaxSessions = 1024;

 private:
  std::mutex mu_;
  std::vector<std::pair<std::string, std::string>> sessions_;  // id and peer, oldest first
};

}  // namespace tb
