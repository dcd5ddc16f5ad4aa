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
#include "tests/helpers/as_user.h"

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

// The HTTP status another user gets at /api/x (needs root; -1 when it could not ask).
int StatusAs(uid_t uid, int port, const std::string& header = "") {
  httplib::Headers h;
  if (!header.empty())
    h.emplace(header.starts_with("trainbench_session") ? "Cookie" : "Authorization", header);
  return testing::StatusAs(uid, port, "GET", "/api/x", h);
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
  // Another user is refused by the thread that accepts, before a worker is taken: its
  // requests cost the workers nothing, so they cannot keep the owner's script waiting.
  ours.stop();
  usleep(100'000);  // the owner's connection handed back
  int64_t before = server.worker_cpu_ns();
  for (int i = 0; i < 10; ++i) EXPECT_EQ(StatusAs(testing::kNobody, server.port()), 403);
  EXPECT_EQ(StatusAs(testing::kNobody, server.port(), "Basic dXNlcjpodW50ZXIy"), 403);
  EXPECT_EQ(server.worker_cpu_ns(), before);
  server.Stop();

  // With a token too, another user who shows it passes (a token for a peer elsewhere).
  HttpServer with_token({[](const ApiRequest&) -> std::optional<ApiResponse> {
    return ApiResponse{200, "application/json", "{}", nullptr, {}};
  }});
  options.token = "s3cret";
  ASSERT_TRUE(with_token.Start(options).ok());
  EXPECT_EQ(StatusAs(testing::kNobody, with_token.port()), 401);
  EXPECT_EQ(StatusAs(testing::kNobody, with_token.port(), "Bearer s3cret"), 200);
  httplib::Client again("127.0.0.1", with_token.port());
  EXPECT_EQ(again.Get("/api/x")->status, 200);
}

// A browser's session cookie is sent to every port of the host, so another local user's
// web server receives it: replayed from that user's process it opens nothing. It passes for
// the peer that opened it, and under the cookie name of its own server's port.
TEST(SocketPeerTest, ASessionCookiePassesOnlyForTheUserWhoOpenedItOnItsPort) {
  if (geteuid() != 0) GTEST_SKIP() << "another user is tried only as root";
  HttpServer server({[](const ApiRequest&) -> std::optional<ApiResponse> {
    return ApiResponse{200, "application/json", "{}", nullptr, {}};
  }});
  HttpServerOptions options;
  options.token = "s3cret";  // every peer needs it (a server for anyone who shows it)
  ASSERT_TRUE(server.Start(options).ok());
  httplib::Client browser("127.0.0.1", server.port());
  auto page = browser.Get("/?token=s3cret");
  ASSERT_TRUE(page);
  ASSERT_EQ(page->status, 303);
  std::string cookie = page->get_header_value("Set-Cookie");
  cookie = cookie.substr(0, cookie.find(';'));
  ASSERT_EQ(cookie.rfind("trainbench_session_" + std::to_string(server.port()) + "=", 0), 0u) << cookie;
  EXPECT_EQ(browser.Get("/api/x", {{"Cookie", cookie}})->status, 200);
  EXPECT_EQ(StatusAs(testing::kNobody, server.port(), cookie), 401) << "replayed by another user";
  std::string value = cookie.substr(cookie.find('=') + 1);
  EXPECT_EQ(browser.Get("/api/x", {{"Cookie", "trainbench_session_1=" + value}})->status, 401)
      << "another port's cookie";
}

}  // namespace
}  // namespace tb
