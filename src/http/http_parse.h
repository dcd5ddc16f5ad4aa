// The parts of HTTP/1.1 a server reads from its clients, as pure functions over bytes so
// that they are unit-tested and fuzzed apart from sockets (fuzz/http_head_fuzz.cc): the
// request line and headers, percent-encoding, and the size line of a chunked body. Input
// is whatever a hostile client sends: every function answers with an error for bytes it
// does not accept, never a crash, and allocates no more than the input's size.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tb {

// A request's line and headers.
struct HttpHead {
  std::string method;
  std::string path;  // percent-decoded
  std::multimap<std::string, std::string> params;
  std::vector<std::pair<std::string, std::string>> headers;  // names in lower case
  bool http10 = false;

  // The first value of a header (`name` in lower case), "" when it is not there.
  std::string Header(std::string_view name) const;
  bool HasHeader(std::string_view name) const;
};

// A request line and headers at most: 64 KiB (a chart of 50 runs names them all in its
// URL), 100 headers.
inline constexpr size_t kMaxHeadBytes = 64 << 10;
inline constexpr size_t kMaxHeaders = 100;

// Where a request's head ends in `in` (after any empty lines before it, which are skipped):
// {end of the last header line, start of the body}; nullopt while it is not whole.
struct HeadBounds {
  size_t begin = 0, end = 0, body = 0;
};
std::optional<HeadBounds> FindHead(std::string_view in);

// Reads the request line and headers (`head`, without its closing empty line) into
// `out`; 0, or the status to refuse them with (400, 431, 505) and `why`.
int ParseHead(std::string_view head, HttpHead& out, std::string& why);

// %XX sequences decoded (others kept as they are); in a query, '+' is a space.
std::string PercentDecode(std::string_view s, bool plus_is_space);
// A query parameter's key or value as a URL carries it.
std::string PercentEncode(std::string_view s);

// The size a chunked body's size line gives (hex digits, then any ";extension"); nullopt
// when it is not one or is 2^60 or more.
std::optional<uint64_t> ParseChunkSize(std::string_view line);

}  // namespace tb
