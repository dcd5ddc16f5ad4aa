// Who is at the other end of a TCP connection accepted on this machine's loopback: the user
// that owns the peer's socket, found as identd finds it, from the kernel's socket table
// (/proc/net/tcp and tcp6, where each socket's local and remote endpoints sit beside its
// owner's uid). A server uses it to let its own user's processes in without a secret and to
// refuse every other local user.
//
// Thread-safe; each call reads the table afresh (its cost grows with the sockets open).
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tb {

// One end of a TCP connection as the kernel's table prints it: an IPv4 address (the first
// 4 bytes) or an IPv6 one, and a port.
struct SocketEnd {
  bool v6 = false;
  std::array<uint8_t, 16> address{};
  uint16_t port = 0;
  bool operator==(const SocketEnd&) const = default;
};

// The owner's uid of the socket whose local end is `local` and remote end `remote` in the
// text of /proc/net/tcp (IPv4 ends) or /proc/net/tcp6 (IPv6 ends); nullopt when no line
// has them. Pure.
std::optional<uid_t> OwnerInSocketTable(std::string_view table, const SocketEnd& local,
                                        const SocketEnd& remote);

// The uid owning the other end of the connected socket `fd` when that end is on this
// machine's loopback (127.0.0.0/8, ::1, or IPv4 on loopback mapped into IPv6); nullopt for
// a peer elsewhere, or one that already closed. `proc_root` is where /proc is ("" the real
// one).
std::optional<uid_t> LoopbackPeerOwner(int fd, std::string_view proc_root = "");

// Who is at the other end of `fd`, to bind a browser's session to: "uid N" for a peer on
// loopback whose owner the socket table names (LoopbackPeerOwner), else "address A" (its
// IP address, without the port); "" when the socket has no peer any more.
std::string PeerIdentity(int fd);

// True when `host` is a loopback address (127.0.0.0/8, ::1) or a name that resolves to
// loopback addresses only ("localhost"); "127.example.com" is a name like any other.
bool IsLoopbackHost(const std::string& host);

}  // namespace tb
