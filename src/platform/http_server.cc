#include "platform/http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <libdeflate.h>
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
#include "platform/http_parse.h"

namespace tb {

// A request as read from the connection.
struct HttpRequest : HttpHead {
  std::string body;
  std::string body_file;  // the body spooled to this file instead (HttpServerOptions::spool_bytes)
};

namespace {

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

// How long a connection may keep a worker waiting for the next bytes of a body, and for the
// client to take an answer's bytes.
constexpr int kReadTimeoutMs = 5000;
constexpr int kWriteTimeoutMs = 30000;
// A body arrives at this rate at least (bytes a second), after a grace of kReadTimeoutMs.
constexpr int64_t kMinBodyBytesPerSecond = 64 << 10;
// How long a worker that answered a request waits for the next before it hands the
// connection back to the accepting thread: a client asking in a loop (MLflow's
// `log_metric`, a page loading its charts) keeps its worker; one that goes quiet costs none.
constexpr int kNextRequestGraceMs = 2;
// Bodies are read in pieces of this size, so memory grows with the bytes that arrived,
// never with what Content-Length announces.
constexpr size_t kReadPiece = 64 << 10;

const char* Reason(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 204:
      return "No Content";
    case 206:
      return "Partial Content";
    case 301:
      return "Moved Permanently";
    case 302:
      return "Found";
    case 303:
      return "See Other";
    case 304:
      return "Not Modified";
    case 400:
      return "Bad HttpRequest";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "HttpRequest Timeout";
    case 409:
      return "Conflict";
    case 411:
      return "Length Required";
    case 413:
      return "Payload Too Large";
    case 415:
      return "Unsupported Media Type";
    case 417:
      return "Expectation Failed";
    case 429:
      return "Too Many Requests";
    case 431:
      return "HttpRequest Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return status < 300 ? "OK" : status < 400 ? "Redirect" : status < 500 ? "Client Error" : "Server Error";
  }
}

}  // namespace

// One connection's socket: reads into a buffer and writes whole answers, each wait bounded.
class HttpConnection {
 public:
  explicit HttpConnection(int fd) : fd_(fd) {}
  ~HttpConnection() { close(fd_); }
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  int fd() const { return fd_; }

  // Bytes read and not yet taken.
  std::string in;
  // When the request whose head is being gathered must have sent all of it (monotonic
  // ns); 0 between requests.
  int64_t head_deadline = 0;
  // Whether a request on it passed the token check (any request, on a server without one):
  // connections that never did are the ones closed first when too many wait.
  bool proven = false;

  // Reads what has arrived into `in`; false when the client closed or went quiet for
  // `timeout_ms`.
  bool Fill(int timeout_ms = kReadTimeoutMs) {
    if (!Readable(timeout_ms)) return false;
    char buf[16384];
    ssize_t n = Receive(buf, sizeof buf, 0);
    if (n <= 0) return false;
    in.append(buf, static_cast<size_t>(n));
    return true;
  }

  // Reads, without waiting, what has arrived into `in` (at most `max` bytes in all); false
  // when the client closed or the connection broke.
  bool FillNow(size_t max) {
    char buf[16384];
    while (in.size() < max) {
      ssize_t n = Receive(buf, std::min(sizeof buf, max - in.size()), MSG_DONTWAIT);
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
      if (n <= 0) return false;
      in.append(buf, static_cast<size_t>(n));
    }
    return true;
  }

  // Whether bytes (or the client's close) wait to be read, within `timeout_ms`.
  bool Readable(int timeout_ms) {
    pollfd p{fd_, POLLIN, 0};
    for (;;) {
      int r = poll(&p, 1, timeout_ms);
      if (r < 0 && errno == EINTR) continue;
      return r > 0 && (p.revents & (POLLIN | POLLHUP | POLLERR)) != 0;
    }
  }

  // Hands `n` bytes to `sink` as they arrive, the buffered ones first, in pieces of
  // kReadPiece at most; false when the client stops sending (for kReadTimeoutMs, or below
  // kMinBodyBytesPerSecond overall) or `sink` refuses a piece.
  bool Take(size_t n, const std::function<bool(std::string_view)>& sink) {
    size_t buffered = std::min(n, in.size());
    if (buffered > 0 && !sink(std::string_view(in).substr(0, buffered))) return false;
    in.erase(0, buffered);
    size_t left = n - buffered;
    int64_t deadline = MonotonicNanos() + int64_t{kReadTimeoutMs} * 1'000'000 +
                       static_cast<int64_t>(left) / kMinBodyBytesPerSecond * 1'000'000'000;
    std::string piece;
    while (left > 0) {
      int64_t now = MonotonicNanos();
      if (now >= deadline) return false;
      int wait = static_cast<int>(std::min<int64_t>(kReadTimeoutMs, (deadline - now) / 1'000'000 + 1));
      piece.resize(std::min(left, kReadPiece));
      ssize_t got = Readable(wait) ? Receive(piece.data(), piece.size(), 0) : 0;
      if (got <= 0) return false;
      if (!sink(std::string_view(piece.data(), static_cast<size_t>(got)))) return false;
      left -= static_cast<size_t>(got);
    }
    return true;
  }

  // Takes `n` bytes into `out` (appended), growing it as they arrive.
  bool Take(size_t n, std::string& out) {
    return Take(n, [&](std::string_view piece) {
      out.append(piece);
      return true;
    });
  }

  // A line ending in LF (CRLF), without its end; nullopt when it does not come or is longer
  // than `max`.
  std::optional<std::string> Line(size_t max) {
    size_t end;
    while ((end = in.find('\n')) == std::string::npos) {
      if (in.size() > max || !Fill()) return std::nullopt;
    }
    std::string line = in.substr(0, end > 0 && in[end - 1] == '\r' ? end - 1 : end);
    in.erase(0, end + 1);
    return line;
  }

  // Before closing on a request whose body was not read: the client may still be sending
  // it, and closing a socket with unread bytes resets the connection, which can destroy
  // the answer before the client reads it. So stop writing, and read and drop what comes
  // until the client closes (a second at most).
  void Linger() {
    shutdown(fd_, SHUT_WR);
    char buf[16384];
    int64_t deadline = MonotonicNanos() + 1'000'000'000;
    for (int64_t now = MonotonicNanos(); now < deadline; now = MonotonicNanos()) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>((deadline - now) / 1'000'000) + 1) <= 0) {
        if (errno == EINTR) continue;
        return;
      }
      ssize_t n = recv(fd_, buf, sizeof buf, 0);
      if (n == 0 || (n < 0 && errno != EINTR)) return;
    }
  }

  // Writes every byte of the pieces, or false.
  bool Write(std::initializer_list<std::string_view> pieces) {
    iovec iov[4];
    int count = 0;
    for (std::string_view p : pieces) {
      if (!p.empty()) iov[count++] = {const_cast<char*>(p.data()), p.size()};
    }
    iovec* next = iov;
    while (count > 0) {
      msghdr msg{};
      msg.msg_iov = next;
      msg.msg_iovlen = static_cast<size_t>(count);
      ssize_t n = sendmsg(fd_, &msg, MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) return false;
        pollfd p{fd_, POLLOUT, 0};
        if (poll(&p, 1, kWriteTimeoutMs) <= 0) return false;
        continue;
      }
      auto sent = static_cast<size_t>(n);
      while (count > 0 && sent >= next->iov_len) {
        sent -= next->iov_len;
        ++next;
        --count;
      }
      if (count > 0) {
        next->iov_base = static_cast<char*>(next->iov_base) + sent;
        next->iov_len -= sent;
      }
    }
    return true;
  }

 private:
  ssize_t Receive(char* into, size_t size, int flags) {
    ssize_t n;
    do {
      n = recv(fd_, into, size, flags);
    } while (n < 0 && errno == EINTR);
    return n;
  }

  int fd_;
};

namespace {

constexpr const char* kSessionCookie = "trainbench_session";

// The bearer token the request carries, "" for none.
std::string BearerToken(const HttpRequest& req) {
  std::string auth = req.Header("authorization");
  return StartsWith(auth, "Bearer ") ? auth.substr(7) : "";
}

// The session the request's cookie names, "" for none.
std::string SessionCookie(const HttpRequest& req) {
  std::string cookies = req.Header("cookie");
  for (std::string_view c : Split(cookies, ';')) {
    c = Trim(c);
    if (StartsWith(c, std::string(kSessionCookie) + "="))
      return std::string(c.substr(std::strlen(kSessionCookie) + 1));
  }
  return "";
}

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

// Writes the answer; false when the connection must close after it (or broke).
// `head_only`: a HEAD request's answer, the headers a GET would get. `gzip`: the client
// accepts gzip, and large bodies are sent compressed.
bool Send(HttpConnection& c, ApiResponse response, const HttpRequest& req, bool keep_alive, bool gzip = false,
          bool head_only = false) {
  std::string head = "HTTP/1.1 " + std::to_string(response.status) + " " + Reason(response.status) + "\r\n";
  for (const auto& [k, v] : response.headers) {
    std::string name = ToLower(k);
    if (name == "connection" && ToLower(v) == "close") keep_alive = false;
    if (name == "connection" || name == "content-type" || name == "content-length" ||
        name == "transfer-encoding")
      continue;
    head += Concat({k, ": ", v, "\r\n"});
  }
  bool stream = static_cast<bool>(response.stream) && !head_only;
  if (!stream && gzip && response.body.size() >= 16384 && Compressible(response.content_type)) {
    if (std::optional<std::string> packed = Gzip(response.body)) {
      head += "Content-Encoding: gzip\r\nVary: Accept-Encoding\r\n";
      response.body = std::move(*packed);
    }
  }
  if (!response.content_type.empty() && (!response.body.empty() || response.stream))
    head += "Content-Type: " + response.content_type + "\r\n";
  // HTTP/1.0 has no chunks: a streamed body ends where the connection does.
  if (stream && req.http10) keep_alive = false;
  if (!response.stream) {
    head += "Content-Length: " + std::to_string(response.body.size()) + "\r\n";
  } else if (!req.http10) {
    head += "Transfer-Encoding: chunked\r\n";  // a HEAD's answer says so too, without the chunks
  }
  head += keep_alive ? (req.http10 ? "Connection: keep-alive\r\n" : "") : "Connection: close\r\n";
  head += "\r\n";
  if (!stream) return c.Write({head, head_only ? std::string_view() : response.body}) && keep_alive;

  if (!c.Write({head})) return false;
  std::string piece = std::move(response.body);
  for (;;) {
    bool more = false;
    try {
      more = response.stream(piece);
    } catch (...) {
      return false;  // ends the transfer without its last chunk: the client sees it failed
    }
    if (!piece.empty()) {
      bool sent = req.http10 ? c.Write({piece}) : [&] {
        char size[24];
        int n = std::snprintf(size, sizeof size, "%zx\r\n", piece.size());
        return c.Write({std::string_view(size, static_cast<size_t>(n)), piece, "\r\n"});
      }();
      if (!sent) return false;
      piece.clear();
    }
    if (!more) break;
  }
  return (req.http10 || c.Write({"0\r\n\r\n"})) && keep_alive;
}

// Where a request's body goes as it arrives: memory, or, past `spool_bytes` under a path
// that allows it, a file of its own in `spool_dir` (readable by this user only) that the
// handler may move into place; the server removes what is left of it after the answer.
class BodySink {
 public:
  BodySink(HttpRequest& req, const HttpServerOptions& o, bool may_spool)
      : req_(req), options_(o), may_spool_(may_spool) {}
  ~BodySink() {
    if (fd_ >= 0) close(fd_);
  }
  BodySink(const BodySink&) = delete;
  BodySink& operator=(const BodySink&) = delete;

  bool operator()(std::string_view piece) {
    size_ += piece.size();
    if (fd_ < 0 && may_spool_ && size_ > options_.spool_bytes) {
      std::string dir = options_.spool_dir.empty() ? TempDirectory() : options_.spool_dir;
      std::string name = dir + "/.trainbench-upload-XXXXXX";
      fd_ = mkostemp(name.data(), O_CLOEXEC);  // mode 0600
      if (fd_ < 0) return false;
      req_.body_file = name;
      if (!WriteAll(req_.body)) return false;
      req_.body.clear();
      req_.body.shrink_to_fit();
    }
    if (fd_ >= 0) return WriteAll(piece);
    req_.body.append(piece);
    return true;
  }
  size_t size() const { return size_; }

 private:
  bool WriteAll(std::string_view bytes) {
    while (!bytes.empty()) {
      ssize_t n = write(fd_, bytes.data(), bytes.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }
  static std::string TempDirectory() {
    const char* t = std::getenv("TMPDIR");
    return t != nullptr && *t != 0 ? t : "/tmp";
  }

  HttpRequest& req_;
  const HttpServerOptions& options_;
  bool may_spool_;
  int fd_ = -1;
  size_t size_ = 0;
};

// A chunked request body into `sink`; 0, or the status to refuse it with.
int ReadChunked(HttpConnection& c, size_t limit, BodySink& sink) {
  for (;;) {
    std::optional<std::string> line = c.Line(1024);
    if (!line) return 400;
    std::optional<uint64_t> size = ParseChunkSize(*line);
    if (!size) return 400;
    if (*size == 0) break;
    if (sink.size() + *size > limit) return 413;
    std::string crlf;
    if (!c.Take(*size, [&](std::string_view piece) { return sink(piece); }) || !c.Take(2, crlf) ||
        crlf != "\r\n")
      return 400;
  }
  for (;;) {  // trailers, up to the empty line
    std::optional<std::string> line = c.Line(8192);
    if (!line) return 400;
    if (line->empty()) return 0;
  }
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

bool HttpServer::Authorized(const std::string& bearer, const std::string& session) {
  if (options_.token.empty()) return true;
  if (!bearer.empty()) return SecretsEqual(bearer, options_.token);
  if (session.empty()) return false;
  std::lock_guard lock(sessions_mu_);
  return std::any_of(sessions_.begin(), sessions_.end(),
                     [&](const std::string& s) { return SecretsEqual(s, session); });
}

std::string HttpServer::NewSession() {
  std::string session = RandomHex(32);
  std::lock_guard lock(sessions_mu_);
  sessions_.push_back(session);
  if (sessions_.size() > kMaxSessions) sessions_.erase(sessions_.begin());
  return session;
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

HttpServer::Admission HttpServer::Admit(HttpConnection& c, const HttpRequest& req) {
  Admission out;
  if (!Authorized(BearerToken(req), SessionCookie(req))) {
    // A person opening the page with ?token=: a session cookie (never the token itself),
    // and the same page without the token.
    auto token = req.params.find("token");
    if (req.method == "GET" && !StartsWith(req.path, "/api/") && token != req.params.end() &&
        SecretsEqual(token->second, options_.token)) {
      ApiResponse redirect{303, "", "", nullptr, {}};
      redirect.headers = {{"Location", WithoutToken(req)},
                          {"Set-Cookie", std::string(kSessionCookie) + "=" + NewSession() +
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
    std::optional<std::string> file = StaticFile(options_.static_dir, req.path);
    if (!file) return JsonError(400, "INVALID_PATH", "the path leaves the web directory");
    if (std::ifstream in(*file, std::ios::binary); in) {
      std::ostringstream content;
      content << in.rdbuf();
      return ApiResponse{200, ContentType(*file), content.str(), nullptr, {}};
    }
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
