// Who is calling, from the connection itself: the kernel's socket table read as identd
// reads it, and a server that lets its own user's processes in without a secret and
// refuses another local user's.
#include "http/socket_peer.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "http/http_server.h"

namespace tb {
namespace {

SocketEnd V4(const char* address, uint16_t port) {
  SocketEnd e;
  inet_pton(AF_INET, address, e.address.data());
  e.port = port;
  return e;
}

SocketEnd V6(const char* address, uint16_t port) {
  SocketEnd e;
  e.v6 = true;
  inet_pton(AF_INET6, address, e.address.data());
  e.port = port;
  return e;
}

// Lines as a little-endian Linux prints them: a listening socket, the client's end of a
// connection (uid 1001) and the server's end (uid 0).
constexpr const char* kTcp =
    "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
    "   0: 0100007F:A4F1 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 31337 1 0 "
    "100 0 0 "
    "10 0\n"
    "   1: 0100007F:D2A6 0100007F:A4F1 01 00000000:00000000 00:00000000 00000000  1001        0 31338 1 0 20 "
    "4 30 "
    "10 -1\n"
    "   2: 0100007F:A4F1 0100007F:D2A6 01 00000000:00000000 00:00000000 00000000     0        0 31339 1 0 20 "
    "4 30 "
    "10 -1\n";

constexpr const char* kTcp6 =
    "  sl  local_address                         remote_address                        st tx_queue rx_queue "
    "tr "
    "tm->when retrnsmt   uid  timeout inode\n"
    "   0: 00000000000000000000000001000000:9C41 00000000000000000000000001000000:1F90 01 00000000:00000000 "
    "00:00000000 00000000    65534        0 4242 1 0 20 4 30 10 -1\n";

TEST(SocketPeerTest, TheOwnerOfTheOtherEndIsReadFromTheSocketTable) {
  EXPECT_EQ(OwnerInSocketTable(kTcp, V4("127.0.0.1", 0xD2A6), V4("127.0.0.1", 0xA4F1)), 1001u);
  EXPECT_EQ(OwnerInSocketTable(kTcp, V4("127.0.0.1", 0xA4F1), V4("127.0.0.1", 0xD2A6)), 0u);
  EXPECT_EQ(OwnerInSocketTable(kTcp, V4("127.0.0.1", 0xD2A7), V4("127.0.0.1", 0xA4F1)), std::nullopt);
  EXPECT_EQ(OwnerInSocketTable(kTcp6, V6("::1", 0x9C41), V6("::1", 0x1F90)), 65534u);
  EXPECT_EQ(OwnerInSocketTable("garbage\n 0: zz:zz", V4("127.0.0.1", 1), V4("127.0.0.1", 2)), std::nullopt);
}

TEST(SocketPeerTest, AConnectionFromThisProcessIsOurs) {
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t n = sizeof a;
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(listen(listener, 1), 0);
  getsockname(listener, reinterpret_cast<sockaddr*>(&a), &n);
  int client = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_EQ(connect(client, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  int accepted = accept(listener, nullptr, nullptr);
  ASSERT_GE(accepted, 0);
  EXPECT_EQ(LoopbackPeerOwner(accepted), geteuid());
  // A root without the table: nobody can be named.
  EXPECT_EQ(LoopbackPeerOwner(accepted, "/nonexistent"), std::nullopt);
  close(accepted);
  close(client);
  close(listener);
}

// The HTTP status another user gets from `url`, asked from a child process that became
// `uid` (needs root; -1 when it could not ask).
int StatusAs(uid_t uid, int port, const std::string& header = "") {
  int out[2];
  if (pipe(out) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    close(out[0]);
    int status = -1;
    if (setgid(uid) == 0 && setuid(uid) == 0) {
      httplib::Client c("127.0.0.1", port);
      httplib::Headers h;
      if (!header.empty()) h.emplace("Authorization", header);
      if (auto r = c.Get("/api/x", h)) status = r->status;
    }
    ssize_t ignored = write(out[1], &status, sizeof status);
    (void)ignored;
    _exit(0);
  }
  close(out[1]);
  int status = -1;
  if (read(out[0], &status, sizeof status) != sizeof status) status = -1;
  close(out[0]);
  waitpid(pid, nullptr, 0);
  return status;
}

TEST(SocketPeerTest, AServerForItsOwnerLetsItsUserInAndNoOtherUser) {
  HttpServer server({[](const ApiRequest&) -> std::optional<ApiResponse> {
    return ApiResponse{200, "application/json", "{}", nullptr, {}};
  }});
  HttpServerOptions options;
  options.without_token = HttpServerOptions::Peers::kOwner;
  ASSERT_TRUE(server.Start(options).ok());
  httplib::Client ours("127.0.0.1", server.port());
  // No header, MLflow's bearer token of another server, Basic auth of a company profile:
  // all the owner's, all let in.
  for (httplib::Headers h :
       {httplib::Headers{}, httplib::Headers{{"Authorization", "Bearer users-own-token"}},
        httplib::Headers{{"Authorization", "Basic dXNlcjpodW50ZXIy"}}}) {
    auto r = ours.Get("/api/x", h);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
  }
  if (geteuid() != 0) GTEST_SKIP() << "another user is tried only as root";
  EXPECT_EQ(StatusAs(65534, server.port()), 403);
  EXPECT_EQ(StatusAs(65534, server.port(), "Basic dXNlcjpodW50ZXIy"), 403);
  server.Stop();

  // With a token too, another user who shows it passes (a token for a peer elsewhere).
  HttpServer with_token({[](const ApiRequest&) -> std::optional<ApiResponse> {
    return ApiResponse{200, "application/json", "{}", nullptr, {}};
  }});
  options.token = "s3cret";
  ASSERT_TRUE(with_token.Start(options).ok());
  EXPECT_EQ(StatusAs(65534, with_token.port()), 401);
  EXPECT_EQ(StatusAs(65534, with_token.port(), "Bearer s3cret"), 200);
  httplib::Client again("127.0.0.1", with_token.port());
  EXPECT_EQ(again.Get("/api/x")->status, 200);
}

}  // namespace
}  // namespace tb
