#include "http/http_wire.h"

#include <libdeflate.h>

#include <cstdio>
#include <memory>

#include "base/strings.h"

namespace tb {
namespace {

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

}  // namespace

bool Send(HttpConnection& c, ApiResponse response, const HttpRequest& req, bool keep_alive, bool gzip,
          bool head_only) {
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

int ReadChunked(HttpConnection& c, size_t limit, BodySink& sink) {
  // The whole body keeps the minimum rate, not only each chunk: a client sending a one-byte
  // chunk every few seconds would otherwise hold its worker for ever.
  int64_t start = MonotonicNanos();
  for (;;) {
    if (MonotonicNanos() - start > int64_t{kReadTimeoutMs} * 1'000'000 + static_cast<int64_t>(sink.size()) *
                                                                             1'000'000'000 /
                                                                             kMinBodyBytesPerSecond)
      return 408;
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
}  // namespace tb
