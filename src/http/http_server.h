// An HTTP/1.1 server for trainbench's APIs: transport-free handlers answer parsed
// requests; the server adds the socket, the threads, an optional access token and static
// files. `trainbench run` serves the tracking API with it on 127.0.0.1 (its script's port);
// `trainbench serve` the JSON API, the tracking API and the web UI.
//
// Why its own rather than a library's: it links no TLS library into every trainbench
// process (TLS belongs to a proxy in front of `serve`), and it parks idle keep-alive
// connections, and requests whose heads are still arriving, in one polling thread rather
// than on a worker each: browsers and MLflow's clients hold connections open for minutes,
// and a client trickling its headers (slowloris) holds no worker. Parsing is pure and
// fuzzed (http_parse.h); a connection's requests go through framing, policy (token,
// session, limits), body and dispatch, each a member below.
//
// Threads: Start() and Stop() from one controlling thread; handlers run on the workers,
// several at once. Failure: Start() says why it cannot listen; a request that breaks a
// rule gets a 4xx naming the rule and its connection closes.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/status.h"
#include "base/worker_pool.h"
#include "http/sessions.h"

namespace tb {

struct ApiRequest {
  std::string method;  // "GET", "POST", "PUT"
  std::string path;    // without the query string, percent-decoded
  std::multimap<std::string, std::string> query;
  std::string body;
  // A large upload arrives here instead of in `body` (HttpServerOptions::spool_bytes): a
  // file of its own, which the handler may rename into place; removed after the answer.
  std::string body_file = {};
  // trainbench's own request headers (x-trainbench-*, names in lower case).
  std::vector<std::pair<std::string, std::string>> headers = {};
};

struct ApiResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  // When set, the body is streamed: each call appends the next piece to its argument and
  // returns false once nothing follows (the piece it appended is still sent). When it
  // throws, the transfer ends without its closing chunk, so the client sees a failed
  // answer rather than a short one that looks whole.
  std::function<bool(std::string&)> stream;
  std::vector<std::pair<std::string, std::string>> headers = {};
};

// Answers the requests it knows; nullopt for the others.
using ApiHandler = std::function<std::optional<ApiResponse>(const ApiRequest&)>;

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0: a free port
  // When not empty, every request must carry it, checked before its body is read:
  // "Authorization: Bearer TOKEN" (what MLflow's clients send with MLFLOW_TRACKING_TOKEN) or
  // the session cookie the server sets when a person opens a page as /?token=TOKEN (the
  // link a person can paste; it is then redirected to the same page without the token, so
  // the token leaves the address bar and is not in any later URL; the cookie is a random
  // session id, never the token). Others get 401.
  std::string token;
  // Who may pass without the token: everyone when it is empty (kAnyone), or, with kOwner,
  // the processes of the user running the server, on this machine's loopback, whoever they
  // are (found from the connection itself: http/socket_peer.h); every other caller needs
  // the token, and with kOwner and no token, is refused (403).
  enum class Peers { kAnyone, kOwner };
  Peers without_token = Peers::kAnyone;
  // Names a request's Host header may give besides IP addresses, localhost and *.localhost
  // (http/request_origin.h): a page whose DNS name points here is refused (403), as is a
  // request that would change something from another site's page, whoever its peer is.
  std::vector<std::string> host_names;
  // Request bodies larger than this are refused (413) before they are read, except under
  // the path prefixes of `large_bodies` (artifact uploads), which have their own limit.
  size_t max_body_bytes = size_t{4} << 20;
  std::vector<std::pair<std::string, size_t>> large_bodies;
  // Such a body larger than this goes to a file (mode 0600) in `spool_dir` ($TMPDIR, else
  // /tmp, when empty) as it arrives, not into memory: ApiRequest::body_file.
  size_t spool_bytes = size_t{1} << 20;
  std::string spool_dir;
  // Files served for GET requests no handler answers ("/" is index.html); "" for none.
  std::string static_dir;
  // Threads answering requests at most, started as requests need them (a WorkerPool). A
  // kept-alive connection holds one only while it is asking: between requests it waits in
  // the accepting thread's poll, so the threads bound how many requests are answered at
  // once, not how many browsers and scripts stay connected.
  size_t workers = 64;
  // How long a kept-alive connection may wait for its next request before it is closed,
  // and how many may wait at once (beyond that the longest waiting is closed first).
  int idle_timeout_ms = 30000;
  size_t max_idle_connections = 512;
  // How long a request's line and headers may take from their first byte (a new
  // connection's from when it was accepted) to their end. They are gathered by the
  // accepting thread, so a client sending them a byte at a time (slowloris) holds no
  // worker; its connection closes when this has passed.
  int head_timeout_ms = 10000;
  // How many of those may be connections on which no request has passed the token check
  // yet (any request, without a token): beyond that the longest waiting of them close.
  // With the deadline on a request's head (10 s from its first byte), this is what a
  // client opening connections and sending a byte at a time (slowloris) can hold.
  size_t max_unproven_connections = 128;
};

class HttpConnection;  // one client's socket and what it sent that is not read yet
struct HttpRequest;    // a request's head and body as read from it

class HttpServer {
 public:
  explicit HttpServer(std::vector<ApiHandler> handlers);
  ~HttpServer();  // stops
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Listens and serves on background threads.
  Status Start(const HttpServerOptions& options);
  // Stops accepting and waits for the requests in flight.
  void Stop();
  int port() const { return port_; }
  // "http://HOST:PORT".
  std::string Url() const;
  // CPU time the workers spent on connections (reading, handling, answering) so far.
  int64_t worker_cpu_ns() const { return worker_cpu_ns_.load(std::memory_order_relaxed); }

 private:
  // The accepting thread: takes new connections and watches the idle ones, handing each
  // to a worker when its next request arrives.
  void Watch();
  // One connection's requests, on a worker, until it goes quiet (then it is handed back to
  // the accepting thread) or closes.
  void Serve(std::shared_ptr<HttpConnection> c);
  void Park(std::shared_ptr<HttpConnection> c);  // hands a quiet connection back

  // A connection's requests in four steps. Framing: a request's line and headers, or the
  // connection is parked (nothing more arrived) or closed (malformed, too slow, gone).
  enum class Framing { kRequest, kPark, kClose };
  Framing ReadHead(HttpConnection& c, HttpRequest& req);
  // Policy, before any body is read: the token or session (or the redirect that sets a
  // session), the body's framing and its limit.
  struct Admission {
    std::optional<ApiResponse> redirect, refusal;
    size_t limit = 0;
    bool chunked = false;
    std::optional<uint64_t> length;
  };
  Admission Admit(HttpConnection& c, const HttpRequest& req);
  static ApiResponse TooLarge(const HttpRequest& req, size_t limit);
  // The body, into memory or a spool file: a refusal to send, or `broken` when the
  // client stopped sending.
  std::optional<ApiResponse> ReadBody(HttpConnection& c, HttpRequest& req, const Admission& a, bool& broken);
  // The answer: the first handler's that answers, else a static file, else 404.
  ApiResponse Dispatch(HttpRequest& req);
  // Whether a request with this bearer token, or session cookie from this connection's
  // peer, may pass.
  bool Authorized(HttpConnection& c, const HttpRequest& req);
  // Whether the connection's peer is this server's own user on loopback (Peers::kOwner),
  // found once per connection.
  bool FromOwner(HttpConnection& c);
  // Whether every request on the connection is refused whatever it carries (Peers::kOwner,
  // no token, another user): answered by the accepting thread, holding no worker.
  bool RefusedOutright(HttpConnection& c);
  static ApiResponse NotOwner();
  int64_t HeadNanos() const;

  std::vector<ApiHandler> handlers_;
  HttpServerOptions options_;
  int listen_fd_ = -1;
  // Written once by Stop() and never read, so it stays readable.
  int stop_pipe_[2] = {-1, -1};
  // A byte for each connection a worker hands back, to wake the accepting thread.
  int park_pipe_[2] = {-1, -1};
  std::mutex park_mu_;
  std::vector<std::shared_ptr<HttpConnection>> parked_;  // handed back, not yet watched
  bool stopping_ = false;                                // then they are closed instead
  std::unique_ptr<WorkerPool> workers_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<int64_t> worker_cpu_ns_{0};
  SessionTable sessions_;
};

// A JSON error answer: {"error_code": code, "message": message}.
ApiResponse JsonError(int status, const std::string& code, const std::string& message);

}  // namespace tb
