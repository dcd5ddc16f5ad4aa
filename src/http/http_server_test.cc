// The HTTP server as clients meet it on the wire: browsers, MLflow's Python client
// (requests), curl, Node's fetch. Raw sockets, so what is asserted is the bytes sent.
#include "http/http_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>

#include "base/secret.h"
#include "base/strings.h"
#include "http/socket_peer.h"
#include "tests/helpers/free_port.h"

namespace tb {
namespace {

// Answers with what it was asked: METHOD PATH, the query's pairs and the body's size.
std::optional<ApiResponse> Echo(const ApiRequest& req) {
  if (req.path == "/stream" || req.path == "/broken") {
    auto left = std::make_shared<int>(3);
    bool broken = req.path == "/broken";
    ApiResponse r;
    r.content_type = "text/plain";
    r.body = "first;";
    r.stream = [left, broken](std::string& piece) {
      if (broken && *left == 2) throw std::runtime_error("the store went away");
      piece += "piece" + std::to_string(*left) + ";";
      return --*left > 0;
    };
    return r;
  }
  std::string text = req.method + " " + req.path;
  for (const auto& [k, v] : req.query) text += Concat({" [", k, "=", v, "]"});
  text += " body=" + std::to_string(req.body.size());
  if (!req.body_file.empty()) text += " file=" + std::to_string(std::filesystem::file_size(req.body_file));
  if (!req.body.empty()) text += ":" + req.body.substr(0, 16);
  return ApiResponse{200, "text/plain", text, nullptr, {}};
}

// A connection to the server on this machine at `port`.
int ConnectTo(int port) {
  int fd = ConnectLoopback(port);
  EXPECT_GE(fd, 0) << "cannot connect to port " << port;
  return fd;
}

// Sends `request` on the open connection `fd` and reads its answer (a Content-Length
// body); "" when the server closed the connection instead.
std::string Ask(int fd, const std::string& request) {
  if (write(fd, request.data(), request.size()) != static_cast<ssize_t>(request.size())) return "";
  std::string answer;
  char buf[4096];
  for (;;) {
    size_t head = answer.find("\r\n\r\n");
    if (head != std::string::npos) {
      size_t at = answer.find("Content-Length: ");
      size_t length = at == std::string::npos ? 0 : std::stoul(answer.substr(at + 16));
      if (answer.size() >= head + 4 + length) return answer;
    }
    ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) return "";
    answer.append(buf, static_cast<size_t>(n));
  }
}

// Whether the server closed `fd` (reads end) within `seconds`.
// Whether the server closed the connection within `seconds`: an orderly close, or a reset
// (a server that closes a connection whose client was still sending resets it).
bool ClosedByServer(int fd, int seconds) {
  timeval limit{seconds, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  char buf[64];
  ssize_t n = read(fd, buf, sizeof buf);
  return n == 0 || (n < 0 && errno == ECONNRESET);
}

class HttpServerWire : public ::testing::Test {
 protected:
  void SetUp() override {
    HttpServerOptions options;
    options.max_body_bytes = 1000;
    ASSERT_TRUE(server_.Start(options).ok());
  }

  int Connect() { return ConnectTo(server_.port()); }

  // Everything the server sends for `bytes` until it closes the connection.
  std::string Exchange(const std::string& bytes) {
    int fd = Connect();
    EXPECT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    std::string answer;
    char buf[4096];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) answer.append(buf, static_cast<size_t>(n));
    close(fd);
    return answer;
  }

  static size_t Count(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  }

  HttpServer server_{{Echo}};
};

TEST_F(HttpServerWire, KeptAliveConnectionsAnswerEachRequestInTurn) {
  // Two requests in one write (pipelined), the second asking to close.
  std::string answer = Exchange(
      "GET /a?x=1 HTTP/1.1\r\nHost: localhost\r\n\r\n"
      "POST /b HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello");
  EXPECT_EQ(Count(answer, "HTTP/1.1 200 OK\r\n"), 2u) << answer;
  size_t first = answer.find("GET /a [x=1] body=0");
  size_t second = answer.find("POST /b body=5:hello");
  ASSERT_NE(first, std::string::npos) << answer;
  ASSERT_NE(second, std::string::npos) << answer;
  EXPECT_LT(first, second);
  EXPECT_NE(answer.find("Content-Length: 19\r\n"), std::string::npos) << answer;
  EXPECT_NE(answer.rfind("Connection: close\r\n"), std::string::npos);
}

TEST_F(HttpServerWire, PathsAndQueriesAreDecodedAsBrowsersEncodeThem) {
  std::string answer = Exchange(
      "GET /runs/a%20b+c?metric=gpu.util%2Fratio&q=a+b&flag&q=2 HTTP/1.1\r\nConnection: close\r\n\r\n");
  // '+' is a space in a query only; a key may come twice or without a value.
  EXPECT_NE(answer.find("GET /runs/a b+c [flag=] [metric=gpu.util/ratio] [q=a b] [q=2]"), std::string::npos)
      << answer;
}

TEST_F(HttpServerWire, ChunkedBodiesAndExpectContinueReachTheHandlerWhole) {
  std::string chunked = Exchange(
      "POST /up HTTP/1.1\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
      "4\r\nwiki\r\n5;ext=1\r\npedia\r\n0\r\nX-Trailer: t\r\n\r\n");
  EXPECT_NE(chunked.find("POST /up body=9:wikipedia"), std::string::npos) << chunked;
  // curl sends large bodies after "100 Continue".
  std::string expect = Exchange(
      "PUT /up HTTP/1.1\r\nContent-Length: 3\r\nExpect: 100-continue\r\nConnection: close\r\n\r\nabc");
  EXPECT_TRUE(StartsWith(expect, "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n")) << expect;
  EXPECT_NE(expect.find("PUT /up body=3:abc"), std::string::npos);
  // Larger than the server takes, announced or sent in chunks: refused, and the connection closes.
  EXPECT_TRUE(StartsWith(Exchange("POST /up HTTP/1.1\r\nContent-Length: 1001\r\n\r\n"), "HTTP/1.1 413 "));
  std::string big = "POST /up HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (int i = 0; i < 3; ++i) big += "190\r\n" + std::string(400, 'x') + "\r\n";
  EXPECT_TRUE(StartsWith(Exchange(big + "0\r\n\r\n"), "HTTP/1.1 413 "));
}

TEST_F(HttpServerWire, HeadGetsTheHeadersAGetWouldAndNoBody) {
  std::string answer = Exchange("HEAD /thing HTTP/1.1\r\nConnection: close\r\n\r\n");
  EXPECT_NE(answer.find("Content-Length: 17\r\n"), std::string::npos) << answer;  // "GET /thing body=0"
  EXPECT_TRUE(answer.ends_with("\r\n\r\n")) << answer;
  // A streamed answer's HEAD says it is chunked and sends no chunk.
  std::string streamed = Exchange("HEAD /stream HTTP/1.1\r\nConnection: close\r\n\r\n");
  EXPECT_NE(streamed.find("Transfer-Encoding: chunked\r\n"), std::string::npos) << streamed;
  EXPECT_TRUE(streamed.ends_with("\r\n\r\n")) << streamed;
  EXPECT_EQ(streamed.find("first;"), std::string::npos) << streamed;
}

TEST_F(HttpServerWire, StreamedAnswersAreChunkedAndABrokenStreamLacksItsLastChunk) {
  std::string whole = Exchange("GET /stream HTTP/1.1\r\nConnection: close\r\n\r\n");
  EXPECT_NE(whole.find("Transfer-Encoding: chunked\r\n"), std::string::npos) << whole;
  EXPECT_NE(whole.find("\r\n\r\nd\r\nfirst;piece3;\r\n7\r\npiece2;\r\n7\r\npiece1;\r\n0\r\n\r\n"),
            std::string::npos)
      << whole;
  std::string broken = Exchange("GET /broken HTTP/1.1\r\n\r\n");
  EXPECT_NE(broken.find("first;piece3;"), std::string::npos) << broken;
  EXPECT_EQ(broken.find("0\r\n\r\n"), std::string::npos) << "a failed stream must not look whole: " << broken;
  // HTTP/1.0 has no chunks: the body ends where the connection does.
  std::string old = Exchange("GET /stream HTTP/1.0\r\n\r\n");
  EXPECT_EQ(old.find("chunked"), std::string::npos) << old;
  EXPECT_TRUE(old.ends_with("\r\n\r\nfirst;piece3;piece2;piece1;")) << old;
}

TEST_F(HttpServerWire, MalformedRequestsGetAClearRefusalAndTheServerGoesOn) {
  EXPECT_TRUE(StartsWith(Exchange("GET\r\n\r\n"), "HTTP/1.1 400 ")) << Exchange("GET\r\n\r\n");
  EXPECT_TRUE(StartsWith(Exchange("GET / HTTP/2.0\r\n\r\n"), "HTTP/1.1 505 "));
  EXPECT_TRUE(StartsWith(Exchange("GET / HTTP/1.1\r\nno colon here\r\n\r\n"), "HTTP/1.1 400 "));
  EXPECT_TRUE(StartsWith(Exchange("GET /" + std::string(70000, 'a') + " HTTP/1.1\r\n\r\n"), "HTTP/1.1 431 "));
  EXPECT_TRUE(StartsWith(Exchange("POST / HTTP/1.1\r\nContent-Length: -3\r\n\r\n"), "HTTP/1.1 400 "));
  EXPECT_NE(Exchange("GET /fine HTTP/1.1\r\nConnection: close\r\n\r\n").find("GET /fine body=0"),
            std::string::npos);
}

TEST_F(HttpServerWire, StopClosesIdleConnectionsAndTheAddressCanBeTakenAgain) {
  int idle = Connect();
  std::string request = "GET /x HTTP/1.1\r\n\r\n";
  ASSERT_EQ(write(idle, request.data(), request.size()), static_cast<ssize_t>(request.size()));
  char buf[4096];
  ASSERT_GT(read(idle, buf, sizeof buf), 0);  // answered; the connection is kept for the next
  int port = server_.port();
  server_.Stop();
  EXPECT_EQ(read(idle, buf, sizeof buf), 0) << "the idle connection is closed";
  close(idle);
  HttpServer again({Echo});
  HttpServerOptions same;
  same.port = port;
  EXPECT_TRUE(again.Start(same).ok()) << "the port is free again after Stop";
  HttpServer taken({Echo});
  Status refused = taken.Start(same);
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find(std::to_string(port)), std::string::npos) << refused.message();
}

// MLflow's client (requests) and browsers keep their connections open between requests,
// for minutes; a server for a cluster's scripts has more of them than threads.
TEST(HttpServerConnections, QuietKeptAliveConnectionsHoldNoThread) {
  HttpServer server({Echo});
  HttpServerOptions options;
  options.workers = 1;
  ASSERT_TRUE(server.Start(options).ok());
  std::vector<int> clients;
  for (int i = 0; i < 4; ++i) {
    clients.push_back(ConnectTo(server.port()));
    // Each answered while the ones before stay connected, quiet, with the one thread.
    EXPECT_NE(Ask(clients.back(), "GET /first/" + std::to_string(i) + " HTTP/1.1\r\n\r\n")
                  .find("GET /first/" + std::to_string(i) + " body=0"),
              std::string::npos);
  }
  for (int i = 0; i < 4; ++i) {
    EXPECT_NE(Ask(clients[i], "GET /again HTTP/1.1\r\n\r\n").find("GET /again body=0"), std::string::npos)
        << "connection " << i << " was closed while it waited";
  }
  for (int fd : clients) close(fd);
}

TEST(HttpServerConnections, QuietConnectionsCloseAfterTheIdleTimeoutAndBeyondTheLimitOldestFirst) {
  HttpServer server({Echo});
  HttpServerOptions options;
  options.idle_timeout_ms = 300;
  ASSERT_TRUE(server.Start(options).ok());
  int quiet = ConnectTo(server.port());
  ASSERT_NE(Ask(quiet, "GET /x HTTP/1.1\r\n\r\n"), "");
  EXPECT_TRUE(ClosedByServer(quiet, 10));
  close(quiet);

  HttpServer limited({Echo});
  HttpServerOptions two;
  two.max_idle_connections = 2;
  ASSERT_TRUE(limited.Start(two).ok());
  server.Stop();
  std::vector<int> clients;
  for (int i = 0; i < 3; ++i) {
    int fd = ConnectTo(limited.port());
    ASSERT_NE(Ask(fd, "GET /x HTTP/1.1\r\n\r\n"), "");
    clients.push_back(fd);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // it begins to wait before the next
  }
  EXPECT_TRUE(ClosedByServer(clients[0], 10)) << "the longest waiting closes";
  EXPECT_NE(Ask(clients[1], "GET /y HTTP/1.1\r\n\r\n"), "");
  EXPECT_NE(Ask(clients[2], "GET /y HTTP/1.1\r\n\r\n"), "");
  for (int fd : clients) close(fd);
}

// The memory this process holds now (VmRSS), in bytes.
int64_t ResidentBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (StartsWith(line, "VmRSS:")) return std::stoll(line.substr(6)) * 1024;
  }
  return 0;
}

// A header announcing a gigabyte costs what arrives, not what it announces; a large
// upload goes to a file as it arrives, not into memory.
TEST(HttpServerLimits, AnnouncedBodiesCostWhatArrivesAndLargeUploadsGoToAFile) {
  HttpServer server({Echo});
  HttpServerOptions options;
  options.large_bodies = {{"/upload", size_t{2} << 30}};
  options.spool_bytes = 1 << 20;
  ASSERT_TRUE(server.Start(options).ok());
  int64_t before = ResidentBytes();
  std::vector<int> announcing;
  for (int i = 0; i < 3; ++i) {
    int fd = ConnectTo(server.port());
    std::string head = "PUT /upload/x HTTP/1.1\r\nContent-Length: 1073741824\r\n\r\n" + std::string(100, 'a');
    ASSERT_EQ(write(fd, head.data(), head.size()), static_cast<ssize_t>(head.size()));
    announcing.push_back(fd);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // each is read up to its 100 bytes
  EXPECT_LT(ResidentBytes() - before, int64_t{64} << 20) << "3 x 1 GiB announced";
  for (int fd : announcing) close(fd);

  int fd = ConnectTo(server.port());
  std::string body(20 << 20, 'b');
  std::string answer =
      Ask(fd, "PUT /upload/y HTTP/1.1\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body);
  EXPECT_NE(answer.find("PUT /upload/y body=0 file=20971520"), std::string::npos) << answer.substr(0, 300);
  // Small ones stay in memory, as before.
  answer = Ask(fd, "PUT /upload/z HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello");
  EXPECT_NE(answer.find("body=5:hello"), std::string::npos) << answer;
  close(fd);
  // The spooled file is gone once answered.
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::temp_directory_path()))
    EXPECT_FALSE(StartsWith(entry.path().filename().string(), ".trainbench-upload-")) << entry.path();
}

// Slowloris: many connections sending their headers a byte at a time hold no worker, so
// others are answered at once; each closes when its head's time is up, and beyond the
// cap on connections that never passed a request the oldest of them close first.
TEST(HttpServerLimits, SlowHeadsHoldNoWorkerAndCloseWhenTheirTimeIsUp) {
  HttpServer server({Echo});
  HttpServerOptions options;
  options.workers = 2;
  options.head_timeout_ms = 1500;
  options.max_unproven_connections = 30;
  ASSERT_TRUE(server.Start(options).ok());
  std::vector<int> slow;
  for (int i = 0; i < 40; ++i) slow.push_back(ConnectTo(server.port()));
  std::atomic<bool> stop{false};
  std::thread trickle([&] {
    const std::string head = "GET /slow HTTP/1.1\r\nX-Padding: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n";
    for (size_t at = 0; at < head.size() && !stop; ++at) {
      for (int fd : slow) (void)!send(fd, head.data() + at, 1, MSG_NOSIGNAL);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  // Two workers, 40 slow clients: another client is still answered.
  int fd = ConnectTo(server.port());
  timeval limit{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  EXPECT_NE(Ask(fd, "GET /quick HTTP/1.1\r\n\r\n").find("GET /quick body=0"), std::string::npos);
  close(fd);
  // The oldest ten went beyond the cap of 30; the rest close when their head's time is up.
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(ClosedByServer(slow[static_cast<size_t>(i)], 1)) << i;
  for (size_t i = 10; i < slow.size(); ++i) EXPECT_TRUE(ClosedByServer(slow[i], 5)) << i;
  stop = true;
  trickle.join();
  for (int s : slow) close(s);
}

// An upload announcing 1 GiB and sending a byte every half second (or a chunk of one byte)
// keeps too low a rate on what arrived: its connection closes within seconds, where the
// rate once measured against the announced size let it hold a worker for hours.
TEST(HttpServerLimits, ABodyTricklingInIsCutOffWithinSeconds) {
  HttpServer server({Echo});
  HttpServerOptions options;
  options.large_bodies = {{"/upload", size_t{2} << 30}};
  ASSERT_TRUE(server.Start(options).ok());
  for (const char* head : {"PUT /upload/x HTTP/1.1\r\nContent-Length: 1073741824\r\n\r\n",
                           "PUT /upload/y HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"}) {
    SCOPED_TRACE(head);
    bool chunked = std::string_view(head).find("chunked") != std::string_view::npos;
    int fd = ConnectTo(server.port());
    ASSERT_GT(write(fd, head, std::strlen(head)), 0);
    std::atomic<bool> stop{false};
    std::thread trickle([&] {
      while (!stop) {
        const char* piece = chunked ? "1\r\na\r\n" : "a";
        if (send(fd, piece, std::strlen(piece), MSG_NOSIGNAL) < 0) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
      }
    });
    // Whatever is answered, the connection ends (read gives 0) within 15 s.
    timeval limit{15, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    char buf[512];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) {
    }
    EXPECT_TRUE(n == 0 || errno == ECONNRESET) << "still open after 15 s";
    stop = true;
    trickle.join();
    close(fd);
  }
}

// `serve --host` without a token only where the address is this machine's loopback.
TEST(HttpServer, LoopbackMeansAddressesThatAre) {
  for (const char* host : {"127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"})
    EXPECT_TRUE(IsLoopbackHost(host)) << host;
  for (const char* host :
       {"0.0.0.0", "10.0.0.1", "::", "127.example.invalid", "127.0.0.1.nip.invalid", "", "1270.0.0.1"})
    EXPECT_FALSE(IsLoopbackHost(host)) << host;
  EXPECT_TRUE(SecretsEqual("s3cret", "s3cret"));
  EXPECT_FALSE(SecretsEqual("s3cret", "s3cret2"));
  EXPECT_FALSE(SecretsEqual("s3cret", "s3cre"));
  EXPECT_FALSE(SecretsEqual("", "x"));
}

// A server's threads start as connections come (a WorkerPool): a server that one client
// talks to at a time, as a run's tracking server, has one thread answering, not 64.
TEST(HttpServer, StartsItsWorkersAsClientsComeAndOneClientAtATimeUsesOne) {
  auto threads = [] {
    size_t n = 0;
    for ([[maybe_unused]] const auto& task : std::filesystem::directory_iterator("/proc/self/task")) ++n;
    return n;
  };
  auto ok = [](const ApiRequest&) -> std::optional<ApiResponse> {
    ApiResponse answer;
    answer.body = "{}";
    return answer;
  };
  HttpServer server({ok});
  size_t before = threads();
  ASSERT_TRUE(server.Start(HttpServerOptions{}).ok());  // 64 workers at most
  EXPECT_EQ(threads(), before + 1) << "the accepting thread alone";
  for (int i = 0; i < 10; ++i) {
    httplib::Client client("127.0.0.1", server.port());
    auto r = client.Get("/anything");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    client.stop();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // its worker waits again
  }
  // One worker, unless a worker was slow to see its client go (a loaded machine).
  EXPECT_LE(threads(), before + 5) << "ten clients one after another should need a worker or two, not ten";
  server.Stop();
}

}  // namespace
}  // namespace tb
