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

#include "base/strings.h"
#include "base/time.h"

namespace tb {
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

// How long a connection may keep a worker waiting for the next bytes of a request (and a
// new connection the accepting thread for its first), and for the client to take an
// answer's bytes.
constexpr int kReadTimeoutMs = 5000;
constexpr int kWriteTimeoutMs = 30000;
// How long a worker that answered a request waits for the next before it hands the
// connection back to the accepting thread: a client asking in a loop (MLflow's
// `log_metric`, a page loading its charts) keeps its worker; one that goes quiet costs none.
constexpr int kNextRequestGraceMs = 2;
// A request's line and headers at most (a chart of 50 runs names them all in its URL).
constexpr size_t kMaxHeadBytes = 64 << 10;
constexpr size_t kMaxHeaders = 100;

// A request as read from the connection.
struct Request {
  std::string method;
  std::string path;  // percent-decoded
  std::multimap<std::string, std::string> params;
  std::vector<std::pair<std::string, std::string>> headers;  // names in lower case
  bool http10 = false;
  std::string body;

  // The first value of a header (`name` in lower case), "" when it is not there.
  std::string Header(std::string_view name) const {
    for (const auto& [k, v] : headers) {
      if (k == name) return v;
    }
    return "";
  }
  bool HasHeader(std::string_view name) const {
    return std::any_of(headers.begin(), headers.end(), [&](const auto& h) { return h.first == name; });
  }
};

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// %XX sequences decoded (others kept as they are); in a query, '+' is a space.
std::string PercentDecode(std::string_view s, bool plus_is_space) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && HexDigit(s[i + 1]) >= 0 && HexDigit(s[i + 2]) >= 0) {
      out += static_cast<char>(HexDigit(s[i + 1]) * 16 + HexDigit(s[i + 2]));
      i += 2;
    } else {
      out += plus_is_space && s[i] == '+' ? ' ' : s[i];
    }
  }
  return out;
}

// A query parameter's key or value as a URL carries it.
std::string PercentEncode(std::string_view s) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || std::strchr("-_.!~*'()", c) != nullptr) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

// Reads the request line and headers (`head`, without its closing empty line) into `req`;
// 0, or the status to refuse them with and `why`.
int ParseHead(std::string_view head, Request& req, std::string& why) {
  auto bad = [&](const std::string& what) {
    why = what;
    return 400;
  };
  std::vector<std::string_view> lines;
  for (std::string_view line : Split(head, '\n')) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
  }
  std::vector<std::string_view> parts = Split(lines[0], ' ');
  if (parts.size() != 3 || parts[0].empty() ||
      !std::all_of(parts[0].begin(), parts[0].end(), [](char c) { return c >= 'A' && c <= 'Z'; }))
    return bad("a request line is METHOD TARGET HTTP/1.1");
  req.method = std::string(parts[0]);
  if (parts[2] == "HTTP/1.0") {
    req.http10 = true;
  } else if (parts[2] != "HTTP/1.1") {
    why = "only HTTP/1.0 and HTTP/1.1 are spoken here";
    return 505;
  }
  std::string_view target = parts[1];
  // The absolute form a proxy would send: the path is what follows the host.
  for (std::string_view scheme : {"http://", "https://"}) {
    if (StartsWith(target, scheme)) {
      size_t slash = target.find('/', scheme.size());
      target = slash == std::string_view::npos ? "/" : target.substr(slash);
    }
  }
  if (target.empty() || target[0] != '/') return bad("the request's target is not a path");
  size_t question = target.find('?');
  req.path = PercentDecode(target.substr(0, question), false);
  if (question != std::string_view::npos) {
    for (std::string_view pair : Split(target.substr(question + 1), '&')) {
      if (pair.empty()) continue;
      size_t eq = pair.find('=');
      std::string key = PercentDecode(pair.substr(0, eq), true);
      std::string value = eq == std::string_view::npos ? "" : PercentDecode(pair.substr(eq + 1), true);
      req.params.emplace(std::move(key), std::move(value));
    }
  }
  for (size_t i = 1; i < lines.size(); ++i) {
    std::string_view line = lines[i];
    size_t colon = line.find(':');
    if (colon == 0 || colon == std::string_view::npos || line[0] == ' ' || line[0] == '\t' ||
        line.substr(0, colon).find_first_of(" \t") != std::string_view::npos)
      return bad("a header line is NAME: VALUE");
    if (req.headers.size() == kMaxHeaders) {
      why = "more than " + std::to_string(kMaxHeaders) + " headers";
      return 431;
    }
    req.headers.emplace_back(ToLower(line.substr(0, colon)), std::string(Trim(line.substr(colon + 1))));
  }
  return 0;
}

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
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
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
      return "Request Header Fields Too Large";
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

  // Reads what has arrived into `in`; false when the client closed or went quiet for the
  // read timeout.
  bool Fill() {
    if (!Readable(kReadTimeoutMs)) return false;
    char buf[16384];
    ssize_t n = Receive(buf, sizeof buf);
    if (n <= 0) return false;
    in.append(buf, static_cast<size_t>(n));
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

  // Takes `n` bytes from `in` into `out` (appended), reading the rest straight into `out`
  // (an artifact's upload is not copied through `in`).
  bool Take(size_t n, std::string& out) {
    size_t buffered = std::min(n, in.size());
    out.append(in, 0, buffered);
    in.erase(0, buffered);
    size_t have = out.size(), want = have + n - buffered;
    out.resize(want);
    while (have < want) {
      ssize_t got = Readable(kReadTimeoutMs) ? Receive(out.data() + have, want - have) : 0;
      if (got <= 0) {
        out.resize(have);
        return false;
      }
      have += static_cast<size_t>(got);
    }
    return true;
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
  ssize_t Receive(char* into, size_t size) {
    ssize_t n;
    do {
      n = recv(fd_, into, size, 0);
    } while (n < 0 && errno == EINTR);
    return n;
  }

  int fd_;
};

namespace {

constexpr const char* kTokenCookie = "trainbench_token";

// The token the request carries in its Authorization header or trainbench's cookie.
std::string CarriedToken(const Request& req) {
  std::string auth = req.Header("authorization");
  if (StartsWith(auth, "Bearer ")) return auth.substr(7);
  std::string cookies = req.Header("cookie");
  for (std::string_view c : Split(cookies, ';')) {
    c = Trim(c);
    if (StartsWith(c, std::string(kTokenCookie) + "="))
      return std::string(c.substr(std::strlen(kTokenCookie) + 1));
  }
  return "";
}

// The path and query of a request without its `token` parameter, to redirect to.
std::string WithoutToken(const Request& req) {
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
bool Send(HttpConnection& c, ApiResponse response, const Request& req, bool keep_alive, bool gzip = false,
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

// A chunked request body into `body`; 0, or the status to refuse it with.
int ReadChunked(HttpConnection& c, size_t limit, std::string& body) {
  for (;;) {
    std::optional<std::string> line = c.Line(1024);
    if (!line) return 400;
    std::string_view size_text = Trim(std::string_view(*line).substr(0, line->find(';')));
    uint64_t size = 0;
    if (size_text.empty() || size_text.size() > 15) return 400;
    for (char ch : size_text) {
      if (HexDigit(ch) < 0) return 400;
      size = size * 16 + static_cast<uint64_t>(HexDigit(ch));
    }
    if (size == 0) break;
    if (body.size() + size > limit) return 413;
    std::string crlf;
    if (!c.Take(size, body) || !c.Take(2, crlf) || crlf != "\r\n") return 400;
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
  // the time it is closed at if none comes, in the order they began to wait.
  struct Waiting {
    std::shared_ptr<HttpConnection> c;
    int64_t deadline;
  };
  std::vector<Waiting> waiting;
  std::vector<pollfd> fds;
  auto wait_from_now = [&](std::shared_ptr<HttpConnection> c, int timeout_ms) {
    waiting.push_back({std::move(c), MonotonicNanos() + int64_t{timeout_ms} * 1'000'000});
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
    // Those with a request (or a close) to read go to a worker; those past their time close.
    std::vector<Waiting> still;
    still.reserve(waiting.size());
    for (size_t i = 0; i < waiting.size(); ++i) {
      if ((fds[3 + i].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL)) != 0) {
        workers_->Enqueue([this, c = std::move(waiting[i].c)] { Serve(c); });
      } else if (waiting[i].deadline > now) {
        still.push_back(std::move(waiting[i]));
      }
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
        // ahead of its requests).
        wait_from_now(std::make_shared<HttpConnection>(fd), kReadTimeoutMs);
      } else if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        // Out of descriptors or memory: close the longest waiting, and the new connection
        // waits in the backlog a moment.
        if (!waiting.empty()) waiting.erase(waiting.begin());
        poll(nullptr, 0, 10);
      }
    }
    // Too many waiting: the ones that have waited longest close first.
    if (waiting.size() > options_.max_idle_connections)
      waiting.erase(waiting.begin(),
                    waiting.end() - static_cast<std::ptrdiff_t>(options_.max_idle_connections));
  }
  // Stopping: those waiting close, and those handed back from now on.
  std::lock_guard lock(park_mu_);
  stopping_ = true;
  parked_.clear();
}

void HttpServer::Park(std::shared_ptr<HttpConnection> c) {
  std::lock_guard lock(park_mu_);
  if (stopping_) return;  // closed
  parked_.push_back(std::move(c));
  (void)!write(park_pipe_[1], "p", 1);  // a full pipe has woken the thread already
}

void HttpServer::Serve(std::shared_ptr<HttpConnection> held) {
  HttpConnection& c = *held;
  size_t largest = options_.max_body_bytes;
  for (const auto& [prefix, limit] : options_.large_bodies) largest = std::max(largest, limit);
  for (;;) {
    // The request line and headers, after any empty lines a client sent between requests.
    size_t end = std::string::npos;  // where the last header line ends
    size_t after = 0;                // and where the body begins
    for (;;) {
      size_t skip = c.in.find_first_not_of("\r\n");
      c.in.erase(0, skip == std::string::npos ? c.in.size() : skip);
      size_t crlf = c.in.find("\r\n\r\n"), lf = c.in.find("\n\n");
      if (crlf < lf) {
        end = crlf;
        after = crlf + 4;
      } else if (lf != std::string::npos) {
        end = lf;
        after = lf + 2;
      }
      if (end != std::string::npos) break;
      if (c.in.size() > kMaxHeadBytes) {
        Request none;
        Send(c, JsonError(431, "REQUEST_TOO_LARGE", "the request's line and headers exceed 64 KiB"), none,
             false);
        c.Linger();
        return;
      }
      // Between requests, a client that goes quiet waits in the accepting thread's poll.
      if (c.in.empty() && !c.Readable(kNextRequestGraceMs)) return Park(std::move(held));
      if (!c.Fill()) return;
    }
    Request req;
    std::string why = "the request's line and headers exceed 64 KiB";
    int refused = end > kMaxHeadBytes ? 431 : ParseHead(std::string_view(c.in).substr(0, end), req, why);
    c.in.erase(0, after);
    if (refused != 0) {
      Send(c, JsonError(refused, refused == 431 ? "REQUEST_TOO_LARGE" : "BAD_REQUEST", why), req, false);
      c.Linger();
      return;
    }
    std::string connection = ToLower(req.Header("connection"));
    bool keep_alive = req.http10 ? connection.find("keep-alive") != std::string::npos
                                 : connection.find("close") == std::string::npos;
    // The token and the body's size are checked before the body is read; a refused
    // request's body is not read, so its connection closes.
    auto refuse = [&](const ApiResponse& answer) {
      Send(c, answer, req, false);
      c.Linger();
    };
    if (!options_.token.empty() && !SecretsEqual(CarriedToken(req), options_.token)) {
      // A person opening the page with ?token=: a cookie, and the same page without it.
      auto token = req.params.find("token");
      if (req.method == "GET" && !StartsWith(req.path, "/api/") && token != req.params.end() &&
          SecretsEqual(token->second, options_.token)) {
        ApiResponse redirect{303, "", "", nullptr, {}};
        redirect.headers = {{"Location", WithoutToken(req)},
                            {"Set-Cookie", std::string(kTokenCookie) + "=" + options_.token +
                                               "; Path=/; HttpOnly; SameSite=Strict"}};
        if (!req.HasHeader("content-length") && !req.HasHeader("transfer-encoding") &&
            Send(c, redirect, req, keep_alive))
          continue;
        return;
      }
      return refuse(
          JsonError(401, "UNAUTHENTICATED",
                    "this server needs its access token: send 'Authorization: Bearer TOKEN' (MLflow "
                    "clients: set MLFLOW_TRACKING_TOKEN), or open the web UI once as /?token=TOKEN"));
    }
    size_t limit = BodyLimit(options_, req.path);
    auto too_large = [&] {
      return JsonError(413, "REQUEST_TOO_LARGE",
                       "the request body is larger than the " + std::to_string(limit) +
                           " bytes accepted at " + req.path + "; split it into several requests");
    };
    bool chunked = ToLower(req.Header("transfer-encoding")).find("chunked") != std::string::npos;
    std::optional<uint64_t> length;
    if (req.HasHeader("transfer-encoding") && !chunked)
      return refuse(JsonError(501, "NOT_IMPLEMENTED", "send the body with a Content-Length header"));
    if (!chunked && req.HasHeader("content-length")) {
      length = ParseUint(req.Header("content-length"));
      if (!length) return refuse(JsonError(400, "BAD_REQUEST", "Content-Length is not a number of bytes"));
      if (*length > limit) return refuse(too_large());
    } else if (chunked && limit < largest) {
      return refuse(JsonError(411, "LENGTH_REQUIRED", "send the body with a Content-Length header"));
    }
    if (!req.http10 && ToLower(req.Header("expect")) == "100-continue" &&
        (chunked || length.value_or(0) > 0)) {
      if (!c.Write({"HTTP/1.1 100 Continue\r\n\r\n"})) return;
    }
    if (chunked) {
      int status = ReadChunked(c, limit, req.body);
      if (status == 413) return refuse(too_large());
      if (status != 0)
        return refuse(JsonError(status, "BAD_REQUEST", "the request's chunked body is malformed"));
    } else if (length && !c.Take(static_cast<size_t>(*length), req.body)) {
      return;
    }

    bool head_only = req.method == "HEAD";
    bool gzip = req.Header("accept-encoding").find("gzip") != std::string::npos;
    ApiRequest request;
    request.method = head_only ? "GET" : req.method;
    request.path = req.path;
    for (const auto& [k, v] : req.params) {
      if (k != "token") request.query.emplace(k, v);
    }
    request.body = std::move(req.body);
    std::optional<ApiResponse> answer;
    for (const ApiHandler& h : handlers_) {
      if ((answer = h(request))) break;
    }
    if (!answer && request.method == "GET" && !options_.static_dir.empty() &&
        !StartsWith(req.path, "/api/")) {
      if (std::optional<std::string> file = StaticFile(options_.static_dir, req.path); !file) {
        answer = JsonError(400, "INVALID_PATH", "the path leaves the web directory");
      } else if (std::ifstream in(*file, std::ios::binary); in) {
        std::ostringstream content;
        content << in.rdbuf();
        answer = ApiResponse{200, ContentType(*file), content.str(), nullptr, {}};
      }
    }
    if (!answer) answer = JsonError(404, "ENDPOINT_NOT_FOUND", "nothing at " + req.method + " " + req.path);
    if (!Send(c, std::move(*answer), req, keep_alive, gzip, head_only)) return;
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
