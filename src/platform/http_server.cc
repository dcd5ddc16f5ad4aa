#include "platform/http_server.h"

#include <arpa/inet.h>
#include <httplib.h>
#include <libdeflate.h>
#include <netdb.h>
#include <netinet/in.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

#include "base/strings.h"
#include "base/time.h"
#include "base/worker_pool.h"

namespace tb {
namespace {

// Workers answering requests: a connection holds one while it waits for its next request.
class PoolQueue : public httplib::TaskQueue {
 public:
  PoolQueue(size_t workers, std::atomic<int64_t>& cpu_ns) : pool_(workers, cpu_ns) {}
  void enqueue(std::function<void()> fn) override { pool_.Enqueue(std::move(fn)); }
  void shutdown() override { pool_.Shutdown(); }

 private:
  WorkerPool pool_;
};

std::string ContentType(std::string_view path) {
  static const std::pair<const char*, const char*> kTypes[] = {{".html", "text/html; charset=utf-8"},
                                                               {".js", "text/javascript"},
                                                               {".css", "text/css"},
                                                               {".svg", "image/svg+xml"},
                                                               {".png", "image/png"},
                                                               {".json", "application/json"},
                                                               {".woff2", "font/woff2"},
                                                               {".ico", "image/x-icon"},
                                                               {".map", "application/json"}};
  for (auto [ext, type] : kTypes) {
    if (path.ends_with(ext)) return type;
  }
  return "application/octet-stream";
}

// The file under `root` a URL path names, or nullopt when it would leave `root` or holds
// a control character (a NUL would cut the path short).
std::optional<std::string> StaticFile(const std::string& root, std::string_view path) {
  for (unsigned char c : path) {
    if (c < 0x20 || c == 0x7f) return std::nullopt;
  }
  if (path.empty() || path == "/") path = "/index.html";
  for (std::string_view part : Split(path.substr(1), '/')) {
    if (part.empty() || part == "." || part == ".." || part.find('\\') != std::string_view::npos)
      return std::nullopt;
  }
  return root + std::string(path);
}

constexpr const char* kTokenCookie = "trainbench_token";

// The token the request carries in its Authorization header or trainbench's cookie.
std::string CarriedToken(const httplib::Request& req) {
  std::string auth = req.get_header_value("Authorization");
  if (StartsWith(auth, "Bearer ")) return auth.substr(7);
  std::string cookies = req.get_header_value("Cookie");
  for (std::string_view c : Split(cookies, ';')) {
    c = Trim(c);
    if (StartsWith(c, std::string(kTokenCookie) + "="))
      return std::string(c.substr(std::strlen(kTokenCookie) + 1));
  }
  return "";
}

// The path and query of a request without its `token` parameter, to redirect to.
std::string WithoutToken(const httplib::Request& req) {
  std::string query;
  for (const auto& [k, v] : req.params) {
    if (k == "token") continue;
    query += (query.empty() ? "?" : "&") + httplib::detail::encode_query_param(k) + "=" +
             httplib::detail::encode_query_param(v);
  }
  return req.path + query;
}

size_t BodyLimit(const HttpServerOptions& o, const std::string& path) {
  for (const auto& [prefix, limit] : o.large_bodies) {
    if (StartsWith(path, prefix)) return limit;
  }
  return o.max_body_bytes;
}

// The body gzip-compressed at libdeflate's fastest level (a 50-run chart's 900 KB of JSON in
// 3.4 ms to 242 KB, where zlib's fastest took 7.8 ms to 278 KB); nullopt when it fails.
std::optional<std::string> Gzip(const std::string& body) {
  struct CompressorDeleter {
    void operator()(libdeflate_compressor* c) const { libdeflate_free_compressor(c); }
  };
  // One compressor per thread, made once (its tables are allocated with it).
  thread_local std::unique_ptr<libdeflate_compressor, CompressorDeleter> compressor(
      libdeflate_alloc_compressor(1));
  if (!compressor) return std::nullopt;
  std::string out(libdeflate_gzip_compress_bound(compressor.get(), body.size()), '\0');
  size_t size = libdeflate_gzip_compress(compressor.get(), body.data(), body.size(), out.data(), out.size());
  if (size == 0) return std::nullopt;
  out.resize(size);
  return out;
}

bool Compressible(std::string_view type) {
  return StartsWith(type, "text/") || StartsWith(type, "application/json") || type == "image/svg+xml";
}

// `gzip`: the client accepts gzip, and large bodies are sent compressed.
void Send(ApiResponse response, httplib::Response& res, bool gzip = false) {
  res.status = response.status;
  for (const auto& [k, v] : response.headers) res.set_header(k, v);
  if (!response.stream) {
    if (gzip && response.body.size() >= 16384 && Compressible(response.content_type)) {
      if (std::optional<std::string> packed = Gzip(response.body)) {
        res.set_header("Content-Encoding", "gzip");
        res.set_header("Vary", "Accept-Encoding");
        response.body = std::move(*packed);
      }
    }
    // What set_content does, without copying the body (a chart's answer is a megabyte).
    res.body = std::move(response.body);
    res.headers.erase("Content-Type");
    res.set_header("Content-Type", response.content_type);
    return;
  }
  auto stream = std::move(response.stream);
  auto first = std::make_shared<std::string>(std::move(response.body));
  res.set_chunked_content_provider(response.content_type, [stream, first](size_t, httplib::DataSink& sink) {
    std::string piece;
    piece.swap(*first);
    bool more = false;
    try {
      more = stream(piece);
    } catch (...) {
      return false;  // ends the transfer without its last chunk: the client sees it failed
    }
    if (!piece.empty() && !sink.write(piece.data(), piece.size())) return false;
    if (!more) sink.done();
    return true;
  });
}

}  // namespace

ApiResponse JsonError(int status, const std::string& code, const std::string& message) {
  return {status,
          "application/json",
          "{\"error_code\": " + JsonQuote(code) + ", \"message\": " + JsonQuote(message) + "}",
          nullptr,
          {}};
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

bool SecretsEqual(std::string_view a, std::string_view b) {
  // Every byte of the longer is looked at; the lengths are part of the answer.
  size_t n = std::max(a.size(), b.size());
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < n; ++i) {
    unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff = static_cast<unsigned char>(diff | (x ^ y));
  }
  return diff == 0;
}

HttpServer::HttpServer(std::vector<ApiHandler> handlers) : handlers_(std::move(handlers)) {}

HttpServer::~HttpServer() { Stop(); }

Status HttpServer::Start(const HttpServerOptions& options) {
  options_ = options;
  server_ = std::make_unique<httplib::Server>();
  size_t largest = options_.max_body_bytes;
  for (const auto& [prefix, limit] : options_.large_bodies) largest = std::max(largest, limit);
  server_->set_payload_max_length(largest);
  server_->set_keep_alive_max_count(1000000);
  // Idle or slow connections must not hold the workers: a worker waits at most 5 s for the
  // next request on a kept-alive connection or for the next bytes of one, and there are
  // enough workers that a few such connections leave the rest answering.
  server_->set_keep_alive_timeout(5);
  server_->set_read_timeout(5);
  server_->set_write_timeout(30);
  server_->new_task_queue = [this] { return new PoolQueue(options_.workers, worker_cpu_ns_); };
  // The token and the body's size are checked before the body is read.
  server_->set_pre_routing_handler([this, largest](const httplib::Request& req, httplib::Response& res) {
    auto refuse = [&](ApiResponse answer) {
      answer.headers.emplace_back("Connection", "close");
      Send(std::move(answer), res);
      return httplib::Server::HandlerResponse::Handled;
    };
    if (!options_.token.empty() && !SecretsEqual(CarriedToken(req), options_.token)) {
      // A person opening the page with ?token=: a cookie, and the same page without it.
      if (req.method == "GET" && !StartsWith(req.path, "/api/") && req.has_param("token") &&
          SecretsEqual(req.get_param_value("token"), options_.token)) {
        res.status = 303;
        res.set_header("Location", WithoutToken(req));
        res.set_header("Set-Cookie", std::string(kTokenCookie) + "=" + options_.token +
                                         "; Path=/; HttpOnly; SameSite=Strict");
        return httplib::Server::HandlerResponse::Handled;
      }
      return refuse(
          JsonError(401, "UNAUTHENTICATED",
                    "this server needs its access token: send 'Authorization: Bearer TOKEN' (MLflow "
                    "clients: set MLFLOW_TRACKING_TOKEN), or open the web UI once as /?token=TOKEN"));
    }
    size_t limit = BodyLimit(options_, req.path);
    if (req.has_header("Content-Length")) {
      std::optional<uint64_t> length = ParseUint(req.get_header_value("Content-Length"));
      if (!length || *length > limit) {
        return refuse(JsonError(413, "REQUEST_TOO_LARGE",
                                "the request body is larger than the " + std::to_string(limit) +
                                    " bytes accepted at " + req.path + "; split it into several requests"));
      }
    } else if (req.get_header_value("Transfer-Encoding").find("chunked") != std::string::npos &&
               limit < largest) {
      return refuse(JsonError(411, "LENGTH_REQUIRED", "send the body with a Content-Length header"));
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  // Headers and body are written separately: without TCP_NODELAY the body waits for the
  // client's delayed ACK, 40 ms per request.
  server_->set_tcp_nodelay(true);
  auto handler = [this](const httplib::Request& req, httplib::Response& res) {
    // cpp-httplib would compress JSON and text itself with brotli at its slowest quality
    // (seconds for a megabyte of JSON); trainbench compresses large bodies quickly with gzip.
    bool gzip = req.get_header_value("Accept-Encoding").find("gzip") != std::string::npos;
    const_cast<httplib::Request&>(req).headers.erase("Accept-Encoding");
    ApiRequest request;
    request.method = req.method;
    request.path = req.path;
    for (const auto& [k, v] : req.params) {
      if (k != "token") request.query.emplace(k, v);
    }
    request.body = req.body;
    for (const ApiHandler& h : handlers_) {
      if (std::optional<ApiResponse> r = h(request)) {
        Send(std::move(*r), res, gzip);
        return;
      }
    }
    if (req.method == "GET" && !options_.static_dir.empty() && !StartsWith(req.path, "/api/")) {
      std::optional<std::string> file = StaticFile(options_.static_dir, req.path);
      if (!file) {
        Send(JsonError(400, "INVALID_PATH", "the path leaves the web directory"), res);
        return;
      }
      std::ifstream in(*file, std::ios::binary);
      if (in) {
        std::ostringstream content;
        content << in.rdbuf();
        Send({200, ContentType(*file), content.str(), nullptr, {}}, res, gzip);
        return;
      }
    }
    Send(JsonError(404, "ENDPOINT_NOT_FOUND", "nothing at " + req.method + " " + req.path), res);
  };
  const char* all = ".*";
  server_->Get(all, handler);
  server_->Post(all, handler);
  server_->Put(all, handler);
  server_->Delete(all, handler);
  port_ = options.port == 0 ? server_->bind_to_any_port(options.host)
                            : (server_->bind_to_port(options.host, options.port) ? options.port : -1);
  if (port_ <= 0) {
    return Status::Unavailable("cannot listen on " + options.host + ":" + std::to_string(options.port) +
                               "; is the port in use or the address not this machine's?");
  }
  // bind_to_*_port already listens: connections made from now on wait in the backlog.
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  // Until its thread runs the accept loop, stop() would not reach it and Stop() would wait
  // forever (a run whose command is not found stops the server at once).
  for (int i = 0; i < 5000 && !server_->is_running(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return Status::Ok();
}

void HttpServer::Stop() {
  if (!server_) return;
  server_->stop();
  if (thread_.joinable()) thread_.join();
  server_.reset();
}

std::string HttpServer::Url() const {
  std::string host = options_.host.find(':') != std::string::npos && options_.host[0] != '['
                         ? "[" + options_.host + "]"
                         : options_.host;
  return "http://" + host + ":" + std::to_string(port_);
}

}  // namespace tb
