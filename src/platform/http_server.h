// An HTTP server (cpp-httplib) for trainbench's APIs: transport-free handlers answer
// parsed requests; the server adds the socket, the threads, an optional access token and
// static files. `trainbench run` serves the tracking API with it on 127.0.0.1;
// `trainbench serve` the JSON API, the tracking API and the web UI.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"

namespace httplib {
class Server;
}

namespace tb {

struct ApiRequest {
  std::string method;  // "GET", "POST", "PUT"
  std::string path;    // without the query string, percent-decoded
  std::multimap<std::string, std::string> query;
  std::string body;
};

struct ApiResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  // When set, the body is streamed: each call appends the next piece to its argument and
  // returns false once nothing follows (the piece it appended is still sent).
  std::function<bool(std::string&)> stream;
  std::vector<std::pair<std::string, std::string>> headers;
};

// Answers the requests it knows; nullopt for the others.
using ApiHandler = std::function<std::optional<ApiResponse>(const ApiRequest&)>;

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0: a free port
  // When not empty, every request must carry it ("Authorization: Bearer TOKEN" or
  // "?token=TOKEN"); others get 401.
  std::string token;
  // Files served for GET requests no handler answers ("/" is index.html); "" for none.
  std::string static_dir;
};

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

 private:
  std::vector<ApiHandler> handlers_;
  HttpServerOptions options_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

// True when `host` is a loopback address (127.0.0.0/8, ::1, localhost).
bool IsLoopbackHost(const std::string& host);

// A JSON error answer: {"error_code": code, "message": message}.
ApiResponse JsonError(int status, const std::string& code, const std::string& message);

}  // namespace tb
