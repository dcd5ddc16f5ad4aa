// The wire under HttpServer (http_server.h): one connection's bytes. Reading with
// deadlines (a body grows as its bytes arrive, never by what Content-Length announces;
// large uploads go to a spool file), writing whole answers (gzip for large text, chunked
// streams), and chunked request bodies. Private to platform/; each connection is used by
// one thread at a time.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "base/time.h"
#include "http/http_parse.h"
#include "http/http_server.h"

namespace tb {

// A request as read from the connection.
struct HttpRequest : HttpHead {
  std::string body;
  std::string body_file;  // the body spooled to this file instead (HttpServerOptions::spool_bytes)
};

// How long a connection may keep a worker waiting for the next bytes of a body, and for the
// client to take an answer's bytes.
constexpr int kReadTimeoutMs = 5000;
constexpr int kWriteTimeoutMs = 30000;
// A body arrives at this rate at least (bytes a second), after a grace of kReadTimeoutMs.
constexpr int64_t kMinBodyBytesPerSecond = 64 << 10;
// Bodies are read in pieces of this size, so memory grows with the bytes that arrived,
// never with what Content-Length announces.
constexpr size_t kReadPiece = 64 << 10;

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
  // Whether its peer is the server's own user (HttpServer::FromOwner); unset until asked.
  std::optional<bool> from_owner;
  // Who its peer is (socket_peer.h PeerIdentity), for the sessions; unset until asked.
  std::optional<std::string> peer;

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
    // The rate is kept on what arrived: by a time, the grace and one second for each
    // kMinBodyBytesPerSecond received. (Measured against what Content-Length announced, an
    // upload of 1 GiB trickling a byte every 2 s held its worker for hours.)
    int64_t start = MonotonicNanos();
    size_t got_total = 0;
    std::string piece;
    while (left > 0) {
      int64_t now = MonotonicNanos();
      int64_t deadline = start + int64_t{kReadTimeoutMs} * 1'000'000 +
                         static_cast<int64_t>(got_total) * 1'000'000'000 / kMinBodyBytesPerSecond;
      if (now >= deadline) return false;
      int wait = static_cast<int>(std::min<int64_t>(kReadTimeoutMs, (deadline - now) / 1'000'000 + 1));
      piece.resize(std::min(left, kReadPiece));
      ssize_t got = Readable(wait) ? Receive(piece.data(), piece.size(), 0) : 0;
      if (got <= 0) return false;
      if (!sink(std::string_view(piece.data(), static_cast<size_t>(got)))) return false;
      left -= static_cast<size_t>(got);
      got_total += static_cast<size_t>(got);
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

// Writes the answer; false when the connection must close after it (or broke).
// `head_only`: a HEAD request's answer, the headers a GET would get. `gzip`: the client
// accepts gzip, and large bodies are sent compressed.
bool Send(HttpConnection& c, ApiResponse response, const HttpRequest& req, bool keep_alive, bool gzip = false,
          bool head_only = false);

// A chunked request body into `sink`; 0, or the status to refuse it with.
int ReadChunked(HttpConnection& c, size_t limit, BodySink& sink);

}  // namespace tb
