#include "http/socket_peer.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "base/strings.h"

namespace tb {
namespace {

// "0100007F:1F90" (IPv4) or 32 hex digits and a port (IPv6): the address is printed as the
// 32-bit words of its bytes in this machine's order, the port as a number.
std::optional<SocketEnd> ParseEnd(std::string_view text) {
  size_t colon = text.find(':');
  if (colon == std::string_view::npos || (colon != 8 && colon != 32)) return std::nullopt;
  SocketEnd end;
  end.v6 = colon == 32;
  for (size_t word = 0; word * 8 < colon; ++word) {
    uint32_t w = 0;
    std::string_view hex = text.substr(word * 8, 8);
    if (std::from_chars(hex.data(), hex.data() + 8, w, 16).ptr != hex.data() + 8) return std::nullopt;
    std::memcpy(end.address.data() + word * 4, &w, 4);
  }
  std::string_view port = text.substr(colon + 1);
  unsigned p = 0;
  if (port.empty() ||
      std::from_chars(port.data(), port.data() + port.size(), p, 16).ptr != port.data() + port.size() ||
      p > 0xFFFF)
    return std::nullopt;
  end.port = static_cast<uint16_t>(p);
  return end;
}

std::optional<SocketEnd> EndOf(const sockaddr_storage& a) {
  SocketEnd end;
  if (a.ss_family == AF_INET) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(a);
    std::memcpy(end.address.data(), &in.sin_addr, 4);
    end.port = ntohs(in.sin_port);
    return end;
  }
  if (a.ss_family != AF_INET6) return std::nullopt;
  const auto& in6 = reinterpret_cast<const sockaddr_in6&>(a);
  static constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF};
  end.port = ntohs(in6.sin6_port);
  if (std::memcmp(in6.sin6_addr.s6_addr, kMapped, 12) == 0) {  // an IPv4 peer of a dual-stack socket
    std::memcpy(end.address.data(), in6.sin6_addr.s6_addr + 12, 4);
    return end;
  }
  end.v6 = true;
  std::memcpy(end.address.data(), in6.sin6_addr.s6_addr, 16);
  return end;
}

bool OnLoopback(const SocketEnd& e) {
  if (!e.v6) return e.address[0] == 127;
  static constexpr uint8_t kLoopback6[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  return std::memcmp(e.address.data(), kLoopback6, 16) == 0;
}

}  // namespace

std::optional<uid_t> OwnerInSocketTable(std::string_view table, const SocketEnd& local,
                                        const SocketEnd& remote) {
  for (std::string_view line : Split(table, '\n')) {
    // "  sl  local_address rem_address   st tx_queue:rx_queue tr:tm->when retrnsmt   uid ..."
    std::vector<std::string_view> f = SplitWhitespace(line);
    if (f.size() < 8 || f[0].back() != ':') continue;
    std::optional<SocketEnd> l = ParseEnd(f[1]), r = ParseEnd(f[2]);
    if (!l || !r || !(*l == local) || !(*r == remote)) continue;
    uid_t uid = 0;
    if (std::from_chars(f[7].data(), f[7].data() + f[7].size(), uid).ptr != f[7].data() + f[7].size())
      return std::nullopt;
    return uid;
  }
  return std::nullopt;
}

std::optional<uid_t> LoopbackPeerOwner(int fd, std::string_view proc_root) {
  sockaddr_storage ours{}, theirs{};
  socklen_t n = sizeof ours, m = sizeof theirs;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&ours), &n) != 0 ||
      getpeername(fd, reinterpret_cast<sockaddr*>(&theirs), &m) != 0)
    return std::nullopt;
  std::optional<SocketEnd> server = EndOf(ours), peer = EndOf(theirs);
  if (!server || !peer || !OnLoopback(*peer)) return std::nullopt;
  // In the peer's socket, its end is local and ours remote.
  std::string table = std::string(proc_root) + (peer->v6 ? "/proc/net/tcp6" : "/proc/net/tcp");
  std::ifstream in(table);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return OwnerInSocketTable(text.str(), *peer, *server);
}

std::string PeerIdentity(int fd) {
  if (std::optional<uid_t> uid = LoopbackPeerOwner(fd)) return "uid " + std::to_string(*uid);
  sockaddr_storage theirs{};
  socklen_t m = sizeof theirs;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&theirs), &m) != 0) return "";
  char text[INET6_ADDRSTRLEN] = {};
  const void* address = theirs.ss_family == AF_INET6
                            ? static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(&theirs)->sin6_addr)
                            : static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(&theirs)->sin_addr);
  if (inet_ntop(theirs.ss_family, address, text, sizeof text) == nullptr) return "";
  return std::string("address ") + text;
}

bool IsLoopbackHost(const std::string& host) {
  std::string h =
      host.size() > 2 && host.front() == '[' && host.back() == ']' ? host.substr(1, host.size() - 2) : host;
  auto loopback = [](const sockaddr* a) {
    if (a->sa_family == AF_INET)
      return (ntohl(reinterpret_cast<const sockaddr_in*>(a)->sin_addr.s_addr) >> 24) == 127;
    if (a->sa_family == AF_INET6)
      return IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<const sockaddr_in6*>(a)->sin6_addr);
    return false;
  };
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (h.empty() || getaddrinfo(h.c_str(), nullptr, &hints, &found) != 0) return false;
  bool all = found != nullptr;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) all = all && loopback(a->ai_addr);
  freeaddrinfo(found);
  return all;
}

}  // namespace tb
