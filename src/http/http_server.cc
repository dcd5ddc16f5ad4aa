#include "http/http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <sstream>

#include "base/secret.h"
#include "base/strings.h"
#include "base/time.h"
#include "http/http_parse.h"
#include "http/http_wire.h"
#include "http/request_origin.h"
#include "http/socket_peer.h"
#include "http/static_files.h"

namespace tb {

namespace {

// How long a worker that answered a request waits for the next before it hands the
// connection back to the accepting thread: a client asking in a loop (MLflow's
// `log_metric`, a page loading its charts) keeps its worker; one that goes quiet costs none.
constexpr int kNextRequestGraceMs = 2;

}  // namespace

namespace {

// The path and query of a request without its `token` parameter, to redirect to.
std::string WithoutToken(const HttpRequest& req) {
  std::string query;
  for (const auto& [k, v] : req.params) {
    if (k == "token") continue;
    query += (query.empty() ? "?" : "&") + PercentEncode(k) + "=" + PercentEncode(v);
  }
  return req.path + query;
}

size_t BodyLimit(const HttpServerOptions& o, const std::string& path) {
  for (const auto& [prefix, limit] : o.large_bodies) {
    if (StartsWith(path, prefix)) return limit;
  }
  return o.max_body_bytes;
}

}  // namespace

ApiResponse JsonError(int status, const std::string& code, const std::string& message) {
  return {status,
          "application/json",
          "{\"error_code\": " + JsonQuote(code) + ", \"message\": " + JsonQuote(message) + "}",
          nullptr,
          {}};
}

HttpServer::HttpServer(std::vector<ApiHandler> handlers) : handlers_(std::move(handlers)) {}

HttpServer::~HttpServer() { Stop(); }

Status HttpServer::Start(const HttpServerOptions& options) {
  options_ = options;
  std::string host = options.host.size() > 2 && options.host.front() == '[' && options.host.back() == ']'
                         ? options.host.substr(1, options.host.size() - 2)
                         : options.host;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  std::string port = std::to_string(options.port);
  int err = getaddrinfo(host.empty() ? nullptr : host.c_str(), port.c_str(), &hints, &found);
  std::string why = err != 0 ? gai_strerror(err) : "no address";
  for (addrinfo* a = err == 0 ? found : nullptr; a != nullptr && listen_fd_ < 0; a = a->ai_next) {
    int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, SOMAXCONN) == 0) {
      listen_fd_ = fd;
    } else {
      why = std::strerror(errno);
      close(fd);
    }
  }
  if (found != nullptr) freeaddrinfo(found);
  if (listen_fd_ < 0) {
    return Status::Unavailable("cannot listen on " + options.host + ":" + std::to_string(options.port) +
                               " (" + why + "); is the port in use or the address not this machine's?");
  }
  sockaddr_storage bound{};
  socklen_t length = sizeof bound;
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &length);
  port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                            : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  if (pipe2(stop_pipe_, O_CLOEXEC) != 0 || pipe2(park_pipe_, O_CLOEXEC | O_NONBLOCK) != 0) {
    int e = errno;
    for (int* fd : {&listen_fd_, &stop_pipe_[0], &stop_pipe_[1], &park_pipe_[0], &park_pipe_[1]}) {
      if (*fd >= 0) close(*fd);
      *fd = -1;
    }
    return Status::FromErrno("cannot start the server", e);
  }
  stopping_ = false;
  // Connections made from now on wait in the backlog until the thread takes them.
  workers_ = std::make_unique<WorkerPool>(options_.workers, worker_cpu_ns_);
  thread_ = std::thread([this] { Watch(); });
  return Status::Ok();
}

void HttpServer::Watch() {
  // The connections waiting for their next request (a new one for its first), each with
  // the time it is closed at if none comes, in the order they began to wait. Their heads
  // are gathered here; a connection goes to a worker once its head is whole.
  struct Waiting {
    std::shared_ptr<HttpConnection> c;
    int64_t deadline;
  };
  std::vector<Waiting> waiting;
  std::vector<pollfd> fds;
  auto wait_from_now = [&](std::shared_ptr<HttpConnection> c, int timeout_ms) {
    int64_t deadline = MonotonicNanos() + int64_t{timeout_ms} * 1'000'000;
    if (c->head_deadline != 0) deadline = std::min(deadline, c->head_deadline);
    waiting.push_back({std::move(c), deadline});
  };
  for (;;) {
    fds.assign({{listen_fd_, POLLIN, 0}, {stop_pipe_[0], POLLIN, 0}, {park_pipe_[0], POLLIN, 0}});
    int64_t now = MonotonicNanos();
    int64_t soonest = std::numeric_limits<int64_t>::max();
    for (const Waiting& w : waiting) {
      fds.push_back({w.c->fd(), POLLIN, 0});
      soonest = std::min(soonest, w.deadline);
    }
    int timeout =
        waiting.empty() ? -1 : static_cast<int>(std::max<int64_t>(0, soonest - now) / 1'000'000) + 1;
    if (poll(fds.data(), fds.size(), timeout) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[1].revents != 0) break;
    now = MonotonicNanos();
    // Bytes that arrived join the head; a whole head (or one too large, or a close) goes
    // to a worker; those past their time close.
    std::vector<Waiting> still;
    still.reserve(waiting.size());
    for (size_t i = 0; i < waiting.size(); ++i) {
      Waiting& w = waiting[i];
      if ((fds[3 + i].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL)) != 0) {
        HttpConnection& c = *w.c;
        bool open = c.FillNow(kMaxHeadBytes + 1);
        if (FindHead(c.in) || c.in.size() > kMaxHeadBytes) {
          if (RefusedOutright(c)) {  // another user on a port for its owner only: no worker
            HttpRequest none;
            Send(c, NotOwner(), none, false);
            shutdown(c.fd(), SHUT_WR);
            continue;
          }
          workers_->Enqueue([this, c = std::move(w.c)] { Serve(c); });
          continue;
        }
        if (!open) continue;  // closed before its head was whole
        // Once a head has begun, it has until its deadline, however slowly its bytes come.
        if (c.in.find_first_not_of("\r\n") != std::string::npos) {
          if (c.head_deadline == 0) c.head_deadline = now + HeadNanos();
          w.deadline = c.head_deadline;
        }
      }
      if (w.deadline > now) still.push_back(std::move(w));
    }
    waiting.swap(still);
    if (fds[2].revents != 0) {
      char drain[256];
      while (read(park_pipe_[0], drain, sizeof drain) > 0) {
      }
      std::lock_guard lock(park_mu_);
      for (std::shared_ptr<HttpConnection>& c : parked_)
        wait_from_now(std::move(c), options_.idle_timeout_ms);
      parked_.clear();
    }
    if (fds[0].revents != 0) {
      int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) {
        // Headers and body may go out separately: without this the body would wait for the
        // client's delayed ACK, 40 ms per request.
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        // Watched like the others until its request arrives (a browser opens connections
        // ahead of its requests); its head is due from now.
        auto c = std::make_shared<HttpConnection>(fd);
        c->head_deadline = now + HeadNanos();
        wait_from_now(std::move(c), kReadTimeoutMs);
      } else if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        // Out of descriptors or memory: close the longest waiting, and the new connection
        // waits in the backlog a moment.
        if (!waiting.empty()) waiting.erase(waiting.begin());
        poll(nullptr, 0, 10);
      }
    }
    // Too many waiting: those that never passed a request through close first, the ones
    // that have waited longest first; then the others, longest waiting first.
    size_t unproven = static_cast<size_t>(
        std::count_if(waiting.begin(), waiting.end(), [](const Waiting& w) { return !w.c->proven; }));
    for (auto it = waiting.begin(); unproven > options_.max_unproven_connections && it != waiting.end();) {
      if (!it->c->proven) {
        it = waiting.erase(it);
        --unproven;
      } else {
        ++it;
      }
    }
    if (waiting.size() > options_.max_idle_connections)
      waiting.erase(waiting.begin(),
                    waiting.end() - static_cast<std::ptrdiff_t>(options_.max_idle_connections));
  }
  // Stopping: those waiting close, and those handed back from now on.
  std::lock_guard lock(park_mu_);
  stopping_ = true;
  parked_.clear();
}

int64_t HttpServer::HeadNanos() const { return int64_t{options_.head_timeout_ms} * 1'000'000; }

void HttpServer::Park(std::shared_ptr<HttpConnection> c) {
  std::lock_guard lock(park_mu_);
  if (stopping_) return;  // closed
  parked_.push_back(std::move(c));
  (void)!write(park_pipe_[1], "p", 1);  // a full pipe has woken the thread already
}

bool HttpServer::Authorized(HttpConnection& c, const HttpRequest& req) {
  if (options_.token.empty()) return true;
  std::string auth = req.Header("authorization");
  if (StartsWith(auth, "Bearer ")) return SecretsEqual(auth.substr(7), options_.token);
  std::string session = SessionTable::FromCookies(req.Header("cookie"), SessionTable::CookieName(port_));
  if (session.empty()) return false;
  if (!c.peer) c.peer = PeerIdentity(c.fd());
  return sessions_.Valid(session, *c.peer);
}

// --- one connection's requests: framing, policy, body, dispatch ---

HttpServer::Framing HttpServer::ReadHead(HttpConnection& c, HttpRequest& req) {
  // The request line and headers, after any empty lines a client sent between requests.
  std::optional<HeadBounds> bounds;
  for (;;) {
    if ((bounds = FindHead(c.in))) break;
    size_t skip = c.in.find_first_not_of("\r\n");
    c.in.erase(0, skip == std::string::npos ? c.in.size() : skip);
    if (c.in.size() > kMaxHeadBytes) {
      HttpRequest none;
      Send(c, JsonError(431, "REQUEST_TOO_LARGE", "the request's line and headers exceed 64 KiB"), none,
           false);
      c.Linger();
      return Framing::kClose;
    }
    int64_t now = MonotonicNanos();
    if (!c.in.empty() && c.head_deadline == 0) c.head_deadline = now + HeadNanos();
    if (c.head_deadline != 0 && now > c.head_deadline) return Framing::kClose;  // too slow
    // A client that goes quiet, between requests or within one, waits in the accepting
    // thread's poll rather than holding this worker.
    if (!c.Readable(kNextRequestGraceMs)) return Framing::kPark;
    if (!c.Fill(0)) return Framing::kClose;
  }
  c.head_deadline = 0;
  std::string why;
  int refused =
      ParseHead(std::string_view(c.in).substr(bounds->begin, bounds->end - bounds->begin), req, why);
  c.in.erase(0, bounds->body);
  if (refused != 0) {
    Send(c, JsonError(refused, refused == 431 ? "REQUEST_TOO_LARGE" : "BAD_REQUEST", why), req, false);
    c.Linger();
    return Framing::kClose;
  }
  return Framing::kRequest;
}

bool HttpServer::RefusedOutright(HttpConnection& c) {
  return options_.without_token == HttpServerOptions::Peers::kOwner && options_.token.empty() &&
         !FromOwner(c);
}

ApiResponse HttpServer::NotOwner() {
  return JsonError(403, "PERMISSION_DENIED",
                   "this port answers only the processes of the user who started it (uid " +
                       std::to_string(geteuid()) + ") on this machine");
}

bool HttpServer::FromOwner(HttpConnection& c) {
  if (options_.without_token != HttpServerOptions::Peers::kOwner) return false;
  if (!c.from_owner) {
    std::optional<uid_t> owner = LoopbackPeerOwner(c.fd());
    c.from_owner = owner && *owner == geteuid();
  }
  return *c.from_owner;
}

HttpServer::Admission HttpServer::Admit(HttpConnection& c, const HttpRequest& req) {
  Admission out;
  // Another site's page, through this user's browser: by a DNS name pointed here, or a
  // request that changes something.
  std::string host = req.Header("host");
  if (!HostAllowed(host, options_.host_names)) {
    out.refusal = JsonError(403, "PERMISSION_DENIED",
                            "this server does not answer to the name '" + HostName(host) +
                                "': use its address or localhost, or start it with --allowed-host " +
                                HostName(host) + " (a web page whose name was pointed here is refused)");
    return out;
  }
  std::string cross = CrossOriginWrite(req.method, host, req.Header("origin"), req.Header("sec-fetch-site"));
  if (!cross.empty()) {
    out.refusal = JsonError(403, "PERMISSION_DENIED",
                            cross + "; changes are taken from this server's own pages and from clients");
    return out;
  }
  bool owner = FromOwner(c);
  if (RefusedOutright(c)) {
    out.refusal = NotOwner();
    return out;
  }
  if (!owner && !Authorized(c, req)) {
    // A person opening the page with ?token=: a session cookie (never the token itself),
    // and the same page without the token.
    auto token = req.params.find("token");
    if (req.method == "GET" && !StartsWith(req.path, "/api/") && token != req.params.end() &&
        SecretsEqual(token->second, options_.token)) {
      ApiResponse redirect{303, "", "", nullptr, {}};
      if (!c.peer) c.peer = PeerIdentity(c.fd());
      redirect.headers = {
          {"Location", WithoutToken(req)},
          {"Set-Cookie", SessionTable::CookieName(port_) + "=" + sessions_.Create(c.peer.value()) +
                             "; Path=/; HttpOnly; SameSite=Strict"}};
      c.proven = true;
      out.redirect = std::move(redirect);
      return out;
    }
    out.refusal =
        JsonError(401, "UNAUTHENTICATED",
                  "this server needs its access token: send 'Authorization: Bearer TOKEN' (MLflow "
                  "clients: set MLFLOW_TRACKING_TOKEN; trainbench's client: TRAINBENCH_TOKEN), or open "
                  "the web UI once as /?token=TOKEN");
    return out;
  }
  c.proven = true;
  out.limit = BodyLimit(options_, req.path);
  size_t largest = options_.max_body_bytes;
  for (const auto& [prefix, limit] : options_.large_bodies) largest = std::max(largest, limit);
  out.chunked = ToLower(req.Header("transfer-encoding")).find("chunked") != std::string::npos;
  if (req.HasHeader("transfer-encoding") && !out.chunked) {
    out.refusal = JsonError(501, "NOT_IMPLEMENTED", "send the body with a Content-Length header");
  } else if (!out.chunked && req.HasHeader("content-length")) {
    out.length = ParseUint(req.Header("content-length"));
    if (!out.length) {
      out.refusal = JsonError(400, "BAD_REQUEST", "Content-Length is not a number of bytes");
    } else if (*out.length > out.limit) {
      out.refusal = TooLarge(req, out.limit);
    }
  } else if (out.chunked && out.limit < largest) {
    out.refusal = JsonError(411, "LENGTH_REQUIRED", "send the body with a Content-Length header");
  }
  return out;
}

ApiResponse HttpServer::TooLarge(const HttpRequest& req, size_t limit) {
  return JsonError(413, "REQUEST_TOO_LARGE",
                   "the request body is larger than the " + std::to_string(limit) + " bytes accepted at " +
                       req.path + "; split it into several requests");
}

std::optional<ApiResponse> HttpServer::ReadBody(HttpConnection& c, HttpRequest& req, const Admission& a,
                                                bool& broken) {
  if (!req.http10 && ToLower(req.Header("expect")) == "100-continue" &&
      (a.chunked || a.length.value_or(0) > 0)) {
    if (!c.Write({"HTTP/1.1 100 Continue\r\n\r\n"})) {
      broken = true;
      return std::nullopt;
    }
  }
  // Bodies allowed beyond max_body_bytes (uploads) go to a file once large.
  BodySink sink(req, options_, a.limit > options_.max_body_bytes);
  if (a.chunked) {
    int status = ReadChunked(c, a.limit, sink);
    if (status == 413) return TooLarge(req, a.limit);
    if (status == 408)
      return JsonError(408, "REQUEST_TIMEOUT", "the request's body arrived slower than 64 KiB/s");
    if (status != 0) return JsonError(status, "BAD_REQUEST", "the request's chunked body is malformed");
  } else if (a.length &&
             !c.Take(static_cast<size_t>(*a.length), [&](std::string_view p) { return sink(p); })) {
    broken = true;
  }
  return std::nullopt;
}

ApiResponse HttpServer::Dispatch(HttpRequest& req) {
  ApiRequest request;
  request.method = req.method == "HEAD" ? "GET" : req.method;
  request.path = req.path;
  for (const auto& [k, v] : req.params) {
    if (k != "token") request.query.emplace(k, v);
  }
  for (const auto& [k, v] : req.headers) {
    if (StartsWith(k, "x-trainbench-")) request.headers.emplace_back(k, v);
  }
  request.body = std::move(req.body);
  request.body_file = req.body_file;
  for (const ApiHandler& h : handlers_) {
    if (std::optional<ApiResponse> answer = h(request)) return std::move(*answer);
  }
  if (request.method == "GET" && !options_.static_dir.empty() && !StartsWith(req.path, "/api/")) {
    if (std::optional<ApiResponse> file = StaticFileAnswer(options_.static_dir, req.path))
      return std::move(*file);
  }
  return JsonError(404, "ENDPOINT_NOT_FOUND", "nothing at " + req.method + " " + req.path);
}

void HttpServer::Serve(std::shared_ptr<HttpConnection> held) {
  HttpConnection& c = *held;
  for (;;) {
    HttpRequest req;
    Framing framing = ReadHead(c, req);
    if (framing == Framing::kPark) return Park(std::move(held));
    if (framing == Framing::kClose) return;
    std::string connection = ToLower(req.Header("connection"));
    bool keep_alive = req.http10 ? connection.find("keep-alive") != std::string::npos
                                 : connection.find("close") == std::string::npos;
    // The token and the body's size are checked before the body is read; a refused
    // request's body is not read, so its connection closes.
    Admission admission = Admit(c, req);
    if (admission.redirect) {
      if (!req.HasHeader("content-length") && !req.HasHeader("transfer-encoding") &&
          Send(c, *admission.redirect, req, keep_alive))
        continue;
      return;
    }
    if (admission.refusal) {
      Send(c, *admission.refusal, req, false);
      c.Linger();
      return;
    }
    // A spooled upload's file is gone once the request is answered.
    struct Unlink {
      std::string& file;
      ~Unlink() {
        if (!file.empty()) unlink(file.c_str());
      }
    } unlink_spool{req.body_file};
    bool broken = false;
    if (std::optional<ApiResponse> refused = ReadBody(c, req, admission, broken)) {
      Send(c, *refused, req, false);
      c.Linger();
      return;
    }
    if (broken) return;
    bool head_only = req.method == "HEAD";
    bool gzip = req.Header("accept-encoding").find("gzip") != std::string::npos;
    if (!Send(c, Dispatch(req), req, keep_alive, gzip, head_only)) return;
  }
}

void HttpServer::Stop() {
  if (!workers_) return;
  // Stops accepting; connections waiting for their next request close, requests in flight
  // are answered.
  (void)!write(stop_pipe_[1], "x", 1);
  if (thread_.joinable()) thread_.join();
  close(listen_fd_);
  listen_fd_ = -1;
  workers_->Shutdown();
  workers_.reset();
  for (int* fd : {&stop_pipe_[0], &stop_pipe_[1], &park_pipe_[0], &park_pipe_[1]}) {
    close(*fd);
    *fd = -1;
  }
}

std::string HttpServer::Url() const {
  std::string host = options_.host.find(':') != std::string::npos && options_.host[0] != '['
                         ? "[" + options_.host + "]"
                         : options_.host;
  return "http://" + host + ":" + std::to_string(port_);
}

}  // namespace tb
